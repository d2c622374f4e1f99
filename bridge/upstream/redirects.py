"""Which upstream redirects the bridge follows (SECURITY.md P18), decided on the raw text.

A redirect is followed, credentials and all, only when its target has the base URL's origin
and its raw path lies under the base path segment by segment (``/v1`` admits ``/v1`` and
``/v1/x``, not ``/v10`` nor ``/v1%2fx``), with no ``.``/``..`` segment in any spelling.

The rules are those of path arguments (P12), and the same functions of :mod:`bridge.request.styles`
apply them: a dot segment counts whether it is plain, percent-encoded at any depth
(``%2e%2e``, ``%252e``), hidden behind ``;`` (``..;/``), fullwidth or overlong UTF-8, and
whether it sits between ``/`` or ``\\`` or behind an encoded ``%2f``/``%5c``. The checks run on
the Location text *and* on the raw path httpx would send: httpx resolves plain dot segments
when it joins, but the server (or a proxy in front of it) decodes and resolves the rest, so a
decoded ``startswith`` check is no check at all. Locations with a backslash, whitespace,
control or non-ASCII characters are refused outright: clients disagree on what they mean
(``/\\evil.example`` is another host to a browser), and a well-behaved API never sends them.
Empty segments (``/v1//x``) are refused like empty path values: some servers merge them, some
route on them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import httpx

from bridge.request.base_url import origin_of
from bridge.request.styles import has_dot_component
from bridge.tools.errors import UpstreamError

__all__ = ["redirect_target"]

_UNSAFE_LOCATION = re.compile(r"[^\x21-\x7e]|\\")
"""Anything but visible ASCII, and the backslash."""


def redirect_target(
    current: httpx.URL,
    location: str,
    *,
    base_url: httpx.URL,
    op: str,
    redact: Callable[[str], str],
) -> httpx.URL:
    """The URL to follow ``location`` (a redirect answer to ``current``) to, if it may be followed.

    Raises:
        UpstreamError: the redirect is invalid, leaves the base URL's origin, or leaves its base
            path (in any spelling); nothing more is sent.
    """
    outside = UpstreamError(
        f"{op}: the API redirected outside its base path; mcp-bridge does not follow such redirects."
    )
    if not location or _UNSAFE_LOCATION.search(location):
        raise UpstreamError(f"{op}: the API answered with an invalid redirect.")
    try:
        target = current.join(location).copy_with(fragment=None)
    except httpx.InvalidURL:
        raise UpstreamError(f"{op}: the API answered with an invalid redirect.") from None
    origin = origin_of(base_url)
    if origin_of(target) != origin or target.userinfo:
        scheme, host, port = origin_of(target)
        base_scheme, base_host, base_port = origin
        raise UpstreamError(
            f"{op}: the API redirected to another origin ({redact(f'{scheme}://{host}:{port}')}); mcp-bridge does "
            f"not follow redirects away from {redact(f'{base_scheme}://{base_host}:{base_port}')}. Tell the user; "
            "the base URL may need to change."
        )
    # The reference as written: httpx's join has already resolved its plain dot segments, and a
    # server resolves the encoded ones the bridge never saw. Authority parts hold no dot component.
    reference_path = location.split("#", 1)[0].split("?", 1)[0]
    sent_path = target.raw_path.decode("ascii").split("?", 1)[0]
    if has_dot_component(reference_path) or has_dot_component(sent_path):
        raise outside
    if not under_base_path(sent_path, base_url):
        raise outside
    return target


def under_base_path(raw_path: str, base_url: httpx.URL) -> bool:
    """True when ``raw_path`` is the base path or below it, segment by segment, with no empty segment.

    Segments are compared as raw text: ``/%76%31`` is not ``/v1`` (a redirect has no reason to
    spell the API's own prefix differently, and decoding is what the attacks above rely on).
    """
    base = base_url.raw_path.decode("ascii").split("?", 1)[0].rstrip("/").split("/")[1:]
    segments = raw_path.split("/")
    if segments[0] != "" or len(segments) < 2:
        return False
    segments = segments[1:]
    if segments[-1] == "":  # a trailing slash is a resource of its own, not an empty segment
        segments = segments[:-1]
    return "" not in segments and segments[: len(base)] == base
