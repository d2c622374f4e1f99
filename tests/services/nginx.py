"""A real nginx (Debian's) on a free loopback port in front of bridge workers, for one test or bench run.

:func:`running_nginx` writes a whole ``nginx.conf`` into a temporary prefix (pid file, logs,
temp paths: nothing under /var or /etc is touched) around the ``http`` block it is given, starts
``nginx -g 'daemon off;'`` and waits until its port accepts; on the way out it stops it
gracefully (SIGQUIT), then surely. :func:`bridge_http_block` is the block the deployment
page (docs/deployment.md) documents, with this run's ports filled in: the block is read from
the page itself, so what is documented is what is tested.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.services.install import ensure_services
from tests.services.processes import HOST, StartFailed, free_port, port_accepts, stop, wait_ready

ROOT = Path(__file__).resolve().parents[2]
DEPLOYMENT = ROOT / "docs" / "deployment.md"
# The deployment page's nginx snippet sits between these two lines (HTML comments, invisible when rendered).
SNIPPET_START = "<!-- nginx-snippet:start -->"
SNIPPET_END = "<!-- nginx-snippet:end -->"


@dataclass
class Nginx:
    port: int
    prefix: Path
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def error_log(self) -> str:
        path = self.prefix / "error.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def reload(self, http_block: str) -> None:
        """Replace the ``http`` block and reload (SIGHUP): old workers finish their requests."""
        _write_conf(self.prefix, self.port, http_block)
        self.process.send_signal(signal.SIGHUP)


def documented_snippet() -> str:
    """The nginx configuration of docs/deployment.md (the fenced block between the markers)."""
    text = DEPLOYMENT.read_text(encoding="utf-8")
    start, end = text.find(SNIPPET_START), text.find(SNIPPET_END)
    if start < 0 or end < start:
        raise AssertionError(f"docs/deployment.md has no nginx snippet between {SNIPPET_START} and {SNIPPET_END}")
    block = re.search(r"```nginx\n(.*?)```", text[start:end], re.S)
    if block is None:
        raise AssertionError("docs/deployment.md: the nginx snippet is not a ```nginx fenced block")
    return block.group(1)


def bridge_http_block(worker_ports: Sequence[int], *, routes: Sequence[str] | None = None) -> str:
    """The documented snippet for these workers: one ``server`` line per worker in the shared pool,
    one pinned pool and one ``map`` line per worker route (``w0``, ``w1``, ... by default)."""
    routes = list(routes) if routes is not None else [f"w{i}" for i in range(len(worker_ports))]
    snippet = documented_snippet()
    lines: list[str] = []
    for line in snippet.splitlines():
        if "# per worker" not in line:
            lines.append(line)
            continue
        template = line.split("# per worker")[0].rstrip()
        for route, port in zip(routes, worker_ports, strict=True):
            lines.append(template.replace("8001", str(port)).replace("w0", route))
    return "\n".join(lines).replace("listen 8080;", "listen {listen};")


def _write_conf(prefix: Path, port: int, http_block: str, *, workers: int = 1) -> Path:
    for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (prefix / sub).mkdir(exist_ok=True)
    user = "user root;\n" if os.geteuid() == 0 else ""  # workers keep access to the temporary prefix
    temp = "".join(
        f"    {sub}_temp_path {prefix / sub};\n" for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    conf = (
        f"{user}worker_processes {workers};\npid {prefix / 'nginx.pid'};\nerror_log {prefix / 'error.log'} warn;\n"
        "events { worker_connections 4096; }\n"
        f"http {{\n    access_log off;\n{temp}" + http_block.replace("{listen}", f"{HOST}:{port}") + "\n}\n"
    )
    path = prefix / "nginx.conf"
    path.write_text(conf, encoding="utf-8")
    return path


def check_config(http_block: str) -> str:
    """``nginx -t`` on a whole configuration around ``http_block``; its output (raises when invalid)."""
    binary = ensure_services()["nginx"]
    with tempfile.TemporaryDirectory(prefix="mcp-bridge-nginx-") as folder:
        prefix = Path(folder)
        conf = _write_conf(prefix, free_port(), http_block)
        result = subprocess.run(
            [str(binary), "-t", "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if result.returncode != 0:
            raise AssertionError(f"nginx -t failed: {result.stderr}")
        return result.stderr


@contextmanager
def running_nginx(http_block: str, *, workers: int = 1) -> Iterator[Nginx]:
    """nginx with ``http_block`` (``{listen}`` becomes this run's address) on a free loopback port."""
    binary = ensure_services()["nginx"]
    with tempfile.TemporaryDirectory(prefix="mcp-bridge-nginx-") as folder:
        prefix = Path(folder)
        nginx: Nginx | None = None
        for _attempt in range(3):
            port = free_port()
            conf = _write_conf(prefix, port, http_block, workers=workers)
            args = [
                str(binary),
                "-p",
                str(prefix),
                "-c",
                str(conf),
                "-e",
                str(prefix / "error.log"),
                "-g",
                "daemon off;",
            ]
            log = prefix / "start.log"
            with log.open("wb") as out:
                process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
            try:
                wait_ready(process, lambda port=port: port_accepts(port), what="nginx", log=prefix / "error.log")
            except StartFailed as exc:
                if exc.port_taken:
                    continue
                raise
            nginx = Nginx(port, prefix, process)
            break
        if nginx is None:
            raise StartFailed("nginx: no free port after 3 attempts")
        try:
            yield nginx
        finally:
            stop(nginx.process, first=signal.SIGQUIT)
