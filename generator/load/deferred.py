"""A spec's validation problems on their own, for ``serve``'s background child (started after the catalogue is built).

Light on purpose: the loader only, so a start served from the catalogue cache pays no generator
import for it.
"""

from __future__ import annotations

from generator.issues import Issue
from generator.load.overlays.document import load_overlays
from generator.load.spec import load_spec

__all__ = ["validation_issues"]


def validation_issues(
    source: str, overlays: tuple[str, ...] = (), allow_remote_refs: bool = False
) -> tuple[Issue, ...]:
    """Every load issue of ``source`` (``overlays`` applied) with validation: its problems among them."""
    return load_spec(
        source,
        allow_remote_refs=allow_remote_refs,
        fatal_validation=False,
        fatal_refs=False,
        overlays=load_overlays(overlays),
    ).issues
