"""Structural credential spellings, masked whatever their values: the redaction no secret is needed for.

URL userinfo, token-like query parameters, credential header lines and JSON members, long
``Bearer`` tokens. :func:`scrub` is applied wherever no configured secret is known (hand-written
tools' errors, a bridge without credentials); :class:`bridge.secrets.redact.Redactor` applies it after
masking the configured secrets, and recognises short secrets after the names listed here.
"""

from __future__ import annotations

import re

__all__ = ["CREDENTIAL_HEADERS", "SCRUBS", "TOKEN_QUERY_PARAMS", "scrub", "scrub_can_change", "structural_spans"]

TOKEN_QUERY_PARAMS: tuple[str, ...] = (
    "access_token",
    "refresh_token",
    "id_token",
    "token",
    "auth",
    "api_key",
    "apikey",
    "api-key",
    "key",
    "sig",
    "signature",
    "secret",
    "client_secret",
    "password",
    "passwd",
    "session",
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-security-token",
    "x-goog-signature",
    "x-goog-credential",
)
"""Query parameter names whose values :func:`scrub` hides in any URL (case-insensitive)."""
CREDENTIAL_HEADERS: tuple[str, ...] = ("authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key")
"""Header names whose values :func:`scrub` hides in header-like lines and JSON members."""

_NAMES = "|".join(re.escape(n) for n in CREDENTIAL_HEADERS)
SCRUBS: tuple[tuple[re.Pattern[str], str], ...] = (
    # scheme://user:password@host  ->  scheme://***@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,20}://)[^\s/?#@\"'<>]+@"), r"\1***@"),
    # ?access_token=…&sig=…  ->  ?access_token=***&sig=***
    (
        re.compile(r"(?i)([?&;](?:" + "|".join(re.escape(n) for n in TOKEN_QUERY_PARAMS) + r")=)[^&;#\s\"'<>]+"),
        r"\1***",
    ),
    # "Authorization": "…"  (JSON members, any case; escaped quotes inside the value included)
    (re.compile(r'(?i)("(?:' + _NAMES + r')"\s*:\s*)"(?:[^"\\]|\\.)*"'), r'\1"***"'),
    # 'Authorization': '…'  (Python reprs of header dicts)
    (re.compile(r"(?i)('(?:" + _NAMES + r")'\s*:\s*)'(?:[^'\\]|\\.)*'"), r"\1'***'"),
    # Authorization: …  (a header line, up to its end)
    (re.compile(r"(?im)^([ \t]*(?:" + _NAMES + r")[ \t]*:[ \t]*)[^\r\n]+"), r"\1***"),
    # Bearer eyJhbGciOi…  (long enough not to be a word)
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9\-._~+/]{16,}=*"), r"\1***"),
)
# Every pattern above needs one of these literals (same flags): "@", "=", a credential header name
# (each contains one of the three names below) or "bearer". Most strings in a JSON result have
# none, and one search is cheaper than six substitutions.
_SCRUB_HINT = re.compile(r"(?i)@|=|bearer|authorization|cookie|x-api-key")
# What the userinfo spelling (the first of SCRUBS) needs, without its scheme: a faster search.
_USERINFO_HINT = re.compile(r"://[^\s/?#@\"'<>]+@")
_TOKEN_PARAMS = SCRUBS[1][0]  # ?access_token=…
_BEARER = SCRUBS[-1][0]  # Bearer eyJ…


def scrub(text: str) -> str:
    """``text`` with structural credential spellings replaced by ``***`` (values not needed).

    Covers URL userinfo, token-like query parameters (:data:`TOKEN_QUERY_PARAMS`), credential
    header lines and JSON members (:data:`CREDENTIAL_HEADERS`) and long ``Bearer`` tokens.
    """
    if _SCRUB_HINT.search(text) is None:
        return text
    for pattern, replacement in SCRUBS:
        text = pattern.sub(replacement, text)
    return text


def structural_spans(text: str) -> list[tuple[int, int]]:
    """Where :func:`scrub` would put ``***`` in ``text`` (the value part of each spelling)."""
    return [(m.end(1), m.end(0)) for pattern, _ in SCRUBS for m in pattern.finditer(text)]


def scrub_can_change(text: str, lowered: str) -> bool:
    """Whether :func:`scrub` may change ``text`` (``lowered`` is ``text.lower()``), leaving out the
    header-line and JSON-member spellings: those need a credential header name, which the caller
    tests for along with its own header names.

    Each regex over a whole answer costs about 0.5 ms, a substring test a few µs: the literals each
    spelling needs are looked for first.
    """
    if "@" in text and _userinfo_in(text):
        return True
    if "=" in text and _token_param_in(text):
        return True
    return "bearer" in lowered and _BEARER.search(text) is not None


# A token parameter's match ends in "=" and one value character, and starts at most this far before
# its "=" (``[?&;]`` and the longest name; case-insensitive matching maps one character to one).
_TOKEN_REACH = 1 + max(map(len, TOKEN_QUERY_PARAMS))
_MAX_WINDOWS = 64


_USERINFO_RUN = re.compile(r"[^\s/?#@\"'<>]+")  # the run of _USERINFO_HINT between "://" and "@"


def _userinfo_in(text: str) -> bool:
    """``_USERINFO_HINT.search(text) is not None``, tested at each "@".

    A match ending at an "@" starts right after the nearest "://" before it (the run between
    holds no "/", so no earlier "://" can start one): a reverse find and one anchored match per
    "@" instead of a scan of the whole text. Many "@": one search.
    """
    if text.count("@") > _MAX_WINDOWS:
        return _USERINFO_HINT.search(text) is not None
    at = text.find("@")
    while at >= 0:
        scheme_end = text.rfind("://", 0, at)
        if scheme_end >= 0 and _USERINFO_RUN.fullmatch(text, scheme_end + 3, at) is not None:
            return True
        at = text.find("@", at + 1)
    return False


def _token_param_in(text: str) -> bool:
    """``_TOKEN_PARAMS.search(text) is not None``, searched only around each "=".

    The pattern starts with a character class, which Python's regex engine tries at every
    position (about 70 µs on a 20 KB answer); JSON answers hold few "=" (base64 padding), and
    every match lies inside the window before and after one of them. Many "=": one search.
    """
    if text.count("=") > _MAX_WINDOWS:
        return _TOKEN_PARAMS.search(text) is not None
    at = text.find("=")
    while at >= 0:
        if _TOKEN_PARAMS.search(text, max(0, at - _TOKEN_REACH), at + 2) is not None:
            return True
        at = text.find("=", at + 1)
    return False
