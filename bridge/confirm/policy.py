"""Which calls ``serve --confirm`` covers, and what a client without elicitation gets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bridge.contract.catalogue import ToolEntry
from bridge.tools.errors import ToolError

__all__ = [
    "INSTRUCTIONS",
    "ConfirmLevel",
    "ConfirmSettings",
    "ConfirmationDeclined",
    "ConfirmationUnavailable",
    "Fallback",
    "covers",
]

ConfirmLevel = Literal["none", "destructive", "writes"]
Fallback = Literal["refuse", "proceed"]
DEFAULT_TIMEOUT = 300.0
INSTRUCTIONS = (
    "Some calls ask the user to confirm them first. When the user declines, nothing was sent: do not "
    "retry unless the user asks."
)


@dataclass(frozen=True, slots=True)
class ConfirmSettings:
    """``--confirm`` (which calls), ``--confirm-fallback`` (clients that cannot be asked), and how long to wait."""

    level: ConfirmLevel = "none"
    fallback: Fallback = "refuse"
    timeout: float = DEFAULT_TIMEOUT
    """Seconds the user has to answer; no answer counts as cancel."""


class ConfirmationDeclined(ToolError):
    """The user declined or cancelled the confirmation (or did not answer): nothing was sent."""


class ConfirmationUnavailable(ToolError):
    """The call needs confirmation and this client cannot be asked: nothing was sent."""


def covers(settings: ConfirmSettings, entry: ToolEntry) -> bool:
    """True when ``entry``'s calls must be confirmed: ``writes`` covers every operation that is not
    read-only, and both levels cover every operation annotated destructive (the operation's
    annotations, as generated or set in the config), whatever its method: a GET the spec or the
    config marks destructive is asked like a DELETE."""
    hints = entry.annotations
    if settings.level == "none":
        return False
    return bool(hints.destructiveHint) or (settings.level == "writes" and not hints.readOnlyHint)
