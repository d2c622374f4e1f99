"""``--workers N``: a supervisor and N worker processes, worker i on ``--port`` + i.

Each worker is this same command again (``sys.orig_argv``) with ``--port`` and a hidden
``--worker-index``, which gives its session ids the route ``w<i>.``. The supervisor restarts a
worker that dies (a worker that fails before it was ever ready stops them all: a configuration
error, not a crash), drains them all on SIGTERM/SIGINT and exits 0, and on SIGHUP restarts them
one at a time, each new one ready before the next stops (a rolling restart). With Prometheus on,
workers write to a shared multiprocess directory and the supervisor serves the one scrape.
"""

from __future__ import annotations

import http.client
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from types import FrameType

from bridge.ops.settings import OpsSettings
from bridge.server.transports import HostOriginPolicy

logger = logging.getLogger("bridge")

READY_TIMEOUT = 60.0  # seconds a new worker may take to load its catalogue
POLL = 0.1
RESTART_PAUSE = 0.5  # between a crash and the restart, so a crash loop does not spin


def _die_with_parent() -> None:
    """In the worker, before it runs: SIGTERM (a drain) when the supervisor dies, even by SIGKILL (Linux)."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _ready(host: str, port: int) -> bool:
    connection = http.client.HTTPConnection("127.0.0.1" if host in ("", "0.0.0.0", "::") else host, port, timeout=1.0)
    try:
        connection.request("GET", "/readyz")
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


class Supervisor:
    def __init__(self, settings: OpsSettings, *, host: str, port: int, guard: HostOriginPolicy) -> None:
        self.settings = settings
        self.guard = guard  # the workers' Host/Origin policy, for the metrics port
        self.host = host
        self.port = port
        self.count = settings.workers
        self.argv = [sys.executable, *sys.orig_argv[1:]]
        self.env = dict(os.environ)
        self.multiproc_dir: str | None = None
        if settings.prometheus:
            self.multiproc_dir = tempfile.mkdtemp(prefix="mcp-bridge-metrics-")
            self.env["PROMETHEUS_MULTIPROC_DIR"] = self.multiproc_dir
        self.children: list[subprocess.Popen[bytes] | None] = [None] * self.count
        self.ever_ready = [False] * self.count
        self.stopping = False
        self.rolling = False

    def start(self, index: int) -> None:
        argv = [*self.argv, "--port", str(self.port + index), "--workers", "1", "--worker-index", str(index)]
        self.children[index] = subprocess.Popen(argv, env=self.env, preexec_fn=_die_with_parent)

    def stop(self, index: int) -> int | None:
        child = self.children[index]
        if child is None:
            return None
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(self.settings.drain_timeout + 10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait(10)
        self._dead(child)
        return child.returncode

    def _dead(self, child: subprocess.Popen[bytes]) -> None:
        if self.multiproc_dir is not None:
            from prometheus_client import multiprocess

            multiprocess.mark_process_dead(child.pid, self.multiproc_dir)  # type: ignore[no-untyped-call]

    def wait_ready(self, index: int) -> bool:
        deadline = time.monotonic() + READY_TIMEOUT
        child = self.children[index]
        while time.monotonic() < deadline and child is not None and child.poll() is None:
            if _ready(self.host, self.port + index):
                self.ever_ready[index] = True
                return True
            time.sleep(POLL)
        return False

    def _on_signal(self, sig: int, frame: FrameType | None) -> None:
        if sig == signal.SIGHUP:
            self.rolling = True
        else:
            self.stopping = True

    def roll(self) -> None:
        logger.info("SIGHUP: restarting %d workers one at a time", self.count)
        for index in range(self.count):
            if self.stopping:
                return
            self.stop(index)
            self.start(index)
            if not self.wait_ready(index):
                logger.error("worker %d did not become ready after the restart", index)

    def run(self) -> int:
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
        try:
            for index in range(self.count):
                self.start(index)
            if self.settings.metrics_port is not None and self.multiproc_dir is not None:
                from prometheus_client import CollectorRegistry
                from prometheus_client.multiprocess import MultiProcessCollector

                from bridge.ops.health import serve_metrics

                registry = CollectorRegistry()
                MultiProcessCollector(registry, path=self.multiproc_dir)  # type: ignore[no-untyped-call]
                serve_metrics(self.settings.metrics_port, self.host, registry, self.guard)
            for index in range(self.count):
                self.wait_ready(index)
            logger.info("%d workers on ports %d-%d", self.count, self.port, self.port + self.count - 1)
            while not self.stopping:
                if self.rolling:
                    self.rolling = False
                    self.roll()
                for index, child in enumerate(self.children):
                    if child is None or child.poll() is None or self.stopping:
                        continue
                    self._dead(child)
                    if not self.ever_ready[index]:
                        logger.error(
                            "worker %d stopped before it was ready (exit %s); stopping", index, child.returncode
                        )
                        self.stopping = True
                        return child.returncode or 1
                    logger.warning("worker %d exited (%s); starting it again", index, child.returncode)
                    time.sleep(RESTART_PAUSE)
                    self.start(index)
                time.sleep(POLL)
            return 0
        finally:
            for index in range(self.count):
                self.stop(index)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            if self.multiproc_dir is not None:
                shutil.rmtree(self.multiproc_dir, ignore_errors=True)


def supervise(settings: OpsSettings, *, host: str, port: int, guard: HostOriginPolicy) -> int:
    """Run ``settings.workers`` workers until SIGTERM; the exit status."""
    return Supervisor(settings, host=host, port=port, guard=guard).run()
