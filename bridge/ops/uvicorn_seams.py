"""Every use of uvicorn's private names: a drained stop exits 0 instead of re-raising the signal.

Checked on uvicorn 0.55.0 (``pyproject.toml`` asks for ``uvicorn>=0.30``).
``tests/ops/test_uvicorn_seams.py`` fails loudly when a release changes it: ``Server.handle_exit``
still records the signal in ``_captured_signals`` (a list), which ``capture_signals`` re-raises
after shutdown.

**``Server._captured_signals``**: uvicorn (since 0.29) re-raises the signal that stopped it once
shutdown is done, so a SIGTERM stop exits 143. After the drain of :mod:`bridge.ops.drain` every
request was answered, so the stop is a clean one: the recorded signal is forgotten and the process
exits 0 (orchestrators count 143 as a failure). No public way exists, and no upstream issue was
found; draft for encode/uvicorn: *"Let a Server subclass (or a config flag) choose not to re-raise
the captured signal after a graceful shutdown."*
"""

from __future__ import annotations

from typing import Any

__all__ = ["forget_captured_signals"]


def forget_captured_signals(server: Any) -> None:
    """uvicorn will not raise the signal that stopped ``server`` again after its shutdown."""
    server._captured_signals.clear()
