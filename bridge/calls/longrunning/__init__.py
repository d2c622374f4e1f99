"""Long-running operations: 202 and a status URL, followed to the end (light: the CLI imports its defaults).

:mod:`.status` reads a status answer, :mod:`.follow` polls, :mod:`.tracker` keeps what is still
running, :mod:`.status_tool` and :mod:`.pending` are what the model sees. A cancel link is
evaluated by :mod:`bridge.contract.expressions.links`; MCP tasks are served by :mod:`bridge.server.tasks`.
"""

DEFAULT_WAIT = 30.0
"""Seconds a call without MCP tasks waits for its operation before answering with a handle."""
DEFAULT_DEADLINE = 900.0
"""Seconds the bridge follows one operation at most."""
