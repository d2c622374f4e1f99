"""The installed version of mcp-bridge."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def bridge_version() -> str:
    try:
        return version("mcp-bridge")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"
