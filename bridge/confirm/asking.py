"""Asking the user before a write: an elicitation on handshake-era connections, an input round on 2026-07-28.

One :class:`Confirmations` per server. For each ``tools/call`` the server makes a confirmer
(:meth:`Confirmations.for_request`) that the call core awaits before it sends a covered call:

- handshake era (2025-06-18 .. 2025-11-25): an ``elicitation/create`` form on the request's own
  channel, answered within ``timeout`` or counted as cancel;
- 2026-07-28 (no server-to-client requests): the call answers ``input_required`` with the form
  and a one-shot ``requestState``; the client retries with the answer. The state is a random
  nonce kept here, bound to the tool, a digest of its arguments, the operation and the caller,
  used at most once and only within ``timeout``: an answer cannot be replayed, moved to other
  arguments, or forged. A program (code mode) cannot be re-run for a second round, so on these
  connections its writes get the fallback;
- a client that declared no form elicitation (or cannot be sent a request): ``fallback``, refuse
  (a tool error, nothing sent) or proceed.

Declined, cancelled, unanswered, or accepted without ``confirm: true``: a tool error, nothing sent.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from bridge.confirm.form import REQUESTED_SCHEMA, approved, message
from bridge.confirm.policy import ConfirmationDeclined, ConfirmationUnavailable, ConfirmSettings, covers
from bridge.contract.catalogue import ToolEntry
from bridge.tools.registry import Confirmer

__all__ = ["INPUT_KEY", "Confirmations", "InputRequired", "RequestConfirmer", "single_round"]

logger = logging.getLogger("bridge.confirm")

INPUT_KEY = "confirm"
MAX_OPEN_ROUNDS = 1024


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
    owner: str | None
    expires: float


def _digest(arguments: Any) -> str:
    text = json.dumps(arguments or {}, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _owner() -> str | None:
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    return None if token is None else f"{token.subject or '-'}|{token.client_id}"


@dataclass(frozen=True, slots=True)
class RequestConfirmer:
    """A :data:`~bridge.tools.registry.Confirmer` for one ``tools/call``.

    ``rounds=False`` (:meth:`without_rounds`): the tool cannot be re-run for a second round (a
    program runs once), so a 2026-07-28 connection gets the fallback.
    """

    confirmations: Confirmations
    ctx: ServerRequestContext[Any, Any]
    rounds: bool = True

    async def __call__(self, entry: ToolEntry, arguments: Mapping[str, Any]) -> None:
        await self.confirmations.confirm(self.ctx, entry, arguments, rounds=self.rounds)

    def without_rounds(self) -> RequestConfirmer:
        return RequestConfirmer(self.confirmations, self.ctx, rounds=False)


def single_round(confirm: Confirmer | None) -> Confirmer | None:
    """``confirm`` for a tool that runs once per call (a program): no input rounds."""
    return confirm.without_rounds() if isinstance(confirm, RequestConfirmer) else confirm


class Confirmations:
    """``--confirm``'s policy and the open input rounds of one server."""

    def __init__(self, settings: ConfirmSettings, *, api: str, redact: Callable[[str], str]) -> None:
        self.settings = settings
        self._api = api
        self._redact = redact
        self._rounds: OrderedDict[str, _Round] = OrderedDict()

    def for_request(self, ctx: ServerRequestContext[Any, Any]) -> RequestConfirmer | None:
        """The confirmer for calls made while serving ``ctx`` (a ``tools/call``); None when nothing is asked."""
        if self.settings.level == "none":
            return None
        return RequestConfirmer(self, ctx)

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
        self, ctx: ServerRequestContext[Any, Any], entry: ToolEntry, arguments: Mapping[str, Any], *, rounds: bool
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
            self._round(ctx, entry, text)
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
            except ValidationError as exc:  # the client's answer is not an ElicitResult: no answer, not a bug
                logger.info("%s: the confirmation answer is malformed (%d errors)", entry.name, exc.error_count())
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

    def _round(self, ctx: ServerRequestContext[Any, Any], entry: ToolEntry, text: str) -> None:
        params: Mapping[str, Any] = ctx.params or {}
        tool = str(params.get("name", ""))
        state = params.get("requestState")
        now = time.monotonic()
        if state is not None:
            issued = self._rounds.pop(state, None) if isinstance(state, str) else None
            expected = (tool, _digest(params.get("arguments")), entry.operation, _owner())
            if (
                issued is None
                or issued.expires < now
                or (issued.tool, issued.arguments, issued.operation, issued.owner) != expected
            ):
                raise ConfirmationDeclined(
                    f"The confirmation sent with this call of {entry.operation} is not valid (expired, already used, "
                    "or for other arguments); nothing was sent. Call the tool again to ask the user."
                )
            responses = params.get("inputResponses")
            self._decide(entry, responses.get(INPUT_KEY) if isinstance(responses, Mapping) else None)
            return
        nonce = secrets.token_urlsafe(24)
        for key, old in list(self._rounds.items()):
            if old.expires < now or len(self._rounds) >= MAX_OPEN_ROUNDS:
                del self._rounds[key]
        self._rounds[nonce] = _Round(
            tool, _digest(params.get("arguments")), entry.operation, _owner(), now + self.settings.timeout
        )
        form = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(message=text, requested_schema=REQUESTED_SCHEMA)
        )
        raise InputRequired(mcp_types.InputRequiredResult(input_requests={INPUT_KEY: form}, request_state=nonce))
