"""An upstream body read with a cap on *decoded* bytes, decompressed by the bridge itself.

``Accept-Encoding`` is pinned to ``gzip, deflate`` and the raw stream goes through ``zlib`` with
``max_length`` (:class:`~bridge.upstream.bounded_decoder.BoundedDecoder`), so a compression bomb never
expands past the cap in memory. Any other ``Content-Encoding`` (``br``, ``zstd``, or stacked
codings such as ``gzip, gzip``, which httpx would expand a whole network read at a time) is not
decoded: a success body is refused and an error body is dropped. A 2xx/3xx body over the cap
raises :class:`~bridge.tools.errors.ResponseTooLarge`; a 4xx/5xx body is cut at its cap after secrets
are redacted from a slightly longer read, so a secret straddling the cut cannot leave a readable
prefix; when the body is longer than that read, the read's last :data:`_REDACT_SLACK` bytes are
dropped after redacting (masks before a secret cut by the read would bring it into the kept part).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import httpx

from bridge.secrets.excerpt import cut_redacted_bytes, excerpt
from bridge.secrets.redact import mask_before_decoding
from bridge.tools.errors import ResponseTooLarge, UpstreamError
from bridge.upstream.bounded_decoder import BoundedDecoder
from bridge.upstream.http_settings import ACCEPT_ENCODING

__all__ = ["read_capped"]

logger = logging.getLogger("bridge.upstream")
_REPORTED: set[tuple[str, str]] = set()  # (operation, coding) already logged; bounded by the API's size

_ZLIB_ENCODINGS = frozenset({"gzip", "x-gzip", "deflate"})
_REDACT_SLACK = 4096
"""Extra error-body bytes read so that a secret straddling the cut is redacted before cutting."""


async def read_capped(
    response: httpx.Response, op: str, *, limit: int, redact: Callable[[str], str] | None
) -> tuple[bytes, bool]:
    """The decoded body of ``response`` and whether it was cut.

    ``redact`` (error bodies only) is applied before the cut at ``limit``.

    Raises:
        ResponseTooLarge: a success body is over ``limit``.
        UpstreamError: a success body has a content encoding the bridge does not decode.
    """
    success = response.status_code < 400
    redacting = not success and redact is not None
    read_limit = limit + _REDACT_SLACK if redacting else limit
    encodings = [e.strip().lower() for e in response.headers.get("content-encoding", "").split(",") if e.strip()]
    codings = [e for e in encodings if e != "identity"]
    decodable = len(codings) <= 1 and all(e in _ZLIB_ENCODINGS for e in codings)
    if success and not decodable:
        raise UpstreamError(
            f"{op}: the API answered with a content encoding mcp-bridge does not decode "
            f"({excerpt(', '.join(codings), redact or str, 100, mark='…')}); it only accepts {ACCEPT_ENCODING}."
        )
    if success and not codings:
        declared = response.headers.get("content-length", "")
        # upstream text: ASCII digits only ("²".isdigit() is true); more than 18 is over any limit
        if declared.isascii() and declared.isdigit() and (len(declared) > 18 or int(declared) > limit):
            raise _too_large(op, limit)
    body = bytearray()
    truncated = False

    def take(chunk: bytes) -> bool:
        """Append ``chunk``; False once the limit is passed (success raises instead)."""
        nonlocal truncated
        room = read_limit - len(body)
        if len(chunk) > room:
            if success:
                raise _too_large(op, limit)
            body.extend(chunk[:room])
            truncated = True
            return False
        body.extend(chunk)
        return True

    if decodable:
        decoder = BoundedDecoder(codings[0]) if codings else None
        async for raw in response.aiter_raw():
            try:
                chunk = decoder.decode(raw, read_limit - len(body) + 1) if decoder else raw
            except httpx.DecodingError as exc:
                raise _undecodable(op, codings[0], response, exc) from None
            if not take(chunk):
                break
    content = bytes(body)
    keep = limit
    if redacting and content and redact is not None:
        content = mask_before_decoding(content, redact)
        content = redact(content.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        if truncated:  # a secret straddling the read's end lies in its last _REDACT_SLACK bytes
            keep = max(0, min(limit, len(content) - _REDACT_SLACK))
    if len(content) > keep:
        content, truncated = cut_redacted_bytes(content, keep), True
    return content, truncated


def _undecodable(op: str, coding: str, response: httpx.Response, exc: Exception) -> UpstreamError:
    """Why a body could not be decoded, for the model and (once per operation and cause) the operator."""
    cause = f"it says Content-Encoding: {coding}, but the body is not {coding} data"
    key = (op, coding)
    if key not in _REPORTED:
        _REPORTED.add(key)
        logger.warning(
            "%s: HTTP %d body could not be decoded: %s (%s); the call failed. The API (or a proxy) mislabels its "
            "responses",
            op,
            response.status_code,
            cause,
            " ".join(str(exc).split())[:160],
        )
    return UpstreamError(f"{op}: the API's response could not be decoded: {cause}. Retrying may not help.")


def _too_large(op: str, limit: int) -> ResponseTooLarge:
    return ResponseTooLarge(
        f"{op}: the API's response is larger than the {limit:,}-byte limit (response too large); mcp-bridge "
        "stopped reading it. Ask for less data (filters, smaller pages, fewer fields)."
    )
