"""Arazzo workflows served as tools: the runtime that runs a workflow's steps through the operation-call core.

:mod:`.evaluate` evaluates expressions and criteria against a run, :mod:`.runner` runs the steps,
:mod:`.tools` makes one tool per workflow. Parsing expressions and conditions is contract, shared
with the generator (:mod:`bridge.contract.expressions.arazzo`, :mod:`bridge.contract.expressions.conditions`).
"""
