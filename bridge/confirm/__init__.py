"""Confirmed writes (``serve --confirm``): ask the user, by elicitation, before a covered call is sent.

:mod:`.policy` says which calls (and is light enough for the CLI to import), :mod:`.form` what the
user sees, :mod:`.asking` how they are asked, :mod:`.rounds` what a 2026-07-28 input round keeps so
that its retry resumes. The call core decides, for every surface, in ``bridge/calls/gate.py``.
"""
