"""mcp-bridge runtime: serve generated OpenAPI tool packages over MCP."""

import sys

# httpx 0.28 imports its command-line client (rich, pygments, click) from `httpx/__init__.py`
# whenever those are installed, and mcp-bridge installs rich and click for its own CLI: 3 MB of
# memory and tens of milliseconds of every server's start-up (encode/httpx#3547 moves that import
# to `httpx/__main__.py`). The bridge never runs httpx's CLI, so that import is skipped: httpx
# then defines `httpx.main` as its stub that explains the CLI is not available.
if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
