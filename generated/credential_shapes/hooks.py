"""Your changes to this server: add, replace or remove tools. mcp-bridge never overwrites this file.

`register` runs once at start-up, after the generated tools are registered. Example:

    @registry.tool("ping", description="Check that the server is up.", replace=True)
    async def ping(args, ctx):
        return "pong"

`registry.remove("tool_name")` drops a generated tool; `registry.add(Tool(...), replace=True)` overrides one.
The arguments and results of the generated tools are typed in `api.pyi`, for a type checker only:

    from typing import TYPE_CHECKING
    if TYPE_CHECKING:
        from .api import GetPetInput  # <Tool>Input and <Tool>Output per tool (here for a tool getPet)
"""

from __future__ import annotations

from bridge.http_tools import HttpRuntime
from bridge.tools import ToolRegistry


def register(registry: ToolRegistry, runtime: HttpRuntime) -> None:
    return None
