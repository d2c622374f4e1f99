"""The MCP server: tool handlers on the SDK's low-level ``Server``, MCP tasks, the stdio and HTTP transports.

This ``__init__`` is the public face of ``bridge.server`` (docs/library.md, "What you may import"):
:func:`build_server` serves a :class:`~bridge.tools.ToolRegistry` with the reference tool semantics.
"""

from bridge.server.handlers import build_server

__all__ = ["build_server"]
