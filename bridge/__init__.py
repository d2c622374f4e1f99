"""mcp-bridge runtime: serve generated OpenAPI tool packages over MCP.

Importing it changes nothing process-wide; the serve entry point's tuning is in ``bridge.serving.tuning``.
"""
