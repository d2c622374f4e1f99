"""Small languages over JSON values both halves evaluate: pointers, JSONPath, patterns, runtime expressions."""
