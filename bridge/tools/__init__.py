"""Tools without HTTP: the registry, argument and output validation, results, the runtime's errors.

This ``__init__`` is the public face of ``bridge.tools`` (docs/library.md, "What you may import"): the names
below keep working whatever moves inside the folder. It imports only the registry, which imports
only the errors, so importing it stays cheap.
"""

from bridge.tools.errors import ToolDefinitionError, ToolError
from bridge.tools.registry import (
    TOOL_NAME_PATTERN,
    ProgressReporter,
    RunFunction,
    Tool,
    ToolContext,
    ToolRegistry,
    check_tool_name,
)

__all__ = [
    "TOOL_NAME_PATTERN",
    "ProgressReporter",
    "RunFunction",
    "Tool",
    "ToolContext",
    "ToolDefinitionError",
    "ToolError",
    "ToolRegistry",
    "check_tool_name",
]
