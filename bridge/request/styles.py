"""OpenAPI parameter serialisation: one tool argument to the exact text that goes on the wire.

Path, query and cookie values come back percent-encoded by this module; header values come back
as checked plain text. The rules are OpenAPI 3.x ``style``/``explode`` (RFC 6570 expansions):

============== ============ ===================== ======================== ==========================
location        style        primitive ``5``        array ``[3, 4]``         object ``{"a": 1, "b": 2}``
============== ============ ===================== ======================== ==========================
path            simple       ``5``                  ``3,4``                  ``a,1,b,2`` / ``a=1,b=2``
path            label        ``.5``                 ``.3,4`` / ``.3.4``      ``.a,1,b,2`` / ``.a=1.b=2``
path            matrix       ``;id=5``              ``;id=3,4`` /            ``;id=a,1,b,2`` /
                                                    ``;id=3;id=4``           ``;a=1;b=2``
query           form         ``id=5``               ``id=3,4`` /             ``id=a,1,b,2`` /
                                                    ``id=3&id=4``            ``a=1&b=2``
query           space/pipe   (as form)              ``id=3%204`` / ``3%7C4``  ``id=a%201%20b%202``
query           deepObject   (as form)              (as form)                ``id[a]=1&id[b]=2``
header          simple       ``5``                  ``3,4``                  ``a,1,b,2`` / ``a=1,b=2``
cookie          form         ``id=5``               ``id=3,4`` /             ``id=a,1,b,2`` /
                                                    ``id=3; id=4``           ``a=1; b=2``
============== ============ ===================== ======================== ==========================

Encoding choices (the values are what an untrusted model chose, so none of them may steer the
request's structure):

- Every value is percent-encoded with no safe characters (``quote(text, safe="")``), so ``/ ? # &
  = ; , %`` inside a value can never become a delimiter. Delimiters the style adds (``,`` ``=``
  ``;`` ``.``) stay literal. Space is ``%20``, never ``+``. ``|`` is sent as ``%7C``: RFC 3986
  does not allow it in a query and servers decode both spellings alike.
- ``allowReserved: true`` leaves RFC 3986 reserved characters and existing ``%XX`` triples as they
  are, except ``# & + [ ]``: unencoded, those would end the query, start another parameter, or
  mean a space (OAS 3.1.1 clarifies that applications still encode them).
- The query string is built here, not by httpx ``params=``, which would encode again with its
  own rules (for example ``%`` in a reserved value, or our ``%20`` delimiters).
- Path values that are empty, ``.`` or ``..`` (also when spelled ``%2e`` etc., at any depth of
  percent-encoding) are refused: they would change the number of path segments. So are values
  with a ``.`` or ``..`` *component* between ``/`` or ``\\`` (``../admin``, ``a/./b``,
  ``..%2fadmin``, ``..;x``, fullwidth ``．．``): the bridge sends them as one encoded segment, but
  an upstream or a proxy in front of it that decodes ``%2F`` and then normalises dot segments
  (Envoy ``UNESCAPE_AND_REDIRECT``, some frameworks) would climb out of the operation's path.
  Other separators are simply encoded (``a/b`` → ``a%2Fb``).
- Header values must be visible ASCII, space or tab; anything else (CR, LF, NUL, DEL, other
  controls, non-ASCII) is refused before a request exists. Header values are not percent-encoded.
- Booleans are ``true``/``false``; ``null`` means "not sent"; integral floats are sent as
  integers (``5.0`` -> ``5``); values nested deeper than the style allows are sent as JSON text.
- Parameters described with ``content`` (``ParamBinding.content_type``) are serialised as JSON
  text (strings as-is for non-JSON media types) and then encoded like a primitive string.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote

from bridge.contract.catalogue import ParamBinding
from bridge.tools.errors import InvalidArgumentsError
from bridge.tools.json_text import compact_json

__all__ = [
    "RESERVED",
    "check_header_value",
    "encode_value",
    "has_dot_component",
    "is_dot_segment",
    "primitive_text",
    "query_string",
    "serialize_cookie",
    "serialize_header",
    "serialize_path",
    "serialize_query",
]

RESERVED = ":/?#[]@!$&'()*+,;="
# Reserved characters that stay encoded even with allowReserved (see module docstring).
_ALWAYS_ENCODED = "#&+[]"
_RESERVED_SAFE = "".join(ch for ch in RESERVED if ch not in _ALWAYS_ENCODED)
_PCT_TRIPLE = re.compile(r"%[0-9A-Fa-f]{2}")
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")
_MAX_DECODE_ROUNDS = 8
_SEPARATORS = re.compile(r"[/\\]")
_OVERLONG_DOT = re.compile(r"%c0%ae|%e0%80%ae", re.IGNORECASE)
_SHOWN_VALUE_CHARS = 60


def _shown(value: str) -> str:
    text = value if len(value) <= _SHOWN_VALUE_CHARS else value[:_SHOWN_VALUE_CHARS] + "…"
    return json.dumps(text)


def primitive_text(value: Any) -> str:
    """Text of one scalar: ``true``/``false``, JSON numbers, strings as-is; anything else as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("non-finite number")
        if value.is_integer() and abs(value) < 2**53:
            return str(int(value))
        return json.dumps(value)
    if value is None:
        return ""
    return compact_json(value)


def encode_value(text: str, *, allow_reserved: bool = False) -> str:
    """Percent-encode ``text`` (UTF-8) with no safe characters, or per ``allowReserved``."""
    if not allow_reserved:
        return quote(text, safe="")
    out: list[str] = []
    pos = 0
    for match in _PCT_TRIPLE.finditer(text):
        out.append(quote(text[pos : match.start()], safe=_RESERVED_SAFE))
        out.append(match.group(0))
        pos = match.end()
    out.append(quote(text[pos:], safe=_RESERVED_SAFE))
    return "".join(out)


def is_dot_segment(text: str) -> bool:
    """True when ``text`` is empty, ``.`` or ``..``, also after any number of percent-decodings."""
    current = text
    for _ in range(_MAX_DECODE_ROUNDS):
        if current in ("", ".", ".."):
            return True
        decoded = unquote(current)
        if decoded == current:
            return False
        current = decoded
    return True  # absurd nesting of encodings: refuse rather than guess


def _is_dot(component: str) -> bool:
    core = component.split(";", 1)[0]  # "..;x" is ".." to servlet containers
    return core in (".", "..") or unicodedata.normalize("NFKC", core) in (".", "..")


def has_dot_component(text: str) -> bool:
    """True when ``text`` has a ``.``/``..`` component between ``/`` or ``\\``, at any decoding depth.

    Each of up to 8 percent-decodings is split on ``/`` and ``\\``; a component counts as a dot
    component when it is ``.`` or ``..`` before any ``;`` parameter or after NFKC normalisation.
    Overlong UTF-8 spellings of ``.`` (``%c0%ae``) count too. Too many encoding layers count as
    a dot component (refuse rather than guess).
    """
    current = text
    for _ in range(_MAX_DECODE_ROUNDS):
        if _OVERLONG_DOT.search(current) or any(_is_dot(c) for c in _SEPARATORS.split(current)):
            return True
        decoded = unquote(current)
        if decoded == current:
            return False
        current = decoded
    return True


def _content_text(param: ParamBinding, value: Any, *, ascii_only: bool = False) -> str:
    media = (param.content_type or "").split(";")[0].strip().lower()
    if isinstance(value, str) and not (media == "application/json" or media.endswith("+json")):
        return value
    return json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":"), allow_nan=False)


def _scalar(param: ParamBinding, value: Any) -> str:
    try:
        return primitive_text(value)
    except ValueError:
        raise InvalidArgumentsError(
            f'Argument "{param.arg}" contains a number that cannot be sent (NaN or infinity).'
        ) from None


def _items(value: Mapping[str, Any]) -> list[tuple[str, Any]]:
    return [(str(k), v) for k, v in value.items() if v is not None]


def _elements(value: Sequence[Any]) -> list[Any]:
    return [v for v in value if v is not None]


# --------------------------------------------------------------------------------------------- path


def serialize_path(param: ParamBinding, value: Any) -> str:
    """The encoded text that replaces ``{name}`` in the path template.

    Raises:
        InvalidArgumentsError: the value is missing, empty, ``.``/``..`` (in any spelling), or an
            empty array/object, so it could change the number of path segments.
    """
    if value is None:
        raise InvalidArgumentsError(f'Argument "{param.arg}" is required: it is part of the URL path.')
    if param.content_type is not None:
        text = _content_text(param, value)
        _check_path_text(param, text)
        return quote(text, safe="")

    style, explode, name = param.style or "simple", param.explode, quote(param.wire, safe="")

    def enc(text: str) -> str:
        if has_dot_component(text):
            raise _dot_path(param, text)
        return quote(text, safe="")

    if isinstance(value, Mapping):
        pairs = [(enc(k), enc(_scalar(param, v))) for k, v in _items(value)]
        if not pairs:
            raise _empty_path(param)
        if explode:
            joined = {"simple": ",", "label": ".", "matrix": ";"}.get(style, ",")
            body = joined.join(f"{k}={v}" for k, v in pairs)
        else:
            body = ",".join(f"{k},{v}" for k, v in pairs)
        if style == "label":
            return "." + body
        if style == "matrix":
            return ";" + body if explode else f";{name}={body}"
        return body

    if isinstance(value, list | tuple):
        texts = [_scalar(param, v) for v in _elements(value)]
        if not texts:
            raise _empty_path(param)
        parts = [enc(t) for t in texts]
        if style == "label":
            return "." + (".".join(parts) if explode else ",".join(parts))
        if style == "matrix":
            if explode:
                return "".join(f";{name}={p}" for p in parts)
            return f";{name}=" + ",".join(parts)
        return ",".join(parts)

    text = _scalar(param, value)
    _check_path_text(param, text)
    if style == "label":
        return "." + enc(text)
    if style == "matrix":
        return f";{name}={enc(text)}"
    return enc(text)


def _check_path_text(param: ParamBinding, text: str) -> None:
    if is_dot_segment(text) or has_dot_component(text):
        raise _dot_path(param, text)


def _dot_path(param: ParamBinding, text: str) -> InvalidArgumentsError:
    return InvalidArgumentsError(
        f'Argument "{param.arg}" cannot be {_shown(text)}: a path value must not be empty, "." or "..", nor '
        'contain "." or ".." between slashes (also when percent-encoded), because that would change which URL '
        "is called. Pass the actual identifier."
    )


def _empty_path(param: ParamBinding) -> InvalidArgumentsError:
    return InvalidArgumentsError(
        f'Argument "{param.arg}" must not be empty: it is part of the URL path. Pass at least one value.'
    )


# -------------------------------------------------------------------------------------------- query


def serialize_query(param: ParamBinding, value: Any) -> list[tuple[str, str]]:
    """Encoded ``(name, value)`` pairs for one query parameter; ``[]`` when nothing is sent.

    Both members are already percent-encoded; join them with :func:`query_string`.
    """
    if value is None:
        return []
    name = quote(param.wire, safe="")
    if param.content_type is not None:
        return [(name, quote(_content_text(param, value), safe=""))]

    def enc(text: str) -> str:
        return encode_value(text, allow_reserved=param.allow_reserved)

    style, explode = param.style or "form", param.explode
    if isinstance(value, Mapping):
        items = _items(value)
        if not items:
            return []
        if style == "deepObject":
            return _deep_object(name, items, enc, param)
        if explode:
            return [(quote(k, safe=""), enc(_scalar(param, v))) for k, v in items]
        flat = [text for k, v in items for text in (enc(k), enc(_scalar(param, v)))]
        return [(name, _delimiter(style).join(flat))]

    if isinstance(value, list | tuple):
        parts = [enc(_scalar(param, v)) for v in _elements(value)]
        if not parts:
            return []
        if explode:
            return [(name, p) for p in parts]
        return [(name, _delimiter(style).join(parts))]

    return [(name, enc(_scalar(param, value)))]


def _delimiter(style: str) -> str:
    return {"spaceDelimited": "%20", "pipeDelimited": "%7C"}.get(style, ",")


def _deep_object(
    prefix: str, items: list[tuple[str, Any]], enc: Callable[[str], str], param: ParamBinding
) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for key, val in items:
        name = f"{prefix}[{quote(key, safe='')}]"
        if isinstance(val, Mapping):
            pairs.extend(_deep_object(name, _items(val), enc, param))
        elif isinstance(val, list | tuple):
            pairs.extend((name, enc(_scalar(param, v))) for v in _elements(val))
        else:
            pairs.append((name, enc(_scalar(param, val))))
    return pairs


def query_string(pairs: Sequence[tuple[str, str]]) -> str:
    """``name=value&…`` from already-encoded pairs (no leading ``?``)."""
    return "&".join(f"{name}={value}" for name, value in pairs)


# ------------------------------------------------------------------------------------------- header


def check_header_value(arg: str, text: str) -> str:
    """Return ``text`` if it is visible ASCII, space or tab; else raise InvalidArgumentsError."""
    if not _HEADER_VALUE.fullmatch(text):
        raise InvalidArgumentsError(
            f'Argument "{arg}" cannot be sent as an HTTP header: it contains a line break, a control '
            "character or a non-ASCII character. Use plain printable ASCII text."
        )
    return text.strip(" \t")


def serialize_header(param: ParamBinding, value: Any) -> str | None:
    """The checked header value (``simple`` style), or None when nothing is sent."""
    if value is None:
        return None
    if param.content_type is not None:
        return check_header_value(param.arg, _content_text(param, value, ascii_only=True))
    if isinstance(value, Mapping):
        items = [(k, _scalar(param, v)) for k, v in _items(value)]
        if not items:
            return None
        text = ",".join(f"{k}={v}" if param.explode else f"{k},{v}" for k, v in items)
    elif isinstance(value, list | tuple):
        texts = [_scalar(param, v) for v in _elements(value)]
        if not texts:
            return None
        text = ",".join(texts)
    else:
        text = _scalar(param, value)
    return check_header_value(param.arg, text)


# ------------------------------------------------------------------------------------------- cookie


def serialize_cookie(param: ParamBinding, value: Any) -> list[tuple[str, str]]:
    """Encoded ``(name, value)`` cookie pairs (``form`` style); join them as ``n=v; n=v``."""
    if value is None:
        return []
    name = param.wire
    if param.content_type is not None:
        return [(name, quote(_content_text(param, value), safe=""))]

    def enc(text: str) -> str:
        return quote(text, safe="")

    if isinstance(value, Mapping):
        items = _items(value)
        if not items:
            return []
        if param.explode:
            return [(enc(k), enc(_scalar(param, v))) for k, v in items]
        return [(name, ",".join(t for k, v in items for t in (enc(k), enc(_scalar(param, v)))))]
    if isinstance(value, list | tuple):
        parts = [enc(_scalar(param, v)) for v in _elements(value)]
        if not parts:
            return []
        if param.explode:
            return [(name, p) for p in parts]
        return [(name, ",".join(parts))]
    return [(name, enc(_scalar(param, value)))]
