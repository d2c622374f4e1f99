"""Public face (docs/library.md, "What you may import"): the ASGI app of streamable HTTP, for uvicorn or gunicorn.

The code lives in :mod:`bridge.server.transports`; this path stays.
"""

from bridge.server.transports import http_app, run_http

__all__ = ["http_app", "run_http"]
