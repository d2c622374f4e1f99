"""The one confirmation decision: every upstream call of every surface passes here before it is sent.

:meth:`~bridge.calls.operation.OperationCall.respond` calls :func:`pass_gate` after the request is
built and before credentials are added. The decision is the runtime's (``serve --confirm``,
:func:`bridge.confirm.policy.covers`), not the surface's: a covered call whose context carries no
confirmer is refused, so a surface that forgets to ask (or one added later) fails closed instead
of sending unasked. A surface with a confirmer hands it every call, covered or not: a request
answered over several input rounds resumes from what it already sent (bridge/confirm/rounds.py).
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Mapping
from typing import Any

import httpx

from bridge.calls.context import CallContext
from bridge.confirm.policy import ConfirmationUnavailable, ConfirmSettings, covers
from bridge.contract.catalogue import BoundValue, HttpBinding, ToolEntry
from bridge.request.build import build_request
from bridge.tools.errors import ToolError
from bridge.upstream.client import UpstreamResponse

__all__ = ["SHOWN_BOUND", "USER_CANCEL", "pass_gate", "shown_target"]

SHOWN_BOUND = "{bound}"
"""What the user sees where the operator's bound value goes in the path or query."""
# Stands for a bound value while the shown request is built: random, so no argument can spell it.
_MARK = "b" + secrets.token_hex(8)


class _UserCancel:
    """The gate of the API's cancel operation the bridge calls when the client cancels a call
    it started (bridge/calls/longrunning/): the client's cancel is the user's say, nothing is asked."""

    async def __call__(self, entry: Any, arguments: Mapping[str, Any], target: str | None) -> Any:
        return None

    def sent(self, entry: Any, arguments: Mapping[str, Any], response: Any) -> None:
        return None


USER_CANCEL = _UserCancel()


async def pass_gate(
    entry: ToolEntry,
    arguments: Mapping[str, Any],
    context: CallContext,
    *,
    settings: ConfirmSettings,
    base_url: httpx.URL,
    bound: Mapping[str, str],
) -> UpstreamResponse | None:
    """Return when the call may be sent (None), or the answer an earlier round of this request
    already got for it; raise a ``ToolError`` when it must not be sent (nothing has been)."""
    covered = covers(settings, entry)
    confirmer = context.confirm
    if confirmer is None:
        if covered:
            raise ConfirmationUnavailable(
                f"{entry.operation} needs the user's confirmation (the server runs with --confirm), and "
                f"{context.surface} cannot ask the user. Nothing was sent."
            )
        return None
    target = (
        shown_target(entry.binding, arguments, base_url=base_url, operation=entry.operation, bound=bound)
        if covered
        else None
    )
    replay = await confirmer(entry, arguments, target)
    return replay if isinstance(replay, UpstreamResponse) else None


def shown_target(
    binding: HttpBinding, arguments: Mapping[str, Any], *, base_url: httpx.URL, operation: str, bound: Mapping[str, str]
) -> str:
    """``"PUT /v1/users/owner-account?notify=true"``: the request line as it will be sent, with
    every bound path and query value shown as ``{bound}`` (credentials are added later, never here).

    The same builder as the call itself, so the user sees the real target, encoding and all.
    """
    params = tuple(
        dataclasses.replace(p, bound=BoundValue(value=_MARK))
        if p.bound is not None and p.location in ("path", "query")
        else p
        for p in binding.params
    )
    try:
        shown = build_request(
            dataclasses.replace(binding, params=params),
            dict(arguments),
            base_url=base_url,
            operation=operation,
            bound=bound,
        )
    except ToolError:
        # The call itself was built; only the masked copy failed. A target that cannot be shown is not asked.
        return ""
    query = "&".join(f"{name}={value}" for name, value in shown.query)
    return f"{shown.method} {shown.path}{'?' + query if query else ''}".replace(_MARK, SHOWN_BOUND)
