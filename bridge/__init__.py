"""mcp-bridge runtime: serve generated OpenAPI tool packages over MCP."""
