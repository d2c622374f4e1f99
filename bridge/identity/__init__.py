"""Who calls: MCP clients authenticated as an OAuth resource server, their scopes, per-user upstream tokens."""
