"""mcp-bridge runtime: serve generated OpenAPI tool packages over MCP.

The public face is ``bridge.tools``, ``bridge.server``, ``bridge.content``, ``bridge.credentials``,
``bridge.http_tools``, ``bridge.transports`` and ``bridge.cli`` (docs/library.md, "What you may import");
everything else is internal. This ``__init__`` imports nothing: the generator imports
``bridge.contract`` through it.
Importing it changes nothing process-wide; the serve entry point's tuning is in ``bridge.serving.tuning``.
"""
