"""Starting and stopping the helper daemons: free loopback ports, bounded waits, sure stops."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
START_TIMEOUT = 15.0
STOP_TIMEOUT = 5.0


def free_port() -> int:
    """A port on 127.0.0.1 that was free a moment ago (the caller retries when it is taken meanwhile)."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def port_accepts(port: int, host: str = HOST) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.2):
            return True
    except OSError:
        return False


class StartFailed(RuntimeError):
    """A daemon exited, or never became ready, while starting; ``port_taken`` says to retry elsewhere."""

    def __init__(self, message: str, *, port_taken: bool = False) -> None:
        super().__init__(message)
        self.port_taken = port_taken


def wait_ready(
    process: subprocess.Popen[Any],
    ready: Callable[[], bool],
    *,
    what: str,
    log: Path | None = None,
    timeout: float = START_TIMEOUT,
) -> None:
    """Poll ``ready()`` until it holds; fail when ``process`` exits or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while not ready():
        if process.poll() is not None:
            text = log.read_text(encoding="utf-8", errors="replace") if log is not None and log.exists() else ""
            taken = "address already in use" in text.lower()
            raise StartFailed(f"{what} exited with {process.returncode}: {text[-2000:]}", port_taken=taken)
        if time.monotonic() > deadline:
            stop(process)
            raise StartFailed(f"{what} not ready after {timeout:.0f} s")
        time.sleep(0.02)


def stop(process: subprocess.Popen[Any], first: int = signal.SIGTERM, timeout: float = STOP_TIMEOUT) -> int | None:
    """Signal ``process`` (``first``), wait up to ``timeout``, then kill it; its exit code."""
    if process.poll() is None:
        try:
            process.send_signal(first)
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=timeout)
    return process.returncode


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
