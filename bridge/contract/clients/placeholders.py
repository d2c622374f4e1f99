"""Text a person meant to replace: ``mcp-bridge install`` refuses it as a credential or a base URL.

A README snippet's ``<value>`` left in a client's file was sent as the real key; a value that
looks like one is never written. Only whole values match: a real token never is ``YOUR_KEY``.
"""

from __future__ import annotations

import re

_PLACEHOLDER = re.compile(
    r"""
    <[^<>]*>                                   # <value>, <api key>, <set me: ...>
    | \$\{[^}]*\} | \{\{[^}]*\}\}               # ${TOKEN}, {{token}}
    | (your|my|insert|enter|put|add)[\s_-].*   # YOUR_KEY, your-token-here, insert key
    | (change|replace|set|fill)[\s_-]?(me|this|it)(\b.*)?
    | x{3,} | \*{3,} | \.{3,} | -+ | _+ | \?+
    | todo | tbd | fixme | placeholder | dummy | secret | token | api[\s_-]?key | password | example | null | none
    """,
    re.IGNORECASE | re.VERBOSE,
)


def looks_like_placeholder(value: str) -> bool:
    """True for text a person meant to replace (``<value>``, ``YOUR_KEY``, ``changeme``, ``xxx``)."""
    return _PLACEHOLDER.fullmatch(value.strip()) is not None


_BRACKETED = re.compile(r"<[^<>]*>")


def is_bracketed_placeholder(value: str) -> bool:
    """``<value>``, ``<set me: API key (apiKey)>``: a README's marker, never a real credential (the runtime's test)."""
    return _BRACKETED.fullmatch(value.strip()) is not None
