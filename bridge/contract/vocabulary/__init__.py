"""Words the two halves agree on: the verbs operations are named with (verbs.py)."""
