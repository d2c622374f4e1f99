"""From an upstream answer to what the model sees: status errors, output checks, trimming."""
