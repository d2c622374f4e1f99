"""``make test-loaded``'s runner: the command's exit status is the target's, and no hog outlives it."""

from __future__ import annotations

import multiprocessing
import sys

from tests.services.hogs import run_beside_hogs


def test_the_commands_exit_status_is_kept_and_every_hog_is_stopped() -> None:
    code = run_beside_hogs([sys.executable, "-c", "import sys; sys.exit(3)"], 2)
    assert code == 3
    assert [p for p in multiprocessing.active_children() if p.name.startswith("hog-")] == []


def test_a_passing_command_passes() -> None:
    assert run_beside_hogs([sys.executable, "-c", "pass"], 1) == 0
