"""Secrets in the base URL (SECURITY.md P82): a token in the server URL is a secret like any other.

Telegram puts the bot token in the path (``https://api.telegram.org/bot<token>/``), set through
``<PREFIX>_BASE_URL``, ``--base-url`` or a server variable. The texts found here join the
redactor's secrets (the set credentials use, so every spelling P26 covers is masked in answers,
errors and logs):

- a server variable's value when the variable is named or described like a credential
  (:func:`bridge.contract.wire_rules.credential_name`, ``describes_credential``: Telegram's
  ``token``, "authentication token");
- the fixed value the operator bound (``bind:``) to a parameter named like a credential;
- the user name, password and query values of the base URL (``resolve_base_url`` refuses those,
  but a URL that carried one is still masked);
- any path segment holding a piece that looks like a token (:func:`looks_like_token`).

A segment with such a piece is masked whole, and without a short alphabetic prefix too
(``bot123456:AAH…`` and ``123456:AAH…``), so an answer that echoes the token alone is masked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from urllib.parse import unquote

import httpx

from bridge.contract.catalogue import Catalogue
from bridge.contract.wire_rules import credential_name, describes_credential

__all__ = ["MIN_TOKEN_PIECE", "looks_like_token", "url_secrets"]

MIN_TOKEN_PIECE = 16
"""The shortest alphanumeric piece taken for a token (a UUID's longest piece has 12)."""
_PIECE = re.compile(r"[A-Za-z0-9]+")
_PREFIX = re.compile(r"^[A-Za-z]{1,8}(?=[0-9])")


def looks_like_token(piece: str) -> bool:
    """A random-looking alphanumeric run: at least :data:`MIN_TOKEN_PIECE` characters, two or more
    digits and a letter, and either letters of both cases (base64: ``AAHdqTcvCH1vGWJx``) or digits
    making a quarter or more of it (hex: ``3f2a9b0c4d5e6f70``).

    Words (``organizationsmanagement``), versions (``v1beta1``), dates (``2024-01-01``) and UUIDs
    (pieces of 8, 4 and 12) are not: too short, too few digits, or one case and few digits.
    """
    if len(piece) < MIN_TOKEN_PIECE or not piece.isascii() or not piece.isalnum():
        return False
    digits = sum(c.isdigit() for c in piece)
    if digits < 2 or digits == len(piece):
        return False
    mixed = any(c.islower() for c in piece) and any(c.isupper() for c in piece)
    return mixed or digits * 4 >= len(piece)


def _segment_secrets(segment: str) -> Iterator[str]:
    pieces = [p for p in _PIECE.findall(segment) if looks_like_token(p)]
    if not pieces:
        return
    yield segment
    yield _PREFIX.sub("", segment)
    yield from pieces


def _value_secrets(value: str) -> Iterator[str]:
    """A value marked secret: whole, without a short alphabetic prefix, and its token-like pieces."""
    if value:
        yield value
        yield _PREFIX.sub("", value)
        yield from (p for p in _PIECE.findall(value) if looks_like_token(p))


def url_secrets(url: httpx.URL, catalogue: Catalogue | None = None, variables: Mapping[str, str] = {}) -> list[str]:
    """The secrets in the base URL ``url`` and in the values that made it (see the module docstring).

    ``variables`` are the server variables the operator set; ``catalogue`` supplies their
    descriptions and the fixed bound values.
    """
    found: dict[str, None] = {}

    def add(texts: Iterable[str]) -> None:
        found.update(dict.fromkeys(t for t in texts if t))

    server = catalogue.servers[0] if catalogue is not None and catalogue.servers else None
    for name, value in variables.items():
        spec = server.variables.get(name) if server is not None else None
        described = describes_credential("query", name, spec.description if spec is not None else None)
        if credential_name("query", name) is not None or described is not None:
            add(_value_secrets(value))
        else:
            add(p for p in _PIECE.findall(value) if looks_like_token(p))
    if catalogue is not None:
        for entry in catalogue.tools:
            for param in entry.binding.params:
                bound = param.bound
                if bound is not None and bound.value and credential_name(param.location, param.wire) is not None:
                    add(_value_secrets(bound.value))
    add(unquote(part) for part in url.userinfo.decode("ascii", "replace").split(":"))
    add(value for _, value in url.params.multi_items())
    for segment in url.raw_path.decode("ascii", "replace").split("?", 1)[0].split("/"):
        add(_segment_secrets(unquote(segment)))
    return list(found)
