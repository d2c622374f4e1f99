"""mcp-bridge generator: OpenAPI document -> reviewable MCP server package."""
