"""How a credential is spelled in an HTTP header value, shared by API requests and token requests."""

from __future__ import annotations

import base64
import re

__all__ = ["HEADER_SAFE", "basic_authorization"]

HEADER_SAFE = re.compile(r"[\x21-\x7e]+(?:[ \t]+[\x21-\x7e]+)*")
"""A value that can be sent as a header value: visible ASCII, inner spaces or tabs, no line breaks."""


def basic_authorization(user: str, password: str) -> str:
    """The ``Authorization`` value of HTTP basic authentication."""
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
