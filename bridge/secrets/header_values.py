"""How a credential is spelled in an HTTP header value, shared by API requests and token requests."""

from __future__ import annotations

import base64

from bridge.contract.wire_rules import HEADER_SAFE  # the contract's rule, shared with the generator

__all__ = ["HEADER_SAFE", "basic_authorization"]


def basic_authorization(user: str, password: str) -> str:
    """The ``Authorization`` value of HTTP basic authentication."""
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
