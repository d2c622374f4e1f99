"""The serving modes beyond one tool per operation: discovery (search), and code mode (programs in a sandbox)."""
