"""Production operations: health, graceful drain, logs, traces, metrics, shared limits and workers (all opt-in)."""
