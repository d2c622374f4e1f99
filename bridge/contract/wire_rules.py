"""Wire facts both halves share: headers that are never tool arguments nor request parameters.

Part of the contract between the generator and the runtime (it imports neither httpx nor the
generator): the generator leaves these headers out of input schemas, the runtime never sends them
from arguments and refuses any prepared request that carries a framing header.
"""

from __future__ import annotations

import re

FRAMING_HEADERS: frozenset[str] = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "te",
        "trailer",
        "connection",
        "keep-alive",
        "proxy-connection",
        "upgrade",
        "expect",
        "forwarded",
        "via",
        "x-real-ip",
    }
)
"""Headers no prepared request may carry at all (httpx sets framing itself); ``X-Forwarded-*`` too.

Unlike :data:`FORBIDDEN_HEADERS` this leaves out ``Authorization``/``Cookie``/``Accept``/
``Content-Type``, which the bridge itself adds (credentials, cookies, content negotiation).
"""

FORBIDDEN_HEADERS: frozenset[str] = FRAMING_HEADERS | {
    "authorization",
    "proxy-authorization",
    "proxy-authenticate",
    "cookie",
    "content-type",
    "accept",
    "accept-encoding",
}
"""Header parameters never sent from arguments (lower case): the framing headers and those the
bridge sets itself; ``X-Forwarded-*`` too."""

DEFAULT_ACCEPT = "application/json, */*;q=0.5"

HEADER_SAFE = re.compile(r"[\x21-\x7e]+(?:[ \t]+[\x21-\x7e]+)*")
"""A value that can be sent as a header value: visible ASCII, inner spaces or tabs, no line breaks."""
