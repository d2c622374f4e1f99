"""Every use of httpx's private names: keeping its command-line client out of a server's import.

Checked on httpx 0.28.1 (pinned ``>=0.28,<0.29``). ``tests/bridge/serving/test_httpx_seams.py`` fails
loudly when a release changes it: in a fresh interpreter with the CLI's dependencies installed,
``import httpx`` imports ``httpx._main`` unless it is blocked here, and httpx still imports
without it.

**``httpx._main``**: httpx 0.28 imports its CLI (rich, pygments, click) from ``httpx/__init__.py``
whenever those are installed, and mcp-bridge installs rich and click for its own CLI: 3 MB of
memory and tens of milliseconds of every server's start-up. Upstream: encode/httpx#3547 moves that
import to ``httpx/__main__.py``; once a release with it is pinned, :func:`skip_httpx_cli` can go.
A server never runs httpx's CLI; httpx then defines ``httpx.main`` as its stub that explains the
CLI is not available.
"""

from __future__ import annotations

import sys

__all__ = ["HTTPX_CLI_MODULE", "skip_httpx_cli"]

HTTPX_CLI_MODULE = "httpx._main"
"""The private module of httpx's command-line client."""


def skip_httpx_cli() -> bool:
    """Keep httpx from importing its command-line client; False when httpx is already imported."""
    if "httpx" in sys.modules:
        return False
    sys.modules.setdefault(HTTPX_CLI_MODULE, None)  # type: ignore[arg-type]
    return True
