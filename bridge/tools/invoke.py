"""Calling a registered tool: validate, run, map the value to a ``CallToolResult``.

The server's ``tools/call`` handler and discovery's ``call_operation`` both go through here, so a
tool behaves the same whichever way the model reaches it. Errors are raised, not mapped: each
surface decides how an error reaches its caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types

from bridge.tools.content import to_call_result
from bridge.tools.registry import Tool, ToolContext, run_tool
from bridge.tools.validation import ArgumentValidator


async def invoke(
    tool: Tool, validator: ArgumentValidator, arguments: Mapping[str, Any] | None, ctx: ToolContext
) -> mcp_types.CallToolResult:
    args = validator.validate(tool.name, arguments, apply_defaults=tool.apply_defaults)
    value = await run_tool(tool, args, ctx)  # a hand-written tool's error message stays its own
    return to_call_result(
        value, output_schema=tool.output_schema, tool_name=tool.name, structured_verified=tool.checks_own_output
    )
