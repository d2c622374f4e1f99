"""The sandbox programs run in: pydantic-monty worker processes, started on first use.

A program is Python run by Monty (a Python interpreter in Rust) in a worker subprocess: no
filesystem, no network, no environment, no host modules; the only way out is the host functions
it is given (the API's operations, ``bridge.modes.codemode``). :class:`Sandbox` owns the worker pool:
it starts on the first program, not with the server, and :meth:`Sandbox.aclose` stops it (a pool
left to interpreter shutdown can abort the process). :meth:`Sandbox.run` checks the program
against stubs, then runs it with limits on wall time, memory, recursion and host calls.

Monty stops waiting for host coroutines when the feed is cancelled, but does not cancel them:
:class:`HostCalls` keeps the tasks of in-flight host calls so that a cancelled or finished
program leaves no HTTP request running.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio

from bridge.modes.program_result import Printed
from bridge.secrets.excerpt import excerpt
from bridge.tools.errors import ToolError

__all__ = ["HostCalls", "ProgramError", "Sandbox", "SandboxLimits"]

DEFAULT_WALL_SECONDS = 10.0
DEFAULT_MEMORY_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_CALLS = 50
DEFAULT_RECURSION = 200
MAX_DIAGNOSTIC_CHARS = 4000
SCRIPT_NAME = "program.py"


class ProgramError(ToolError):
    """The program did not finish: a type error, a syntax error, an exception, or a limit."""


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Per-program limits; every one is a ``serve`` flag."""

    wall_seconds: float = DEFAULT_WALL_SECONDS
    memory_bytes: int = DEFAULT_MEMORY_BYTES
    max_calls: int = DEFAULT_MAX_CALLS
    max_recursion: int = DEFAULT_RECURSION


class HostCalls:
    """The program's API calls: counted against the limit, their tasks kept for cancellation."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0
        self.over_limit = False
        self._tasks: set[asyncio.Task[Any]] = set()

    def admit(self) -> bool:
        """Count one call; False (and remembered) past the limit."""
        if self.count >= self.limit:
            self.over_limit = True
            return False
        self.count += 1
        return True

    async def track(self, call: Awaitable[Any]) -> Any:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            return await call
        finally:
            if task is not None:
                self._tasks.discard(task)

    async def cancel_all(self) -> None:
        """Cancel in-flight calls and wait (bounded) until their requests are closed."""
        tasks = [t for t in self._tasks if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await asyncio.wait(tasks)


_FEED = re.compile(r'"<python-input-(\d+)>"')


def _named_feeds(text: str) -> str:
    """A traceback with the session's feeds named: the program (feed 1) is ``program.py``, as
    type errors call it; the prelude (feed 0) is ``<prelude>``."""
    return _FEED.sub(lambda m: f'"{SCRIPT_NAME}"' if m.group(1) == "1" else '"<prelude>"', text)


def _clip(text: str, redact: Callable[[str], str]) -> str:
    """A diagnostic as shown: redacted whole, then cut (the server redacts the message again, but a
    secret cut in two here would no longer be recognised there)."""
    return excerpt(text.strip(), redact, MAX_DIAGNOSTIC_CHARS - len(_CUT), mark=_CUT)


_CUT = "\n[... cut]"


class Sandbox:
    """The worker pool, started by the first program and stopped by :meth:`aclose`."""

    def __init__(self, limits: SandboxLimits | None = None, *, max_workers: int | None = None) -> None:
        # Found now, imported by the first program: a slim install without it stops serve with one
        # line (bridge/cli/extras.py), not at the first program.
        if importlib.util.find_spec("pydantic_monty") is None:
            raise ModuleNotFoundError("No module named 'pydantic_monty'", name="pydantic_monty")
        self.limits = limits or SandboxLimits()
        self._max_workers = max_workers
        self._pool: Any = None
        self._lock = anyio.Lock()

    @property
    def started(self) -> bool:
        return self._pool is not None

    async def _ensure_pool(self) -> Any:
        async with self._lock:
            if self._pool is None:
                import pydantic_monty

                pool = pydantic_monty.AsyncMonty(min_processes=0, max_processes=self._max_workers)
                await pool.__aenter__()
                self._pool = pool
            return self._pool

    async def aclose(self) -> None:
        async with self._lock:
            pool, self._pool = self._pool, None
            if pool is not None:
                with anyio.CancelScope(shield=True):
                    await pool.__aexit__(None, None, None)

    def _resource_limits(self, calls: int) -> dict[str, Any]:
        limits = self.limits
        return {
            "max_feed_duration_secs": limits.wall_seconds,
            "max_memory": limits.memory_bytes,
            "max_recursion_depth": limits.max_recursion,
            # Host calls, name lookups and future resolutions: room for every allowed call (the
            # exact call limit is HostCalls'), so that a program looping on refused calls stops.
            "max_suspensions": 4 * calls + 100,
            "max_total_sleep_secs": limits.wall_seconds,
        }

    async def run(
        self,
        code: str,
        *,
        stubs: str,
        prelude: str,
        functions: Mapping[str, Callable[..., Awaitable[Any]]],
        calls: HostCalls,
        redact: Callable[[str], str] = str,
    ) -> tuple[Any, Printed]:
        """The value of the program's last expression and what it printed. Raises :class:`ProgramError`
        (its diagnostic redacted with ``redact`` before it is cut)."""
        import pydantic_monty as monty

        pool = await self._ensure_pool()
        deadline = self.limits.wall_seconds
        try:
            with anyio.fail_after(deadline if math.isfinite(deadline) and deadline > 0 else None):
                async with pool.checkout(
                    script_name=SCRIPT_NAME,
                    limits=self._resource_limits(calls.limit),
                    type_check=True,
                    type_check_stubs=stubs,
                    os_policy={"sleep": "system", "sleep_system_max": self.limits.wall_seconds},
                ) as session:
                    await session.feed_run(prelude, skip_type_check=True)
                    printed = Printed()  # bounded, never an error (monty's collector fails the program)
                    value = await session.feed_run(code, external_lookup=dict(functions), print_callback=printed)
                    return value, printed
        except TimeoutError:
            raise ProgramError(f"The program ran longer than {deadline:g} s and was stopped.") from None
        except monty.MontyTypingError as exc:
            if "[invalid-syntax]" in exc.display():  # the checker parses first
                raise ProgramError("The program is not valid Python:\n" + _clip(exc.display(), redact)) from None
            raise ProgramError(
                "The program does not type-check (no API call was made):\n" + _clip(exc.display(), redact)
            ) from None
        except monty.MontySyntaxError as exc:
            raise ProgramError("The program is not valid Python:\n" + _clip(exc.display(), redact)) from None
        except monty.MontyRuntimeError as exc:
            raise ProgramError("The program failed:\n" + _clip(_named_feeds(exc.display()), redact)) from None
        except monty.MontyCrashedError as exc:
            reason = "ran out of time" if exc.timed_out else "crashed"
            raise ProgramError(f"The program's worker {reason} and was stopped.") from None
        except monty.MontyError as exc:
            raise ProgramError(f"The program could not be run ({type(exc).__name__}).") from None
        finally:
            await calls.cancel_all()
