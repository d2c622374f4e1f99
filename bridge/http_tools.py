"""Public face (docs/library.md, "What you may import"): generated ``hooks.py`` files import ``HttpRuntime`` from here.

The code lives in :mod:`bridge.calls.http_tools` and :mod:`bridge.calls.runtime`; this path stays.
"""

from bridge.calls.http_tools import make_http_tool, tools_from_catalogue
from bridge.calls.runtime import HttpRuntime
from bridge.upstream.http_settings import HttpSettings

__all__ = ["HttpRuntime", "HttpSettings", "make_http_tool", "tools_from_catalogue"]
