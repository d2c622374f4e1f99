"""An ``httpx.AsyncClient`` that keeps no state between calls: no cookie is ever stored or sent.

Calls of different users and tools must not leak into each other through a cookie jar, and
httpx's per-response cookie work (wrapping the response and its request in urllib objects) cost
about 8% of a call's CPU for cookies that were never kept.
"""

from __future__ import annotations

import http.cookiejar
from typing import Any

import httpx


class _RefuseAll(http.cookiejar.DefaultCookiePolicy):
    """Never store a cookie: calls must not leak state into each other."""

    def set_ok(self, cookie: http.cookiejar.Cookie, request: object) -> bool:
        return False


class _NoCookies(http.cookiejar.CookieJar):
    """A jar that never takes a cookie in (and so never sends one)."""

    def __init__(self) -> None:
        super().__init__(policy=_RefuseAll())

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None

    def set_cookie(self, cookie: http.cookiejar.Cookie) -> None:
        return None


class _NoCookieHandling(httpx.Cookies):
    """Client cookies that skip httpx's per-response work: wrapping the response and its request
    in urllib objects for the jar cost about 8% of a call's CPU, for cookies never kept."""

    def __init__(self) -> None:
        super().__init__(_NoCookies())

    def extract_cookies(self, response: httpx.Response) -> None:
        return None


class StatelessClient(httpx.AsyncClient):
    """The upstream client: an ``httpx.AsyncClient`` that keeps no cookies between calls."""

    @property
    def cookies(self) -> httpx.Cookies:
        return _NO_COOKIE_HANDLING

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        return None  # nothing is kept, whatever httpx's constructor passes


_NO_COOKIE_HANDLING = _NoCookieHandling()  # stateless, so one is shared by every client
