"""The operation-call core: one path from arguments to an upstream answer, the HTTP tools, long-running operations."""
