"""A server assembled from a package or a spec: runtime, registry, MCP server, start-up lines, process tuning."""
