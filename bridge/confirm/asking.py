"""Asking the user before a write: an elicitation on handshake-era connections, an input round on 2026-07-28.

One :class:`Confirmations` per server. For each ``tools/call`` the server makes a confirmer
(:meth:`Confirmations.for_request`) that the call core awaits before it sends a covered call:

- handshake era (2025-06-18 .. 2025-11-25): an ``elicitation/create`` form on the request's own
  channel, answered within ``timeout`` or counted as cancel;
- 2026-07-28 (no server-to-client requests): the call answers ``input_required`` with the form
  and a one-shot ``requestState``; the client retries with the answer. The state is a random
  nonce kept here, bound to the tool, a digest of its arguments, the operation and the caller,
  used at most once and only within ``timeout``: an answer cannot be replayed, moved to other
  arguments, or forged. Open rounds are an :class:`~bridge.tools.owned.OwnedPool`: a share per
  caller, so one caller's flood of rounds neither evicts nor blocks another's. A program (code
  mode) cannot be re-run for a second round, so on these connections its writes get the fallback;
- a client that declared no form elicitation (or cannot be sent a request): ``fallback``, refuse
  (a tool error, nothing sent) or proceed.

Declined, cancelled, unanswered, or accepted without ``confirm: true``: a tool error, nothing sent.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from bridge.confirm.form import REQUESTED_SCHEMA, approved, message
from bridge.confirm.policy import ConfirmationDeclined, ConfirmationUnavailable, ConfirmSettings, covers
from bridge.contract.catalogue import ToolEntry
from bridge.tools.owned import Caller, OwnedPool, PoolFull
from bridge.tools.registry import Confirmer

__all__ = ["INPUT_KEY", "Confirmations", "InputRequired", "RequestConfirmer", "single_round"]

logger = logging.getLogger("bridge.confirm")

INPUT_KEY = "confirm"
MAX_OPEN_ROUNDS = 1024
ROUNDS_PER_CALLER = 32
ROUNDS_PER_CLIENT = 128


class InputRequired(Exception):
    """The call answers ``input_required`` (2026-07-28): the server returns ``result`` as it is."""

    def __init__(self, result: mcp_types.InputRequiredResult) -> None:
        super().__init__("input required")
        self.result = result


@dataclass(frozen=True, slots=True)
class _Round:
    tool: str
    arguments: str  # digest
    operation: str


def _digest(arguments: Any) -> str:
    text = json.dumps(arguments or {}, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class RequestConfirmer:
    """A :data:`~bridge.tools.registry.Confirmer` for one ``tools/call``.

    ``rounds=False`` (:meth:`without_rounds`): the tool cannot be re-run for a second round (a
    program runs once), so a 2026-07-28 connection gets the fallback.
    """

    confirmations: Confirmations
    ctx: ServerRequestContext[Any, Any]
    caller: Caller
    rounds: bool = True

    async def __call__(self, entry: ToolEntry, arguments: Mapping[str, Any]) -> None:
        await self.confirmations.confirm(self.ctx, entry, arguments, rounds=self.rounds, caller=self.caller)

    def without_rounds(self) -> RequestConfirmer:
        return RequestConfirmer(self.confirmations, self.ctx, self.caller, rounds=False)


def single_round(confirm: Confirmer | None) -> Confirmer | None:
    """``confirm`` for a tool that runs once per call (a program): no input rounds."""
    return confirm.without_rounds() if isinstance(confirm, RequestConfirmer) else confirm


class Confirmations:
    """``--confirm``'s policy and the open input rounds of one server."""

    def __init__(self, settings: ConfirmSettings, *, api: str, redact: Callable[[str], str]) -> None:
        self.settings = settings
        self._api = api
        self._redact = redact
        self._rounds: OwnedPool[_Round] = OwnedPool(
            total=MAX_OPEN_ROUNDS,
            per_caller=ROUNDS_PER_CALLER,
            per_group=ROUNDS_PER_CLIENT,
            max_ttl=max(settings.timeout, 1.0),
            what="open confirmations",
        )

    def for_request(self, ctx: ServerRequestContext[Any, Any], caller: Caller) -> RequestConfirmer | None:
        """The confirmer for ``caller``'s calls while serving ``ctx`` (a ``tools/call``); None: nothing is asked."""
        if self.settings.level == "none":
            return None
        return RequestConfirmer(self, ctx, caller)

    def channel(self, ctx: ServerRequestContext[Any, Any]) -> str | None:
        """``"request"``, ``"rounds"``, or None when the client cannot be asked."""
        capability = ctx.session.client_capabilities
        elicitation = capability.elicitation if capability is not None else None
        if elicitation is None or (elicitation.form is None and elicitation.url is not None):
            return None
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return "rounds"
        return "request" if ctx.session.can_send_request else None

    async def confirm(
        self,
        ctx: ServerRequestContext[Any, Any],
        entry: ToolEntry,
        arguments: Mapping[str, Any],
        *,
        rounds: bool,
        caller: Caller,
    ) -> None:
        """Return when the call may go; raise when it must not (nothing has been sent)."""
        if not covers(self.settings, entry):
            return
        channel = self.channel(ctx)
        if channel == "rounds" and not rounds:
            channel = None
        if channel is None:
            if self.settings.fallback == "proceed":
                logger.info("%s sent unconfirmed: the client cannot be asked (--confirm-fallback proceed)", entry.name)
                return
            raise ConfirmationUnavailable(
                f"{entry.operation} needs the user's confirmation (the server runs with --confirm), and this client "
                "cannot ask the user (no form elicitation on this connection). Nothing was sent. Tell the user."
            )
        text = message(entry, arguments, api=self._api, redact=self._redact)
        if channel == "rounds":
            self._round(ctx, entry, text, caller)
        else:
            await self._ask(ctx, entry, text)
        logger.info("%s confirmed by the user", entry.name)

    async def _ask(self, ctx: ServerRequestContext[Any, Any], entry: ToolEntry, text: str) -> None:
        request = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(message=text, requested_schema=REQUESTED_SCHEMA)
        )
        answer: Any = None
        with anyio.move_on_after(self.settings.timeout):
            try:
                answer = await ctx.session.send_request(
                    request,
                    mcp_types.ElicitResult,
                    request_read_timeout_seconds=self.settings.timeout,
                    metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
                )
            except MCPError as exc:
                logger.info("%s: the confirmation request failed (%s)", entry.name, exc.error.code)
        self._decide(entry, answer)

    def _decide(self, entry: ToolEntry, answer: Any) -> None:
        if approved(answer):
            return
        action = answer.get("action") if isinstance(answer, Mapping) else getattr(answer, "action", None)
        how = {"decline": "declined", "cancel": "cancelled", "accept": "did not confirm"}.get(
            str(action), "did not answer"
        )
        raise ConfirmationDeclined(
            f"The user {how} {entry.operation}; nothing was sent. Do not retry it unless the user asks."
        )

    def _round(self, ctx: ServerRequestContext[Any, Any], entry: ToolEntry, text: str, caller: Caller) -> None:
        params: Mapping[str, Any] = ctx.params or {}
        tool = str(params.get("name", ""))
        state = params.get("requestState")
        if state is not None:
            issued = self._rounds.pop(caller, state)  # another caller's or expired: None
            if issued != _Round(tool, _digest(params.get("arguments")), entry.operation):
                raise ConfirmationDeclined(
                    f"The confirmation sent with this call of {entry.operation} is not valid (expired, already used, "
                    "or for other arguments); nothing was sent. Call the tool again to ask the user."
                )
            responses = params.get("inputResponses")
            self._decide(entry, responses.get(INPUT_KEY) if isinstance(responses, Mapping) else None)
            return
        try:
            nonce = self._rounds.add(
                caller, _Round(tool, _digest(params.get("arguments")), entry.operation), self.settings.timeout
            )
        except PoolFull as exc:
            raise ConfirmationUnavailable(
                f"{entry.operation} needs the user's confirmation, and {exc}; nothing was sent. Answer the open "
                f"ones or let them expire ({self.settings.timeout:g} s), then call the tool again."
            ) from None
        form = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(message=text, requested_schema=REQUESTED_SCHEMA)
        )
        raise InputRequired(mcp_types.InputRequiredResult(input_requests={INPUT_KEY: form}, request_state=nonce))
