"""Open input rounds (2026-07-28): one-shot nonces bound to a request and its caller, holding what was sent.

A request answered over input rounds is run again from the start on each retry. So that a retry
*resumes* instead of replaying, a round keeps the answers of the calls its run already sent
(:class:`Sent`); the retried run is given those back instead of sending them again, and only the
call the user was asked about (``Round.pending``) is decided by the answer. Bounds: a round lives
``timeout`` seconds and is taken at most once; it keeps at most :data:`MAX_ROUND_BYTES` of answers;
all open rounds keep at most :data:`MAX_KEPT_BYTES` and :data:`MAX_OPEN_ROUNDS`, one caller at most
:data:`MAX_ROUNDS_PER_CALLER` and one client :data:`MAX_ROUNDS_PER_CLIENT`; a full share refuses the
new round and never pushes out an open one (bridge/tools/owned.py).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from bridge.tools.owned import Caller, OwnedPool, PoolFull

__all__ = [
    "MAX_KEPT_BYTES",
    "MAX_OPEN_ROUNDS",
    "MAX_ROUNDS_PER_CALLER",
    "MAX_ROUNDS_PER_CLIENT",
    "MAX_ROUND_BYTES",
    "PoolFull",
    "Round",
    "RoundStore",
    "Sent",
    "digest",
    "size_of",
]

MAX_OPEN_ROUNDS = 1024
MAX_ROUNDS_PER_CALLER = 32
MAX_ROUNDS_PER_CLIENT = 128  # a client's sessions together (its token, else its peer address)
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
    expires: float
    pending: tuple[str, str]  # the call the answer is for: (operation, arguments digest)
    sent: tuple[Sent, ...]

    @property
    def size(self) -> int:
        return sum(s.size for s in self.sent)


class RoundStore:
    """The open rounds of one server, by nonce: an :class:`~bridge.tools.owned.OwnedPool`, so a caller and a
    client each have a share, all rounds a total in number and in kept bytes, and a new round never pushes
    out an open one (anyone's): when a share is full the new round is refused (:class:`PoolFull`)."""

    def __init__(self, timeout: float = 60.0) -> None:
        self._pool: OwnedPool[Round] = OwnedPool(
            total=MAX_OPEN_ROUNDS,
            per_caller=MAX_ROUNDS_PER_CALLER,
            per_group=MAX_ROUNDS_PER_CLIENT,
            max_ttl=max(timeout, 1.0),
            what="open confirmations",
            weigh=lambda issued: issued.size,
            max_weight=MAX_KEPT_BYTES,
        )

    def __len__(self) -> int:
        return len(self._pool)

    @property
    def kept_bytes(self) -> int:
        return self._pool.weight

    def open(self, caller: Caller, issued: Round) -> str:
        """A fresh nonce for ``issued``, held for ``caller`` until it expires or is taken.

        Raises:
            PoolFull: the caller's, its client's or the server's share of rounds (or of kept bytes) is full.
        """
        return self._pool.add(caller, issued, issued.expires - time.monotonic())

    def take(self, caller: Caller, nonce: object) -> Round | None:
        """``caller``'s round of ``nonce``, which is spent: a second take, or another caller's, finds nothing."""
        issued = self._pool.pop(caller, nonce)
        return issued if issued is not None and issued.expires >= time.monotonic() else None
