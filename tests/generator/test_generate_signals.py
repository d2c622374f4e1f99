"""Ctrl-C or SIGTERM during a big `generate`: a quick exit, one line, and no process left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator.generate import PARALLEL_VALIDATION_BYTES

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 60.0  # interpreter start and imports on a loaded machine
EXIT_TIMEOUT = 10.0  # the worker alone needed over a minute before

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads children from /proc")


def _big_spec(path: Path) -> None:
    """A spec over the size that validates in a second process."""
    paths = {}
    for i in range(400):
        props = {f"field_{j}": {"type": "string", "description": f"Field {j} of resource {i}."} for j in range(12)}
        schema = {"type": "object", "properties": props}
        paths[f"/r{i}"] = {
            "post": {
                "operationId": f"op{i}",
                "requestBody": {"content": {"application/json": {"schema": schema}}},
                "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}},
            }
        }
    doc = {"openapi": "3.0.3", "info": {"title": "Big", "version": "1"}, "paths": paths}
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    assert path.stat().st_size > PARALLEL_VALIDATION_BYTES


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _poll(condition: object, timeout: float) -> bool:
    # Bounded polling of /proc: the kernel offers no event for "a child appeared".
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("how", ["sigterm_to_the_parent", "ctrl_c_to_the_group"])
def test_a_signal_stops_generate_and_its_worker_quickly_with_one_line(tmp_path: Path, how: str) -> None:
    spec = tmp_path / "big.json"
    _big_spec(spec)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    err_path = tmp_path / "stderr.txt"
    workers: list[int] = []
    # Files, not pipes: a surviving worker would hold a pipe open and hang the test.
    with open(err_path, "w") as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bridge", "generate", str(spec), "-o", str(tmp_path / "out")],
            stdout=subprocess.DEVNULL,
            stderr=err_file,
            env=env,
            cwd=ROOT,
            start_new_session=True,
        )
    try:
        assert _poll(lambda: _children(proc.pid), START_TIMEOUT), "the validation worker never started"
        workers = _children(proc.pid)
        started = time.monotonic()
        if how == "sigterm_to_the_parent":
            proc.send_signal(signal.SIGTERM)
        else:
            os.killpg(proc.pid, signal.SIGINT)  # what a terminal does on Ctrl-C
        proc.wait(timeout=EXIT_TIMEOUT)
        elapsed = time.monotonic() - started
        survivors_gone = _poll(lambda: not any(_alive(pid) for pid in workers), EXIT_TIMEOUT)
    finally:
        for pid in [proc.pid, *workers]:  # only the processes this test started
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=EXIT_TIMEOUT)
    err = err_path.read_text()
    assert proc.returncode == 128 + (signal.SIGTERM if how == "sigterm_to_the_parent" else signal.SIGINT)
    assert elapsed < EXIT_TIMEOUT
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert survivors_gone, "a worker outlived generate"
    assert not (tmp_path / "out").exists()
