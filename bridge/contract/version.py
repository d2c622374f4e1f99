"""The installed version of mcp-bridge: one lookup for the server's name, the User-Agent and packages."""

from __future__ import annotations

import functools
from importlib.metadata import PackageNotFoundError, version

# The distribution's name on the package index. "mcp-bridge" there is another project (an OpenAI-compatible
# middleware), so every install instruction, extras hint and generated requirements file names this one;
# the command it installs is still `mcp-bridge`.
DISTRIBUTION = "mcp-openapi-bridge"


def install_hint(extra: str | None = None) -> str:
    """``pip install 'mcp-openapi-bridge[extra]'``, the one spelling every message uses."""
    return f"pip install '{DISTRIBUTION}[{extra}]'" if extra else f"pip install {DISTRIBUTION}"


@functools.cache
def bridge_version() -> str:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"
