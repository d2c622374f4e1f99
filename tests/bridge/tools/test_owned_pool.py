"""The one store every per-caller pool uses (bridge/tools/owned.py), checked against a model by a state machine.

Its promises, for any sequence of adds, reads, one-shot reads, forgets, re-arms and the passing
of time by several callers (two of them anonymous, behind the same and another peer): no caller
or group exceeds its share and the pool its total; an add is refused exactly when a limit is
reached and never removes anyone's entry; an entry is read only by its own caller and never
once expired; listing shows a caller its own live entries and an anonymous caller nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from bridge.tools.owned import ANONYMOUS, Caller, OwnedPool, PoolFull

CALLERS = (
    Caller("session:a", "peer:1"),
    Caller("session:b", "peer:1"),  # same client as a: shares its group's share
    Caller("token:c", "token:c"),
    Caller(ANONYMOUS, "peer:1"),
    Caller(ANONYMOUS, "peer:2"),
)
MAX_TTL = 50.0


@dataclass
class _Entry:
    caller: Caller
    value: int
    expires: float


class PoolMachine(RuleBasedStateMachine):
    @initialize(total=st.integers(1, 8), per_caller=st.integers(1, 4), per_group=st.integers(1, 6) | st.none())
    def make(self, total: int, per_caller: int, per_group: int | None) -> None:
        self.now = 0.0
        self.pool: OwnedPool[int] = OwnedPool(
            total=total, per_caller=per_caller, per_group=per_group, max_ttl=MAX_TTL, clock=lambda: self.now
        )
        self.limits = (total, min(per_caller, total), min(per_group or per_caller, total))
        self.model: dict[str, _Entry] = {}
        self.values = 0

    def live(self) -> dict[str, _Entry]:
        return {key: entry for key, entry in self.model.items() if entry.expires > self.now}

    @rule(caller=st.sampled_from(CALLERS), ttl=st.floats(-5, 200, allow_nan=False))
    def add(self, caller: Caller, ttl: float) -> None:
        live = self.live()
        total, per_caller, per_group = self.limits
        full = (
            sum(e.caller == caller for e in live.values()) >= per_caller
            or sum(e.caller.group == caller.group for e in live.values()) >= per_group
            or len(live) >= total
        )
        self.values += 1
        try:
            key = self.pool.add(caller, self.values, ttl)
        except PoolFull:
            assert full
            return
        assert not full and key not in self.model
        self.model = live
        self.model[key] = _Entry(caller, self.values, self.now + min(max(ttl, 0.0), MAX_TTL))

    @rule(caller=st.sampled_from(CALLERS), pick=st.integers(0, 100))
    def read_any(self, caller: Caller, pick: int) -> None:
        if not self.model:
            return
        key = sorted(self.model)[pick % len(self.model)]
        entry = self.model[key]
        expected = entry.value if entry.caller == caller and entry.expires > self.now else None
        assert self.pool.get(caller, key) == expected

    @rule(caller=st.sampled_from(CALLERS), pick=st.integers(0, 100))
    def pop_any(self, caller: Caller, pick: int) -> None:
        if not self.model:
            return
        key = sorted(self.model)[pick % len(self.model)]
        entry = self.model[key]
        mine = entry.caller == caller and entry.expires > self.now
        assert self.pool.pop(caller, key) == (entry.value if mine else None)
        if mine:
            del self.model[key]

    @rule(key=st.text(max_size=30))
    def read_a_guess(self, key: str) -> None:
        for caller in CALLERS:
            assert key in self.model or self.pool.get(caller, key) is None

    @rule(pick=st.integers(0, 100))
    def discard(self, pick: int) -> None:
        if self.model:
            key = sorted(self.model)[pick % len(self.model)]
            self.pool.discard(key)
            del self.model[key]

    @rule(pick=st.integers(0, 100), ttl=st.floats(0, 500, allow_nan=False))
    def keep_for(self, pick: int, ttl: float) -> None:
        live = self.live()
        if live:
            key = sorted(live)[pick % len(live)]
            self.pool.keep_for(key, ttl)
            self.model[key].expires = self.now + min(ttl, MAX_TTL)

    @rule(seconds=st.floats(0, 60, allow_nan=False))
    def time_passes(self, seconds: float) -> None:
        self.now += seconds

    @precondition(lambda self: hasattr(self, "pool"))
    @invariant()
    def shares_and_total_hold_and_each_caller_sees_only_its_own(self) -> None:
        live = self.live()
        total, per_caller, per_group = self.limits
        assert len(self.pool) == len(live) <= total
        for caller in CALLERS:
            held = [key for key, entry in live.items() if entry.caller == caller]
            assert self.pool.count(caller) == len(held) <= per_caller
            assert sum(e.caller.group == caller.group for e in live.values()) <= per_group
            listed = self.pool.mine(caller)
            assert listed == ([] if caller.anonymous else [(key, live[key].value) for key in reversed(held)])
            for key in held:  # nobody's add, read or pop ever took another caller's entry
                assert self.pool.get(caller, key) == live[key].value


def test_no_caller_exceeds_its_share_reads_or_evicts_anothers_and_entries_expire() -> None:
    run_state_machine_as_test(PoolMachine, settings=settings(max_examples=100, stateful_step_count=40, deadline=None))


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError):
        OwnedPool(total=0, per_caller=1, max_ttl=1)
    with pytest.raises(ValueError):
        OwnedPool(total=1, per_caller=1, max_ttl=0)
