"""A worker process answers once, raises what the call raised, and never outlives its parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from generator.workers import Worker, WorkerError
from tests.generator.test_generate_signals import _alive, _poll

ROOT = Path(__file__).resolve().parents[2]
WAIT = 10.0


def _block_forever() -> None:
    threading.Event().wait(3600)


def _fail() -> None:
    raise ValueError("from the child")


def _exit_hard() -> None:
    os._exit(3)


def _unpicklable() -> object:
    return threading.Lock()


def test_the_result_comes_back_and_the_child_is_reaped() -> None:
    worker = Worker(sorted, [3, 1, 2])
    assert worker.result() == [1, 2, 3]
    assert worker.pid is not None and not _alive(worker.pid)


@pytest.mark.parametrize(("fn", "error"), [(_fail, ValueError), (_exit_hard, WorkerError), (_unpicklable, WorkerError)])
def test_a_failing_call_raises_in_the_parent(fn: object, error: type[Exception]) -> None:
    worker = Worker(fn)  # type: ignore[arg-type]
    with pytest.raises(error):
        worker.result()


def test_stop_ends_a_busy_child_within_the_bound() -> None:
    worker = Worker(_block_forever)
    started = time.monotonic()
    worker.stop()
    assert time.monotonic() - started < WAIT
    assert worker.pid is not None and not _alive(worker.pid)


def test_a_sigint_to_the_child_is_ignored() -> None:
    worker = Worker(_block_forever)
    assert worker.pid is not None
    os.kill(worker.pid, signal.SIGINT)
    try:
        assert not _poll(lambda: not _alive(worker.pid), 0.5)  # type: ignore[arg-type]
    finally:
        worker.stop()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_child_dies_when_the_parent_is_killed_outright() -> None:
    script = (
        "import sys\n"
        "from generator.workers import Worker\n"
        "from tests.generator.test_workers import _block_forever\n"
        "w = Worker(_block_forever)\n"
        "print(w.pid, flush=True)\n"
        "sys.stdin.read()\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        parent.kill()  # SIGKILL: no handler, no cleanup in the parent
        parent.wait(timeout=WAIT)
        assert _poll(lambda: not _alive(child), WAIT)
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
