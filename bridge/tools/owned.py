"""A bounded store of entries that belong to their callers: a share each, no reads or evictions across callers.

Every pool a caller can fill (MCP tasks and the results they hold, long-running operation
handles, confirmation rounds) is an :class:`OwnedPool`, so the same four rules hold for each:

- a caller holds at most ``per_caller`` entries, and the callers of one ``group`` (a token
  identity, else a peer address: one client that opens many sessions) at most ``per_group``;
- the pool holds at most ``total`` entries;
- a new entry never pushes out anyone's entry, its own caller's included: when a share or the
  pool is full, :meth:`OwnedPool.add` raises :class:`PoolFull` and the caller is told so (only
  time frees room: every entry expires, at most ``max_ttl`` seconds after it was last armed);
- an entry is read only by its own caller, with its key (random, unguessable). Callers who
  cannot be told apart (:data:`ANONYMOUS`: an unauthenticated stateless HTTP request) hold
  capabilities: the key alone reads the entry, and :meth:`OwnedPool.mine` lists nothing of theirs.
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["ANONYMOUS", "UNKNOWN_CALLER", "Caller", "OwnedPool", "PoolFull"]

V = TypeVar("V")

ANONYMOUS = "anonymous"


@dataclass(frozen=True, slots=True)
class Caller:
    """Who holds an entry: ``key`` may read it; ``group`` is whose wider share it counts against."""

    key: str
    group: str

    @property
    def anonymous(self) -> bool:
        """True when callers cannot be told apart: an entry is then a capability, never listed."""
        return self.key == ANONYMOUS


UNKNOWN_CALLER = Caller(ANONYMOUS, ANONYMOUS)
"""A call made outside any request (a resource read, a test): one shared anonymous caller."""


class PoolFull(Exception):
    """No room for a new entry: ``str()`` says whose limit was reached, for the caller to read."""


@dataclass(slots=True)
class _Held(Generic[V]):
    caller: Caller
    value: V
    expires: float


class OwnedPool(Generic[V]):
    """Entries of type ``V`` under random keys, each owned by a :class:`Caller`; see the module docstring."""

    def __init__(
        self,
        *,
        total: int,
        per_caller: int,
        per_group: int | None = None,
        max_ttl: float,
        what: str = "entries",
        clock: Callable[[], float] = time.monotonic,
        weigh: Callable[[V], int] | None = None,
        max_weight: int | None = None,
    ) -> None:
        if min(total, per_caller, per_group or 1, max_weight or 1) < 1 or not max_ttl > 0:
            raise ValueError("pool limits must be positive")
        self.total = total
        self.per_caller = min(per_caller, total)
        self.per_group = min(per_group or self.per_caller, total)
        self.max_ttl = max_ttl
        self.what = what
        self._clock = clock
        self._held: dict[str, _Held[V]] = {}  # insertion order: oldest first
        self._by_caller: dict[Caller, int] = {}
        self._by_group: dict[str, int] = {}
        self._next_expiry = math.inf
        # Entries that hold data (a confirmation round keeps answers) also count against a weight in all.
        self._weigh = weigh
        self.max_weight = max_weight
        self._weight = 0

    @property
    def weight(self) -> int:
        """The live entries' weight in all (0 without ``weigh``)."""
        self._expire()
        return self._weight

    def __len__(self) -> int:
        self._expire()
        return len(self._held)

    def count(self, caller: Caller) -> int:
        """How many live entries ``caller`` holds."""
        self._expire()
        return self._by_caller.get(caller, 0)

    def add(self, caller: Caller, value: V, ttl: float, *, prefix: str = "") -> str:
        """Keep ``value`` for ``caller`` for ``ttl`` seconds (at most ``max_ttl``); its new random key.

        Raises:
            PoolFull: ``caller``'s share, its group's, or the pool is full; nothing was kept.
        """
        self._expire()
        if self._by_caller.get(caller, 0) >= self.per_caller:
            raise PoolFull(f"you already hold {self.per_caller} {self.what}, the most one caller may")
        if self._by_group.get(caller.group, 0) >= self.per_group:
            raise PoolFull(f"your client already holds {self.per_group} {self.what}, the most one client may")
        if len(self._held) >= self.total:
            raise PoolFull(f"the server holds {self.total} {self.what}, the most it keeps")
        weight = self._weigh(value) if self._weigh is not None else 0
        if self.max_weight is not None and self._weight + weight > self.max_weight:
            raise PoolFull(f"the server keeps no more data for {self.what} ({self.max_weight:,} bytes in all)")
        self._weight += weight
        key = prefix + secrets.token_urlsafe(18)
        expires = self._clock() + min(max(ttl, 0.0), self.max_ttl)
        self._held[key] = _Held(caller, value, expires)
        self._by_caller[caller] = self._by_caller.get(caller, 0) + 1
        self._by_group[caller.group] = self._by_group.get(caller.group, 0) + 1
        self._next_expiry = min(self._next_expiry, expires)
        return key

    def get(self, caller: Caller, key: object) -> V | None:
        """The entry under ``key`` when ``caller`` owns it and it has not expired; None otherwise."""
        self._expire()
        held = self._held.get(key) if isinstance(key, str) else None
        return held.value if held is not None and held.caller == caller else None

    def pop(self, caller: Caller, key: object) -> V | None:
        """:meth:`get`, and forget the entry (a one-shot entry such as a confirmation round)."""
        value = self.get(caller, key)
        if value is not None:
            self.discard(key)
        return value

    def discard(self, key: object) -> None:
        """Forget ``key``'s entry whoever owns it: the server's own bookkeeping (an operation ended)."""
        held = self._held.pop(key, None) if isinstance(key, str) else None
        if held is not None:
            self._release(held)

    def keep_for(self, key: str, ttl: float) -> None:
        """Expire ``key``'s entry ``ttl`` seconds from now (at most ``max_ttl``), e.g. once its task has ended."""
        held = self._held.get(key)
        if held is not None:
            held.expires = self._clock() + min(max(ttl, 0.0), self.max_ttl)
            self._next_expiry = min(self._next_expiry, held.expires)

    def mine(self, caller: Caller) -> list[tuple[str, V]]:
        """``caller``'s live entries, newest first; nothing for an anonymous caller (no one's to list)."""
        self._expire()
        if caller.anonymous:
            return []
        return [(key, held.value) for key, held in reversed(self._held.items()) if held.caller == caller]

    def _expire(self) -> None:
        now = self._clock()
        if now < self._next_expiry:
            return
        soonest = math.inf
        for key, held in list(self._held.items()):
            if held.expires <= now:
                del self._held[key]
                self._release(held)
            else:
                soonest = min(soonest, held.expires)
        self._next_expiry = soonest

    def _release(self, held: _Held[V]) -> None:
        if self._weigh is not None:
            self._weight -= self._weigh(held.value)
        _decrement(self._by_caller, held.caller)
        _decrement(self._by_group, held.caller.group)


K = TypeVar("K")


def _decrement(counts: dict[K, int], name: K) -> None:
    left = counts[name] - 1
    if left:
        counts[name] = left
    else:
        del counts[name]
