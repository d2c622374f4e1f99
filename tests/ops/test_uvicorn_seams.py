"""uvicorn still records the stopping signal in ``Server._captured_signals``, which bridge.ops.uvicorn_seams clears."""

from __future__ import annotations

import signal

import uvicorn

from bridge.ops.uvicorn_seams import forget_captured_signals


def test_handle_exit_records_the_signal_where_the_seam_forgets_it() -> None:
    server = uvicorn.Server(uvicorn.Config(app=lambda *a: None))
    assert server._captured_signals == []
    server.handle_exit(signal.SIGTERM, None)
    assert server._captured_signals == [signal.SIGTERM]
    forget_captured_signals(server)
    assert server._captured_signals == []
