"""Arazzo workflows served as tools: runtime expressions and conditions (contract modules shared with
the generator), and the runtime that runs a workflow's steps through the operation-call core
(:mod:`bridge.workflows.runner`, :mod:`bridge.workflows.tools`)."""
