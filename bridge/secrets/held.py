"""Tokens the bridge learns, redacted for as long as something that may send or show them lives.

A fetched OAuth2 token, a token exchanged for a user, a session token a workflow's login step
returned: each is held by whatever may still send it (a cache entry) and by every tool call that
used it, until that call's result and errors have been redacted (:func:`call_scope`, opened
around every tool call and resource read). A token is redacted while anything holds it, however
many others come and go: a count of "the most recent N" let a live token fall out when more than
N calls ran at once. Memory follows what is live: the calls running (bounded by the per-API
limits) and the caches (bounded by their own sizes).

A token released by everything stays in the search index until enough others are released to
make a rebuild worth it (at most as many stale tokens as live ones): over-redacting a dead token
costs nothing, and rebuilding the index on every release would double the work.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["UNSCOPED", "HeldTokens", "call_scope"]

UNSCOPED = 32
"""Tokens used outside any tool call (a library caller's own OperationCall) kept, the most recent:
nothing marks when such a call's text stops being shown."""
_STALE_FLOOR = 8


class _Scope:
    """The tokens one tool call holds."""

    __slots__ = ("held", "lock")

    def __init__(self) -> None:
        self.held: list[tuple[HeldTokens, str]] = []
        self.lock = threading.Lock()  # the call's worker threads add to it too


_SCOPE: ContextVar[_Scope | None] = ContextVar("bridge_held_tokens_scope", default=None)


@contextmanager
def call_scope() -> Iterator[None]:
    """Every token a call learns or uses inside this block stays redacted until the block ends
    (tasks and worker threads the call starts inherit it). Nested blocks share the outer one."""
    if _SCOPE.get() is not None:
        yield
        return
    scope = _Scope()
    reset = _SCOPE.set(scope)
    try:
        yield
    finally:
        _SCOPE.reset(reset)
        with scope.lock:
            held, scope.held = scope.held, []
        for owner, token in held:
            owner.release(token)


class HeldTokens:
    """Reference counts of learnt tokens; ``changed`` gets the live (and some stale) tokens after
    each change that matters, with the lock held (so index builds never interleave)."""

    def __init__(self, changed: Callable[[tuple[str, ...]], None]) -> None:
        self._changed = changed
        self._counts: Counter[str] = Counter()
        self._indexed: set[str] = set()  # what `changed` last got: the live tokens and some stale ones
        self._unscoped: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def __contains__(self, token: str) -> bool:
        return token in self._counts

    def __len__(self) -> int:
        """Tokens held now (not the stale ones still searched)."""
        return len(self._counts)

    def hold(self, token: str) -> None:
        """One more holder of ``token``: redacted from now on, until every holder has released it."""
        if not token:
            return
        with self._lock:
            self._counts[token] += 1
            if token not in self._indexed:
                self._rebuild()

    def release(self, token: str) -> None:
        with self._lock:
            if token not in self._counts:
                return
            if self._counts[token] == 1:
                del self._counts[token]
                if len(self._indexed) - len(self._counts) > max(_STALE_FLOOR, len(self._counts)):
                    self._rebuild()
            else:
                self._counts[token] -= 1

    def use(self, token: str) -> None:
        """``token`` is being sent by the current call: held until the call's scope ends (outside
        any tool call: among the :data:`UNSCOPED` most recently used)."""
        if not token:
            return
        scope = _SCOPE.get()
        if scope is None:
            self._use_unscoped(token)
            return
        self.hold(token)
        with scope.lock:
            scope.held.append((self, token))

    def _use_unscoped(self, token: str) -> None:
        with self._lock:
            if token in self._unscoped:
                self._unscoped.move_to_end(token)
                return
            self._unscoped[token] = None
        self.hold(token)
        dropped: list[str] = []
        with self._lock:
            while len(self._unscoped) > UNSCOPED:
                dropped.append(self._unscoped.popitem(last=False)[0])
        for old in dropped:
            self.release(old)

    def _rebuild(self) -> None:
        self._indexed = set(self._counts)
        self._changed(tuple(self._counts))
