"""Benchmarks, corpus report and wire conformance (Prism) for mcp-bridge.

``make bench`` (``python -m bench.run_all``) writes bench/RESULTS.md, ``make corpus``
(``python -m bench.corpus``) bench/CORPUS.md and ``python -m bench.prism`` bench/PRISM.md.
Scratch files go to bench/out/ (ignored by git).
"""
