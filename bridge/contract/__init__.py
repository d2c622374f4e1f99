"""The contract: what the generator writes and the runtime reads, and the rules both apply.

It imports nothing else of the bridge, and neither httpx nor the generator (tests/test_layering.py).
"""
