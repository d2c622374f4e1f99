"""The installed version of mcp-bridge: one lookup for the server's name, the User-Agent and packages."""

from __future__ import annotations

import functools
from importlib.metadata import PackageNotFoundError, version


@functools.cache
def bridge_version() -> str:
    try:
        return version("mcp-bridge")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"
