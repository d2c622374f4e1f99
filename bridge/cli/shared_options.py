"""Options ``generate`` and ``serve`` both take, defined once (each keeps its flag and destination)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

MODES = ("tools", "discovery", "code")

# Both commands apply these to a spec before anything reads it (serve: a spec TARGET only).
overlay_option = click.option(
    "--overlay",
    "overlays",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="OpenAPI Overlay (1.0/1.1) applied to the spec before anything reads it (repeatable, applied in order, "
    "after a config's `overlays:`; serve: a spec TARGET only).",
)
workflows_option = click.option(
    "--workflows",
    "workflows",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Arazzo 1.0 document whose workflows become tools, one per workflow (repeatable; also `workflows:` "
    "in a config; serve: a spec TARGET only).",
)


def mode_option(*, default: str | None, help: str) -> Callable[[Any], Any]:
    """``--mode``: the same choices for both; generate sets the package's default, serve overrides it."""
    shown = default is not None
    return click.option("--mode", type=click.Choice(MODES), default=default, show_default=shown, help=help)
