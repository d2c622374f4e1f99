"""Form bodies: ``application/x-www-form-urlencoded`` fields and ``multipart/form-data`` parts.

Each property of a url-encoded body is serialised per its OpenAPI Encoding Object
(:class:`~bridge.contract.catalogue.PartEncoding`):

============== ======= ========================= =====================================
style          explode array ``["a", "b"]``      object ``{"city": "B", "zip": 1}``
============== ======= ========================= =====================================
form           true    ``tags=a&tags=b``         ``address[city]=B&address[zip]=1`` (a)
form           false   ``tags=a,b``              ``address=city,B,zip,1``
spaceDelimited false   ``tags=a%20b``            ``address=city%20B%20zip%201``
pipeDelimited  false   ``tags=a%7Cb``            ``address=city%7CB%7Czip%7C1``
deepObject     any     ``tags[0]=a&tags[1]=b``   ``address[city]=B&address[zip]=1``
============== ======= ========================= =====================================

Values nested deeper than a style allows are JSON text, except in deepObject, which nests
(``a[b][0][c]=x``). spaceDelimited/pipeDelimited with ``explode: true`` are sent like form.

Choices, so that no value can add or impersonate a field (the values come from an untrusted model):

- (a) An object is never spread into top-level fields, although OpenAPI's ``form``/``explode: true``
  says so: a free-form ``metadata`` object would then send its keys (``email``, ``amount``…) as
  the form's own fields. Objects go deepObject-style instead (brackets, as Rails, PHP, ``qs`` and
  Stripe parse them); so do properties without an encoding whose value is an object, or an array
  holding objects or arrays (OpenAPI leaves that case undefined). Arrays nest as ``[0]``, ``[1]``.
- Every value and every nested key is percent-encoded with no safe characters, so ``& = [ ]``
  inside them stay data; only the structural brackets are literal. Delimiters are the ones the
  query styles use (:mod:`bridge.request.styles`). ``allowReserved`` is not honoured in bodies: an
  unencoded ``&`` or ``=`` would start another field.
- ``contentType: application/json`` (``BodyBinding.json_fields``) sends the property as JSON text.
- ``null`` means "not sent", at any depth; so do objects and arrays left empty (deepObject indices
  stay consecutive).

Multipart parts: files are decoded (their part's Content-Type is the data: URI's, else the
encoding's, else ``application/octet-stream``); objects and ``json_fields`` are JSON parts;
array items are one part each; other values are text parts, typed when the encoding says so.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from bridge.contract.catalogue import BodyBinding, PartEncoding
from bridge.contract.media_types import is_json_media
from bridge.request.files import decode_file
from bridge.request.styles import primitive_text
from bridge.tools.errors import InvalidArgumentsError
from bridge.tools.json_text import compact_json

__all__ = ["ArgNames", "default_style", "multipart", "pruned", "urlencoded"]

_DELIMITERS = {"form": ",", "spaceDelimited": "%20", "pipeDelimited": "%7C"}


@dataclass(frozen=True, slots=True)
class ArgNames:
    """How error messages name the argument behind a body property."""

    body: BodyBinding
    whole: str | None

    def get(self, key: str) -> str:
        if self.whole is not None:
            return f"{self.whole}.{key}"
        for f in self.body.fields:
            if f.wire == key:
                return f.arg
        return key


def _encoding(body: BodyBinding, key: str) -> PartEncoding | None:
    return next((e for e in body.encoding if e.name == key), None)


def _structured(value: Any) -> bool:
    return isinstance(value, Mapping | list | tuple)


def default_style(value: Any) -> tuple[str, bool]:
    """The ``(style, explode)`` of a property without an encoding, by the shape of its value."""
    if isinstance(value, Mapping) or (isinstance(value, list | tuple) and any(_structured(v) for v in value)):
        return "deepObject", True
    return "form", True


# ------------------------------------------------------------------------------ url-encoded


def urlencoded(fields: Mapping[str, Any], body: BodyBinding, names: ArgNames) -> bytes:
    pairs: list[str] = []
    for key, value in fields.items():
        if value is None:
            continue
        key = str(key)
        # A declared property name comes from the spec (trusted), so brackets in it stay literal.
        name = quote(key, safe="[]")
        if key in body.json_fields:
            pairs.append(f"{name}={quote(compact_json(value), safe='')}")
        elif key in body.file_fields:
            items = value if isinstance(value, list | tuple) else [value]
            pairs.extend(f"{name}={quote(decode_file(v, names.get(key))[0], safe='')}" for v in items)
        else:
            encoding = _encoding(body, key)
            style, explode = (encoding.style, encoding.explode) if encoding else default_style(value)
            pairs.extend(_styled(name, value, style, explode))
    return "&".join(pairs).encode("ascii")


def _text(value: Any) -> str:
    return quote(compact_json(value) if _structured(value) else primitive_text(value), safe="")


def _styled(name: str, value: Any, style: str, explode: bool) -> list[str]:
    """Encoded ``name=value`` pairs of one property; ``name`` is already encoded."""
    if not _structured(value):
        return [f"{name}={_text(value)}"]
    if style == "deepObject" or (isinstance(value, Mapping) and explode):
        return _deep(name, pruned(value))
    items = [v for v in value if v is not None] if isinstance(value, list | tuple) else None
    if explode and items is not None:
        return [f"{name}={_text(v)}" for v in items]
    if items is None:
        assert isinstance(value, Mapping)
        items = [part for k, v in value.items() if v is not None for part in (str(k), v)]
    if not items:
        return []
    return [f"{name}=" + _DELIMITERS.get(style, ",").join(_text(v) for v in items)]


def _deep(name: str, value: Any) -> list[str]:
    """``name[key][0]=value`` pairs of an already :func:`pruned` value."""
    if value is None:
        return []
    if isinstance(value, Mapping):
        members = ((quote(str(k), safe=""), v) for k, v in value.items())
    elif isinstance(value, list | tuple):
        members = ((str(i), v) for i, v in enumerate(value))
    else:
        return [f"{name}={_text(value)}"]
    return [pair for key, member in members for pair in _deep(f"{name}[{key}]", member)]


def pruned(value: Any) -> Any:
    """``value`` without nulls and the empty objects and arrays they leave (a form cannot say them),
    so array indices on the wire stay consecutive; None when nothing is left."""
    if isinstance(value, Mapping):
        kept = {k: v for k, v in ((k, pruned(v)) for k, v in value.items()) if v is not None}
        return kept or None
    if isinstance(value, list | tuple):
        items = [v for v in (pruned(v) for v in value) if v is not None]
        return items or None
    return value


# -------------------------------------------------------------------------------- multipart


def multipart(fields: Mapping[str, Any], body: BodyBinding, names: ArgNames) -> tuple[bytes, str]:
    parts: list[tuple[bytes, bytes]] = []  # (part headers, part content)
    for key, value in fields.items():
        if value is None:
            continue
        key = str(key)
        arg = names.get(key)
        encoding = _encoding(body, key)
        declared = encoding.content_type if encoding else None
        if key in body.file_fields:
            items = value if isinstance(value, list | tuple) else [value]
            for item in items:
                if not isinstance(item, str):
                    raise InvalidArgumentsError(f'Argument "{arg}" must be base64 or a data: URI.')
                data, mime, filename = decode_file(item, arg)
                parts.append(_part(key, data, mime or declared or "application/octet-stream", filename or key))
        elif key in body.json_fields or isinstance(value, Mapping):
            json_type = declared if declared and is_json_media(declared) else "application/json"
            parts.append(_part(key, compact_json(value).encode("utf-8"), json_type, None))
        elif isinstance(value, list | tuple):
            for item in value:
                if _structured(item):
                    parts.append(_part(key, compact_json(item).encode("utf-8"), "application/json", None))
                elif item is not None:
                    parts.append(_part(key, primitive_text(item).encode("utf-8"), declared, None))
        else:
            parts.append(_part(key, primitive_text(value).encode("utf-8"), declared, None))
    boundary = _boundary(content for _, content in parts)
    out = bytearray()
    for head, content in parts:
        out += b"--" + boundary + b"\r\n" + head + b"\r\n" + content + b"\r\n"
    out += b"--" + boundary + b"--\r\n"
    subtype = body.media_type.split(";", 1)[0].strip().lower()
    if not subtype.startswith("multipart/") or "*" in subtype:
        subtype = "multipart/form-data"
    return bytes(out), f"{subtype}; boundary={boundary.decode('ascii')}"


def _quoted(text: str) -> str:
    """A quoted-string for Content-Disposition (WHATWG: escape ``"``, CR and LF)."""
    return '"' + text.replace("\\", "\\\\").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A") + '"'


def _part(name: str, content: bytes, mime: str | None, filename: str | None) -> tuple[bytes, bytes]:
    disposition = f"form-data; name={_quoted(name)}"
    if filename is not None:
        disposition += f"; filename={_quoted(filename)}"
    head = f"Content-Disposition: {disposition}\r\n"
    if mime is not None:
        head += f"Content-Type: {mime}\r\n"
    return head.encode("utf-8"), content


def _boundary(contents: Iterable[bytes]) -> bytes:
    blobs = list(contents)
    while True:
        candidate = b"mcp-bridge-" + secrets.token_hex(16).encode("ascii")
        if not any(candidate in blob for blob in blobs):
            return candidate
