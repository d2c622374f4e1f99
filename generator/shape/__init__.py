"""Stage 3, shape: what each tool shows the model, computed from the intermediate model."""
