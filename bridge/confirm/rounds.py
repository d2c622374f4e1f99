"""Open input rounds (2026-07-28): one-shot nonces bound to a request and its caller, holding what was sent.

A request answered over input rounds is run again from the start on each retry. So that a retry
*resumes* instead of replaying, a round keeps the answers of the calls its run already sent
(:class:`Sent`); the retried run is given those back instead of sending them again, and only the
call the user was asked about (``Round.pending``) is decided by the answer. Bounds: a round lives
``timeout`` seconds and is taken at most once; it keeps at most :data:`MAX_ROUND_BYTES` of answers;
all open rounds keep at most :data:`MAX_KEPT_BYTES` and :data:`MAX_OPEN_ROUNDS`, one caller at most
:data:`MAX_ROUNDS_PER_CALLER` (its own oldest go first, so one caller cannot push out another's).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_KEPT_BYTES",
    "MAX_OPEN_ROUNDS",
    "MAX_ROUNDS_PER_CALLER",
    "MAX_ROUND_BYTES",
    "Round",
    "RoundStore",
    "Sent",
    "digest",
    "size_of",
]

MAX_OPEN_ROUNDS = 1024
MAX_ROUNDS_PER_CALLER = 64
MAX_ROUND_BYTES = 1 << 20
MAX_KEPT_BYTES = 64 << 20


def digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def size_of(response: Any) -> int:
    """About what keeping an upstream answer costs: its body, its headers, and a fixed part."""
    content = getattr(response, "content", b"")
    headers = getattr(response, "headers", {})
    return 256 + len(content) + sum(len(k) + len(v) for k, v in headers.items())


@dataclass(frozen=True, slots=True)
class Sent:
    """One call a request's run sent: its operation, a digest of its arguments, and its answer."""

    operation: str
    arguments: str
    response: Any
    size: int

    @property
    def key(self) -> tuple[str, str]:
        return self.operation, self.arguments


@dataclass(frozen=True, slots=True)
class Round:
    request: str  # digest of the request: the tool (or resource) and its arguments
    owner: str | None
    expires: float
    pending: tuple[str, str]  # the call the answer is for: (operation, arguments digest)
    sent: tuple[Sent, ...]

    @property
    def size(self) -> int:
        return sum(s.size for s in self.sent)


class RoundStore:
    """The open rounds of one server, by nonce."""

    def __init__(self) -> None:
        self._rounds: OrderedDict[str, Round] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._rounds)

    @property
    def kept_bytes(self) -> int:
        return self._bytes

    def open(self, issued: Round) -> str:
        """A fresh nonce for ``issued``; older rounds are dropped as the bounds require."""
        now = time.monotonic()
        for key, old in list(self._rounds.items()):
            if old.expires < now:
                self._drop(key)
        mine = [key for key, old in self._rounds.items() if old.owner == issued.owner]
        for key in mine[: max(0, len(mine) - MAX_ROUNDS_PER_CALLER + 1)]:
            self._drop(key)
        while self._rounds and (len(self._rounds) >= MAX_OPEN_ROUNDS or self._bytes + issued.size > MAX_KEPT_BYTES):
            self._drop(next(iter(self._rounds)))
        nonce = secrets.token_urlsafe(24)
        self._rounds[nonce] = issued
        self._bytes += issued.size
        return nonce

    def take(self, nonce: object) -> Round | None:
        """The round of ``nonce``, which is spent: a second take finds nothing."""
        if not isinstance(nonce, str) or nonce not in self._rounds:
            return None
        issued = self._rounds[nonce]
        self._drop(nonce)
        return issued if issued.expires >= time.monotonic() else None

    def _drop(self, nonce: str) -> None:
        old = self._rounds.pop(nonce)
        self._bytes -= old.size
