"""Bounded gzip/deflate decoding: never more output than asked for in one step (bomb-proof)."""

from __future__ import annotations

import zlib

import httpx


class BoundedDecoder:
    """zlib decoding that never produces more than it is asked for in one step."""

    def __init__(self, encoding: str) -> None:
        self._deflate = encoding == "deflate"
        self._first = True
        wbits = zlib.MAX_WBITS if self._deflate else zlib.MAX_WBITS | 16
        self._obj = zlib.decompressobj(wbits)

    def decode(self, data: bytes, max_length: int) -> bytes:
        try:
            if self._first and self._deflate and data:
                self._first = False
                try:
                    return self._step(data, max_length)
                except zlib.error:  # raw deflate without the zlib wrapper, as httpx tolerates
                    self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
            return self._step(data, max_length)
        except zlib.error as exc:
            raise httpx.DecodingError(str(exc)) from None

    def _step(self, data: bytes, max_length: int) -> bytes:
        out = self._obj.decompress(data, max_length)
        # Output stops at max_length; the caller treats max_length as "over the limit".
        while self._obj.unconsumed_tail and len(out) < max_length:
            out += self._obj.decompress(self._obj.unconsumed_tail, max_length - len(out))
        return out
