"""A big tool list answered again and again over stdio does not grow the server (Linux, glibc).

Before the mmap threshold was pinned (bridge/serving/tuning.py), every tools/list of GitHub's spec left
about 3 MB behind (97 -> 118 MB over ten answers). The growth depends on the heap's layout, which a
small synthetic spec does not reproduce, so the test serves GitHub's own package.
"""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.node_tools import github_spec

pytestmark = [
    pytest.mark.corpus,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and needs glibc"),
]

LISTS = 10
ALLOWED_GROWTH_KB = 4 * 1024  # about one answer's worth; the unpinned server grew by 14-21 MB


def vm_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


class LineClient:
    """Newline-delimited JSON-RPC over a subprocess's pipes (the pid is needed, so no SDK client)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], int]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            assert line, "the server closed stdout"
            answer = json.loads(line)
            if answer.get("id") == self.next_id:
                assert "result" in answer, answer
                return answer["result"], len(line)


def test_repeated_big_tools_lists_do_not_grow_the_server(tmp_path: Path) -> None:
    if not hasattr(ctypes.CDLL(None), "mallopt"):
        pytest.skip("no glibc mallopt here")
    package = tmp_path / "github"
    subprocess.run(
        [sys.executable, "-m", "bridge", "generate", str(github_spec()), "-o", str(package)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "bridge", "serve", str(package)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        client = LineClient(proc)
        client.request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
        )
        assert proc.stdin is not None
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        proc.stdin.flush()
        for _ in range(2):
            result, size = client.request("tools/list", {})
        assert len(result["tools"]) > 1000 and size > 1024 * 1024
        settled = vm_rss_kb(proc.pid)
        for _ in range(LISTS):
            client.request("tools/list", {})
        grown = vm_rss_kb(proc.pid) - settled
        assert grown <= ALLOWED_GROWTH_KB, f"RSS grew by {grown} KB over {LISTS} tools/list answers of {size} bytes"
    finally:
        proc.kill()
        proc.wait(timeout=10)
