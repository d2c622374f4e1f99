"""What MCP clients are given: their server entry for a package, and the check that no placeholder is in it."""
