"""Asking the user before a write: an elicitation on handshake-era connections, an input round on 2026-07-28.

One :class:`Confirmations` per server. For each request (a ``tools/call`` or ``resources/read``)
the server makes a :class:`RequestConfirmer` (:meth:`Confirmations.for_request`), which the call
core (bridge/calls/gate.py) hands every upstream call of that request, covered or not:

- handshake era (2025-06-18 .. 2025-11-25): an ``elicitation/create`` form on the request's own
  channel for each covered call, answered within ``timeout`` or counted as cancel;
- 2026-07-28 (no server-to-client requests): at a covered call the request answers
  ``input_required`` with the form and a one-shot ``requestState`` (bridge/confirm/rounds.py):
  a random nonce bound to the request (tool or resource, and its arguments), the caller, and the
  call asked about, holding the answers of the calls this run already sent. The retried request
  runs again and *resumes*: those calls get their kept answers and are not sent again, the asked
  call goes on the user's answer (used once), and a later covered call opens the next round. A
  state expired, spent, forged, or for another request sends nothing at all;
- a program (code mode) cannot be re-run for a second round: on a 2026-07-28 connection its
  covered calls are refused (nothing sent for them), whatever ``--confirm-fallback`` says;
- a client that declared no form elicitation (or cannot be sent a request): ``fallback``, refuse
  (a tool error, nothing sent) or proceed.

Declined, cancelled, unanswered, or accepted without ``confirm: true``: a tool error, nothing sent.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import mcp_types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from bridge.confirm.form import REQUESTED_SCHEMA, approved, message
from bridge.confirm.policy import ConfirmationDeclined, ConfirmationUnavailable, ConfirmSettings
from bridge.confirm.rounds import (
    MAX_OPEN_ROUNDS,
    MAX_ROUND_BYTES,
    MAX_ROUNDS_PER_CALLER,
    MAX_ROUNDS_PER_CLIENT,
    PoolFull,
    Round,
    RoundStore,
    Sent,
    digest,
    size_of,
)
from bridge.contract.catalogue import ToolEntry
from bridge.tools.owned import Caller
from bridge.tools.registry import Confirmer

# The pool's shares, named here for those who tune or test asking (bridge/confirm/rounds.py holds them).
ROUNDS_PER_CALLER = MAX_ROUNDS_PER_CALLER
ROUNDS_PER_CLIENT = MAX_ROUNDS_PER_CLIENT

__all__ = [
    "INPUT_KEY",
    "MAX_OPEN_ROUNDS",
    "ROUNDS_PER_CALLER",
    "ROUNDS_PER_CLIENT",
    "Confirmations",
    "InputRequired",
    "RequestConfirmer",
    "single_round",
]

logger = logging.getLogger("bridge.confirm")

INPUT_KEY = "confirm"


class InputRequired(Exception):
    """The call answers ``input_required`` (2026-07-28): the server returns ``result`` as it is."""

    def __init__(self, result: mcp_types.InputRequiredResult) -> None:
        super().__init__("input required")
        self.result = result


def _request_digest(params: Mapping[str, Any]) -> str:
    """What a round is bound to: the tool (or the resource) and the arguments, as the client sent them."""
    return digest({"name": params.get("name"), "uri": params.get("uri"), "arguments": params.get("arguments") or {}})


class RequestConfirmer:
    """The :class:`~bridge.tools.registry.Confirmer` of one request: every upstream call it makes passes here.

    ``rounds=False`` (:meth:`without_rounds`): the request cannot be re-run for a second round (a
    program runs once), so on a 2026-07-28 connection its covered calls are refused.
    """

    def __init__(
        self,
        confirmations: Confirmations,
        ctx: ServerRequestContext[Any, Any],
        caller: Caller,
        *,
        rounds: bool = True,
    ) -> None:
        self.confirmations = confirmations
        self.ctx = ctx
        self.caller = caller  # whose rounds this request may open and resume (bridge/server/callers.py)
        self.rounds = rounds
        self._loaded = False
        self._refusal: str | None = None  # the request's state was not valid: no call of it is sent
        self._kept: list[Sent] = []  # sent by earlier rounds and not yet given back to this run
        self._sent: list[Sent] = []  # sent (or given back) in this run, in order
        self._answer: tuple[tuple[str, str], Any] | None = None  # the call asked about, and the answer

    def without_rounds(self) -> RequestConfirmer:
        return RequestConfirmer(self.confirmations, self.ctx, self.caller, rounds=False)

    def _journaling(self) -> bool:
        return self.rounds and self.confirmations.channel(self.ctx) == "rounds"

    async def __call__(self, entry: ToolEntry, arguments: Mapping[str, Any], target: str | None) -> Any:
        if not self._journaling():
            if target is not None:
                await self.confirmations.confirm(self.ctx, entry, arguments, target, rounds=self.rounds)
            return None
        self._load(entry)
        key = (entry.operation, digest(dict(arguments)))
        for index, kept in enumerate(self._kept):
            if kept.key == key:  # sent in an earlier round of this request: its answer, not a second send
                del self._kept[index]
                self._sent.append(kept)
                return kept.response
        if target is None:
            return None
        if self._answer is not None and self._answer[0] == key:
            _, answer = self._answer
            self._answer = None  # one answer, one call
            self.confirmations.decide(entry, answer)
            logger.info("%s confirmed by the user", entry.name)
            return None
        self.confirmations.open_round(self.ctx, self.caller, entry, arguments, target, key, tuple(self._sent))
        return None  # not reached: open_round raises

    def sent(self, entry: ToolEntry, arguments: Mapping[str, Any], response: Any) -> None:
        if self._journaling():
            self._sent.append(Sent(entry.operation, digest(dict(arguments)), response, size_of(response)))

    def _load(self, entry: ToolEntry) -> None:
        """Once per request: take the round its ``requestState`` names; a bad state refuses every call."""
        if not self._loaded:
            self._loaded = True
            params: Mapping[str, Any] = self.ctx.params or {}
            state = params.get("requestState")
            if state is not None:
                issued = self.confirmations.store.take(self.caller, state)  # another caller's: None
                if issued is None or issued.request != _request_digest(params):
                    self._refusal = (
                        "is not valid (expired, already used, or for another call or other arguments); nothing "
                        "was sent. Call the tool again to ask the user."
                    )
                else:
                    self._kept = list(issued.sent)
                    responses = params.get("inputResponses")
                    answer = responses.get(INPUT_KEY) if isinstance(responses, Mapping) else None
                    self._answer = (issued.pending, answer)
        if self._refusal is not None:
            raise ConfirmationDeclined(f"The confirmation sent with this call of {entry.operation} {self._refusal}")


def single_round(confirm: Confirmer | None) -> Confirmer | None:
    """``confirm`` for a request that runs once (a program): no input rounds."""
    return confirm.without_rounds() if isinstance(confirm, RequestConfirmer) else confirm


class Confirmations:
    """``--confirm``'s asking and the open input rounds of one server."""

    def __init__(self, settings: ConfirmSettings, *, api: str, redact: Callable[[str], str]) -> None:
        self.settings = settings
        self._api = api
        self._redact = redact
        self.store = RoundStore(settings.timeout)

    def for_request(self, ctx: ServerRequestContext[Any, Any], caller: Caller) -> RequestConfirmer | None:
        """The confirmer for ``caller``'s calls while serving ``ctx``; None when nothing is asked."""
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
        target: str,
        *,
        rounds: bool,
    ) -> None:
        """A covered call outside input rounds: return when it may go, raise when not (nothing sent)."""
        channel = self.channel(ctx)
        if channel == "rounds" and not rounds:
            raise ConfirmationUnavailable(
                f"{entry.operation} needs the user's confirmation (the server runs with --confirm), and a program "
                "cannot stop to ask on this connection (it would run again from the start). Nothing was sent for "
                "it. Tell the user."
            )
        if channel is None:
            if self.settings.fallback == "proceed":
                logger.info("%s sent unconfirmed: the client cannot be asked (--confirm-fallback proceed)", entry.name)
                return
            raise ConfirmationUnavailable(
                f"{entry.operation} needs the user's confirmation (the server runs with --confirm), and this client "
                "cannot ask the user (no form elicitation on this connection). Nothing was sent. Tell the user."
            )
        text = message(entry, arguments, target, api=self._api, redact=self._redact)
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
        self.decide(entry, answer)

    def decide(self, entry: ToolEntry, answer: Any) -> None:
        """Return on a yes; raise :class:`ConfirmationDeclined` on anything else."""
        if approved(answer):
            return
        action = answer.get("action") if isinstance(answer, Mapping) else getattr(answer, "action", None)
        how = {"decline": "declined", "cancel": "cancelled", "accept": "did not confirm"}.get(
            str(action), "did not answer"
        )
        raise ConfirmationDeclined(
            f"The user {how} {entry.operation}; nothing was sent. Do not retry it unless the user asks."
        )

    def open_round(
        self,
        ctx: ServerRequestContext[Any, Any],
        caller: Caller,
        entry: ToolEntry,
        arguments: Mapping[str, Any],
        target: str,
        pending: tuple[str, str],
        sent: tuple[Sent, ...],
    ) -> None:
        """Raise :class:`InputRequired`: the form for ``entry``, and a state that resumes after ``sent``."""
        text = message(entry, arguments, target, api=self._api, redact=self._redact)
        kept = sum(s.size for s in sent)
        if kept > MAX_ROUND_BYTES:
            raise ConfirmationUnavailable(
                f"{entry.operation} needs the user's confirmation, and the answers of the {len(sent)} call(s) this "
                f"request already sent ({kept:,} bytes) are too large to keep while the user is asked. "
                f"{entry.operation} was not sent; the calls before it were. Tell the user."
            )
        params: Mapping[str, Any] = ctx.params or {}
        issued = Round(
            request=_request_digest(params),
            expires=time.monotonic() + self.settings.timeout,
            pending=pending,
            sent=sent,
        )
        try:
            nonce = self.store.open(caller, issued)
        except PoolFull as exc:  # never by pushing out an open round, anyone's (P72)
            done = f"; the {len(sent)} call(s) before it were sent" if sent else ""
            raise ConfirmationUnavailable(
                f"{entry.operation} needs the user's confirmation, and {exc}: nothing was sent for it{done}. "
                "Let the user answer the confirmations already asked, or wait for them to expire, then try again."
            ) from None
        form = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(message=text, requested_schema=REQUESTED_SCHEMA)
        )
        raise InputRequired(mcp_types.InputRequiredResult(input_requests={INPUT_KEY: form}, request_state=nonce))
