"""What the operator configures and the model never sees: credentials, bound values, TLS material, and redaction."""
