"""A spec's validation in a low-priority child process, for ``serve``: started after the catalogue is built.

Light on purpose: the parent imports only the loader and the worker, so a start served from the
catalogue cache pays no generator import for it.
"""

from __future__ import annotations

import os

from generator.issues import Issue
from generator.load.overlays.document import load_overlays
from generator.load.spec import load_spec
from generator.workers import Worker

__all__ = ["VALIDATION_NICENESS", "Validation"]

VALIDATION_NICENESS = 10  # the validating child yields the CPU to the server's calls


def _validation_issues(source: str, overlays: tuple[str, ...], allow_remote_refs: bool) -> tuple[Issue, ...]:
    """Runs in the child: the spec's load issues with validation (its problems among them)."""
    try:
        os.nice(VALIDATION_NICENESS)
    except OSError:  # pragma: no cover - not permitted: run at the same priority
        pass
    return load_spec(
        source,
        allow_remote_refs=allow_remote_refs,
        fatal_validation=False,
        fatal_refs=False,
        overlays=load_overlays(overlays),
    ).issues


class Validation:
    """The validation of ``source`` (with ``overlays`` applied) running in a child process."""

    def __init__(self, source: str, overlays: tuple[str, ...] = (), *, allow_remote_refs: bool = False) -> None:
        self._worker: Worker[tuple[Issue, ...]] = Worker(_validation_issues, source, overlays, allow_remote_refs)

    def issues(self) -> tuple[Issue, ...]:
        """Blocks until the child ends: every load issue, validation problems among them.

        Raises:
            WorkerError, SpecError: the child died, or the spec could not be loaded again.
        """
        return self._worker.result()

    def stop(self) -> None:
        self._worker.stop()
