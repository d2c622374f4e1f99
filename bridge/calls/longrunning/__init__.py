"""Long-running operations: 202 and a status URL, followed to the end (light: the CLI imports its defaults).

:mod:`.status` reads a status answer, :mod:`.follow` polls, :mod:`.tracker` keeps what is still
running, :mod:`.links` evaluates a cancel link, :mod:`.status_tool` and :mod:`.pending` are what
the model sees, :mod:`.tasks` serves MCP tasks.
"""

DEFAULT_WAIT = 30.0
"""Seconds a call without MCP tasks waits for its operation before answering with a handle."""
DEFAULT_DEADLINE = 900.0
"""Seconds the bridge follows one operation at most."""
