"""From validated tool arguments to one HTTP request that only the OpenAPI operation could describe.

:func:`build_request` fills the path template, query, headers, cookies and body from the
arguments (serialisation rules in :mod:`bridge.request.styles`), then re-parses the final URL and checks
that its scheme, host and port are the base URL's and that its path is the base path plus the
template with only its slots filled. Anything else raises :class:`UnsafeRequestError` and nothing
is sent. No argument is ever used as a URL, a header name or a cookie name. Path values that are
empty, ``.``/``..`` or contain a ``.``/``..`` component between slashes (in any percent-encoded
spelling) are refused as :class:`InvalidArgumentsError` (see :mod:`bridge.request.styles`). A template's
``#fragment`` is dropped and its ``?literal`` pairs go first in the query (:mod:`bridge.contract.path_template`);
object members sent as names of their own are checked by :mod:`bridge.request.wire_names`; parameters the
operator bound take their value from the binding or the environment (:mod:`bridge.secrets.bound`);
a model's value for a parameter or body property that carries a credential is refused
(:mod:`bridge.request.credential_args`), whatever the catalogue says.
:func:`check_prepared` repeats the URL checks and checks header names and values once more right
before :class:`~bridge.upstream.client.Upstream` sends, so a request altered after building is refused too.

Header parameters named in :data:`FORBIDDEN_HEADERS` (or starting with ``X-Forwarded-``) are never
sent even if a binding declares them: generated tools do not expose them as arguments, so a
binding that does is skipped silently rather than failing every call.

The base URL comes from :mod:`bridge.request.base_url`; the header facts from :mod:`bridge.contract.wire_rules`.

The body is built by :mod:`bridge.request.bodies` (form fields and multipart parts: :mod:`bridge.request.forms`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote

import httpx

from bridge.contract.catalogue import HttpBinding, ParamBinding
from bridge.contract.path_template import literal_query, split_template
from bridge.contract.wire_rules import DEFAULT_ACCEPT, FORBIDDEN_HEADERS, FRAMING_HEADERS
from bridge.request.base_url import origin_of
from bridge.request.bodies import build_body
from bridge.request.credential_args import refuse_credential
from bridge.request.files import decode_file
from bridge.request.sendable import check_sendable, check_url_length
from bridge.request.styles import (
    has_dot_component,
    is_dot_segment,
    query_string,
    serialize_cookie,
    serialize_header,
    serialize_path,
    serialize_query,
)
from bridge.request.wire_names import WireNames
from bridge.secrets.bound import bound_value
from bridge.secrets.credentials import CredentialParts
from bridge.tools.errors import InvalidArgumentsError, UnsafeRequestError

__all__ = ["PreparedRequest", "build_request", "check_prepared", "decode_file", "request_for_url"]

_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_SLOT = re.compile(r"\{([^{}/]+)\}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_TEMPLATE_SAFE = "/!$&'()*+,;=:@%-._~"


# ------------------------------------------------------------------------------------- request


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    """A checked request, ready to send. ``url`` is absolute and went through the origin/path check."""

    method: str
    url: httpx.URL
    headers: tuple[tuple[str, str], ...]
    content: bytes | None
    content_type: str | None
    operation: str
    """``"GET /pets/{petId}"``: what error messages and logs name (never argument values)."""
    base_url: httpx.URL
    path: str
    """Encoded path (base path + filled template)."""
    query: tuple[tuple[str, str], ...]
    """Encoded ``(name, value)`` query pairs."""
    cookies: tuple[tuple[str, str], ...]
    """Encoded ``(name, value)`` cookie pairs (sent as one ``Cookie`` header)."""
    template_segments: tuple[str | None, ...]
    """Expected path segments: literal text, or None where a slot was filled."""
    _url_proof: tuple[object, ...] | None = field(default=None, init=False, repr=False, compare=False)
    """The URL parts :func:`_assemble` proved, as built here; ``dataclasses.replace`` drops it."""

    def with_credentials(self, parts: CredentialParts) -> PreparedRequest:
        """This request plus the credentials in ``parts``; credentials replace same-named parameters."""
        if not (parts.headers or parts.query or parts.cookies):
            return self
        cred_headers = {name.lower() for name, _ in parts.headers}
        headers = [(n, v) for n, v in self.headers if n.lower() not in cred_headers and n.lower() != "cookie"]
        headers.extend(parts.headers)
        cookies = self.cookies
        if parts.cookies:
            cred_cookies = {name for name, _ in parts.cookies}
            cookie_list = [(n, v) for n, v in self.cookies if n not in cred_cookies]
            for name, value in parts.cookies:
                _check_token(name, "cookie")
                cookie_list.append((name, quote(value, safe="")))
            cookies = tuple(cookie_list)
        if cookies:
            headers.append(("Cookie", "; ".join(f"{n}={v}" for n, v in cookies)))
        if not parts.query:  # headers and cookies leave the proven URL as it is
            return _proven(replace(self, headers=tuple(headers), cookies=cookies), self._url_proof)
        cred_query = {quote(name, safe="") for name, _ in parts.query}
        query = [(n, v) for n, v in self.query if n not in cred_query]
        query.extend((quote(n, safe=""), quote(v, safe="")) for n, v in parts.query)
        url = _assemble(self.base_url, self.path, query, self.template_segments, self.operation)
        request = replace(self, url=url, headers=tuple(headers), query=tuple(query), cookies=cookies)
        return _proven(request, _url_parts(request))


def build_request(
    binding: HttpBinding,
    args: Mapping[str, Any],
    *,
    base_url: httpx.URL | str,
    operation: str | None = None,
    bound: Mapping[str, str] | None = None,
    descriptions: Mapping[str, str] | None = None,
) -> PreparedRequest:
    """The HTTP request ``binding`` describes for ``args`` (already schema-validated).

    Arguments not named by the binding are ignored. Values that cannot be put on the wire safely
    are refused before anything is sent. Bound parameters (``ParamBinding.bound``) take their
    value from the binding or from ``bound`` (environment variable -> value), never from ``args``.
    ``descriptions`` (argument -> its input schema's description) settle an ambiguous name
    (:func:`bridge.request.credential_args.refuse_credential`).

    Raises:
        InvalidArgumentsError: a value cannot be sent (dot/empty path value, header control
            characters, bad base64, missing required value, an object member named like another
            parameter).
        CredentialsError: a bound parameter's environment variable is not set.
        UnsafeRequestError: the built URL would leave the base URL's origin or the operation's path.
    """
    for name, value in args.items():
        if _has_surrogate(value):
            raise InvalidArgumentsError(
                f'Argument "{name}" contains invalid Unicode (a lone surrogate), which cannot be sent.'
            )
    check_sendable(binding.params, args)  # NaN/Infinity anywhere; path/query/header values over their limit
    base = httpx.URL(base_url)
    method = binding.method.upper()
    op = operation or f"{method} {binding.path}"
    if not _TOKEN.fullmatch(method):
        raise UnsafeRequestError(f"{op}: the HTTP method is not valid.")

    template, literal = split_template(binding.path)
    fixed = {name for name, _ in literal}
    path_params: dict[str, ParamBinding] = {}
    path_values: dict[str, Any] = {}
    query: list[tuple[str, str]] = list(literal_query(binding.path))
    headers: list[tuple[str, str]] = [("Accept", ", ".join(binding.accept) if binding.accept else DEFAULT_ACCEPT)]
    cookies: list[tuple[str, str]] = []
    query_names = WireNames(binding.params, "query", fixed)
    cookie_names = WireNames(binding.params, "cookie")
    for param in binding.params:
        if param.bound is None:
            described = descriptions.get(param.arg) if descriptions else None
            refuse_credential(param.location, param.wire, param.arg, args.get(param.arg), described)
        if param.location == "header" and _forbidden_header(param.wire):
            continue
        if param.location == "query" and param.wire in fixed:
            continue  # the path template sends this one
        value = args.get(param.arg) if param.bound is None else bound_value(param, bound or {})
        if value is None and param.required and param.location != "path":
            raise InvalidArgumentsError(f'Argument "{param.arg}" is required.')
        if param.location == "path":
            path_params[param.wire] = param
            path_values[param.wire] = value
        elif param.location == "query":
            pairs = serialize_query(param, value)
            query_names.claim(param, pairs)
            query.extend(pairs)
        elif param.location == "header":
            _check_token(param.wire, "header")
            text = serialize_header(param, value)
            if text is not None:
                headers.append((param.wire, text))
        else:
            _check_token(param.wire, "cookie")
            pairs = serialize_cookie(param, value)
            cookie_names.claim(param, pairs)
            cookies.extend(pairs)

    path, segments = _fill_template(base, template, path_params, path_values, op)

    content: bytes | None = None
    content_type: str | None = None
    if binding.body is not None:
        body = build_body(binding.body, args, bound)
        if body is not None:
            content, content_type = body
            headers.append(("Content-Type", content_type))
    if cookies:
        headers.append(("Cookie", "; ".join(f"{n}={v}" for n, v in cookies)))

    check_url_length(
        base.netloc, path, query, (p.arg for p in binding.params if p.arg in args and p.location in ("path", "query"))
    )
    url = _assemble(base, path, query, segments, op)
    request = PreparedRequest(
        method=method,
        url=url,
        headers=tuple(headers),
        content=content,
        content_type=content_type,
        operation=op,
        base_url=base,
        path=path,
        query=tuple(query),
        cookies=tuple(cookies),
        template_segments=segments,
    )
    return _proven(request, _url_parts(request))


def _url_parts(request: PreparedRequest) -> tuple[object, ...]:
    return (request.url, request.base_url, request.path, request.query, request.template_segments)


def _proven(request: PreparedRequest, proof: tuple[object, ...] | None) -> PreparedRequest:
    """``request``, remembering that :func:`_assemble` proved ``proof`` (its URL parts) safe."""
    if proof is not None and all(a is b for a, b in zip(proof, _url_parts(request), strict=True)):
        object.__setattr__(request, "_url_proof", proof)
    return request


def _has_surrogate(value: Any, depth: int = 0) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if depth > 64:
        return False
    if isinstance(value, Mapping):
        return any(_has_surrogate(k, depth + 1) or _has_surrogate(v, depth + 1) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_has_surrogate(v, depth + 1) for v in value)
    return False


def _forbidden_header(name: str) -> bool:
    lowered = name.lower()
    return lowered in FORBIDDEN_HEADERS or lowered.startswith("x-forwarded-")


def _check_token(name: str, what: str) -> None:
    if not _TOKEN.fullmatch(name):
        raise UnsafeRequestError(f"The {what} name {name!r} declared by the API description is not a valid token.")


def _base_path(base: httpx.URL) -> str:
    return base.raw_path.decode("ascii").split("?", 1)[0].rstrip("/")


def _fill_template(
    base: httpx.URL,
    template: str,
    params: Mapping[str, ParamBinding],
    values: Mapping[str, Any],
    op: str,
) -> tuple[str, tuple[str | None, ...]]:
    if not template.startswith("/"):
        raise UnsafeRequestError(f"{op}: the path template must start with '/'.")
    base_path = _base_path(base)
    segments: list[str | None] = [s for s in base_path.split("/")[1:]]
    filled: list[str] = []
    for raw_segment in template.split("/")[1:]:
        pieces: list[str] = []
        pos = 0
        has_slot = False
        for match in _SLOT.finditer(raw_segment):
            pieces.append(quote(raw_segment[pos : match.start()], safe=_TEMPLATE_SAFE))
            param = params.get(match.group(1))
            if param is None:
                raise UnsafeRequestError(f"{op}: the path slot {{{match.group(1)}}} has no argument bound to it.")
            pieces.append(serialize_path(param, values.get(param.wire)))
            has_slot = True
            pos = match.end()
        pieces.append(quote(raw_segment[pos:], safe=_TEMPLATE_SAFE))
        segment = "".join(pieces)
        if has_slot and (is_dot_segment(segment) or has_dot_component(segment)):
            names = ", ".join(f'"{p.arg}"' for p in params.values())
            raise InvalidArgumentsError(
                f"The path arguments ({names}) would produce an empty, '.' or '..' path segment (or one with '.' "
                "or '..' between slashes); pass real values."
            )
        filled.append(segment)
        segments.append(None if has_slot else segment)
    return base_path + "/" + "/".join(filled), tuple(segments)


def _assemble(
    base: httpx.URL,
    path: str,
    query: Sequence[tuple[str, str]],
    segments: Sequence[str | None],
    op: str,
) -> httpx.URL:
    """Build the absolute URL and prove it still points at the operation (P13)."""
    qs = query_string(query)
    target = path + (f"?{qs}" if qs else "")
    text = f"{base.scheme}://{base.netloc.decode('ascii')}{target}"
    unsafe = UnsafeRequestError(
        f"{op}: the request URL built from these arguments would not match the operation's path; nothing was sent."
    )
    try:
        url = httpx.URL(text)
    except httpx.InvalidURL:
        raise unsafe from None
    if origin_of(url) != origin_of(base) or url.userinfo or url.fragment:
        raise unsafe
    if url.raw_path != target.encode("ascii"):
        raise unsafe
    got = path.split("/")[1:]
    if len(got) != len(segments):
        raise unsafe
    for actual, expected in zip(got, segments, strict=True):
        if expected is None:
            if is_dot_segment(actual) or has_dot_component(actual) or "/" in actual or "?" in actual or "#" in actual:
                raise unsafe
        elif actual != expected:
            raise unsafe
    return url


def check_prepared(request: PreparedRequest, base_url: httpx.URL) -> None:
    """Re-check a prepared request just before it is sent (defence in depth for P13 and P16).

    A request made by :func:`build_request` always passes. One altered afterwards (a hook using
    ``dataclasses.replace``, a bug) is refused when its URL is not the one its path, query and
    template describe, when it leaves ``base_url``'s origin or base path, or when a header name or
    value could change the request's framing.

    Raises:
        UnsafeRequestError: nothing must be sent.
    """
    op = request.operation
    unsafe = UnsafeRequestError(f"{op}: the request failed the final safety check; nothing was sent.")
    if origin_of(request.base_url) != origin_of(base_url) or origin_of(request.url) != origin_of(base_url):
        raise unsafe
    prefix = _base_path(base_url)
    if _base_path(request.base_url) != prefix or not request.path.startswith(prefix + "/"):
        raise unsafe
    proof = request._url_proof
    if proof is None or not all(a is b for a, b in zip(proof, _url_parts(request), strict=True)):
        # Altered since it was built (a hook's dataclasses.replace, a bug): prove the URL again.
        rebuilt = _assemble(request.base_url, request.path, request.query, request.template_segments, op)
        if rebuilt.raw_path != request.url.raw_path or request.url.userinfo or request.url.fragment:
            raise unsafe
    if not _TOKEN.fullmatch(request.method):
        raise unsafe
    for name, value in request.headers:
        lowered = name.lower()
        if (
            not _TOKEN.fullmatch(name)
            or not _HEADER_VALUE.fullmatch(value)
            or lowered in FRAMING_HEADERS
            or lowered.startswith("x-forwarded-")
        ):
            raise unsafe


def request_for_url(url: httpx.URL, *, base_url: httpx.URL | str, operation: str, accept: str) -> PreparedRequest:
    """A GET of ``url``, a URL the API named itself (a status URL), checked like a request it describes.

    ``url`` must already have passed :func:`bridge.upstream.redirects.redirect_target` (same origin, under
    the base path, no dot segment in any spelling). Its path segments become the literal template,
    so :func:`check_prepared` and the credential step re-prove it as they do any request.

    Raises:
        UnsafeRequestError: the URL is not under the base path or does not survive re-assembly.
    """
    base = httpx.URL(base_url)
    raw = url.raw_path.decode("ascii")
    path, _, query_text = raw.partition("?")
    prefix = _base_path(base)
    if not path.startswith(prefix + "/") or url.fragment or url.userinfo:
        raise UnsafeRequestError(f"{operation}: the URL is outside the API's base path; nothing was sent.")
    query = tuple((n, v) for n, _, v in (item.partition("=") for item in query_text.split("&") if item))
    segments: tuple[str | None, ...] = tuple(path.split("/")[1:])
    assembled = _assemble(base, path, query, segments, operation)
    request = PreparedRequest(
        method="GET",
        url=assembled,
        headers=(("Accept", accept),),
        content=None,
        content_type=None,
        operation=operation,
        base_url=base,
        path=path,
        query=query,
        cookies=(),
        template_segments=segments,
    )
    return _proven(request, _url_parts(request))
