"""A trim leaves the process's collector settings alone off the main thread, and restores them on it."""

from __future__ import annotations

import gc
import threading

from bridge.results.trim import TrimSettings, trim_result
from bridge.results.trim_walk import no_cyclic_gc


def _in_thread() -> list[bool]:
    seen: list[bool] = []

    def run() -> None:
        with no_cyclic_gc():
            seen.append(gc.isenabled())
            trim_result({"items": [{"a": "x" * 50}] * 500}, TrimSettings(max_bytes=2000))
            seen.append(gc.isenabled())

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=60)
    return seen


def test_a_trim_in_a_worker_thread_never_switches_the_collector_off() -> None:
    assert gc.isenabled()
    assert _in_thread() == [True, True]
    assert gc.isenabled()


def test_a_trim_on_the_main_thread_pauses_the_collector_and_puts_it_back_as_it_was() -> None:
    with no_cyclic_gc():
        assert not gc.isenabled()
        with no_cyclic_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # a nested pause does not switch it back on early
    assert gc.isenabled()
    gc.disable()
    try:
        with no_cyclic_gc():
            pass
        assert not gc.isenabled()  # a host that switched it off keeps it off
    finally:
        gc.enable()
