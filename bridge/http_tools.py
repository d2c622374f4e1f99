"""Public face (README "What you may import"): generated ``hooks.py`` files import ``HttpRuntime`` from here.

The code lives in :mod:`bridge.calls.http_tools` and :mod:`bridge.calls.runtime`; this path stays.
"""

from bridge.calls.http_tools import HttpRuntime, HttpSettings, make_http_tool, tools_from_catalogue

__all__ = ["HttpRuntime", "HttpSettings", "make_http_tool", "tools_from_catalogue"]
