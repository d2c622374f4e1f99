"""httpx imports its CLI from ``httpx._main`` unless bridge.serving.httpx_seams blocks it, and works without it."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
{block}
import httpx
print("httpx._main" in sys.modules and sys.modules["httpx._main"] is not None, httpx.Client is not None)
"""


def _run(block: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(block=block)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_httpx_imports_its_cli_module_by_that_name_unless_it_is_blocked() -> None:
    assert _run("") == "True True"  # rich and click are installed: httpx 0.28 imports httpx._main
    assert _run("from bridge.serving.httpx_seams import skip_httpx_cli; assert skip_httpx_cli()") == "False True"
