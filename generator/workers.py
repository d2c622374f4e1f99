"""One function call in a child process that never outlives the call, the parent, or Ctrl-C.

``concurrent.futures.ProcessPoolExecutor`` cannot stop a running task: after Ctrl-C or SIGTERM
its worker kept validating a big spec for a minute, and printed its own KeyboardInterrupt
traceback (the terminal sends SIGINT to the whole process group). Here the child ignores SIGINT
(the parent decides), dies with the parent on Linux (``PR_SET_PDEATHSIG``), and :meth:`stop`
terminates it, then kills it, within bounded waits.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, Generic, TypeVar

__all__ = ["Worker", "WorkerError"]

T = TypeVar("T")
STOP_WAIT = 2.0  # seconds for a terminated child to exit before it is killed
_PR_SET_PDEATHSIG = 1
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


class WorkerError(RuntimeError):
    """The child died without an answer, or its exception could not be sent back."""


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no prctl: stop() still ends the child
            pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _child(conn: Connection, parent: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a forked child inherits the CLI's handler
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    _die_with_parent(parent)
    try:
        answer: tuple[str, Any] = ("ok", fn(*args))
    except BaseException as exc:  # everything goes back to the parent, nothing is printed here
        answer = ("error", exc)
    try:
        conn.send(answer)
    except Exception as exc:  # an unpicklable result or exception
        conn.send(("error", WorkerError(f"{type(exc).__name__}: {exc}")))
    finally:
        conn.close()


class Worker(Generic[T]):
    """``fn(*args)`` running in a child process; :meth:`result` waits for it, :meth:`stop` ends it."""

    def __init__(self, fn: Callable[..., T], *args: Any) -> None:
        context = multiprocessing.get_context()
        self._conn, child_conn = context.Pipe(duplex=False)
        self._process = context.Process(target=_child, args=(child_conn, os.getpid(), fn, args), daemon=True)
        # Signals wait until the child has its own handlers (a forked child starts with the parent's).
        blocked = hasattr(signal, "pthread_sigmask")
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS) if blocked else set()
        try:
            self._process.start()
        finally:
            if blocked:
                signal.pthread_sigmask(signal.SIG_SETMASK, previous)
            child_conn.close()

    @property
    def pid(self) -> int | None:
        return self._process.pid

    def result(self) -> T:
        """The call's return value (its exception is raised here); the child is gone afterwards."""
        try:
            status, value = self._conn.recv()
        except EOFError:
            self.stop()
            raise WorkerError(f"worker process exited with code {self._process.exitcode}") from None
        except BaseException:  # Ctrl-C or SIGTERM while waiting: the child goes too
            self.stop()
            raise
        self.stop(grace=STOP_WAIT)
        if status == "error":
            raise value
        result: T = value
        return result

    def stop(self, *, grace: float = 0.0) -> None:
        """End the child (after ``grace`` seconds if still running) and reap it; safe to call twice."""
        process = self._process
        process.join(grace)
        if process.exitcode is None:
            process.terminate()
            process.join(STOP_WAIT)
        if process.exitcode is None:
            process.kill()
            process.join(STOP_WAIT)
        self._conn.close()
