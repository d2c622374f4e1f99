"""The request body: tool arguments to bytes and a Content-Type, per the body's kind.

A body's kind says how its value is serialised, whatever the media type is called:

- ``json``: the value as JSON. The Content-Type is the declared media type, or a concrete JSON one
  when a wildcard (``*/*``, ``application/*``) was declared and the schema is structured.
- ``form`` / ``multipart``: one field or part per property (:mod:`bridge.request.forms`).
- ``text``: a string sent as UTF-8 (``text/plain`` for a wildcard).
- ``binary``: base64 or a ``data:`` URI, decoded before sending; for a wildcard the data: URI's
  media type (when the wildcard admits it) or ``application/octet-stream``.

The generator records the kind in :class:`~bridge.contract.catalogue.BodyBinding` when the media type alone
does not decide it. Bindings without one (hand-made, older catalogues) get it from the media type;
a JSON-admitting wildcard then goes by the value: a string is binary (what such bodies were
advertised as), anything else JSON.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any

from bridge.contract.catalogue import BodyBinding
from bridge.contract.media_types import FORM, OCTET_STREAM, base_media, concrete_json, infer_kind
from bridge.request.credential_args import refuse_body_credentials, refuse_credential
from bridge.request.files import decode_file
from bridge.request.forms import ArgNames, multipart, urlencoded
from bridge.request.styles import primitive_text
from bridge.secrets.bound import resolve
from bridge.tools.errors import InvalidArgumentsError
from bridge.tools.json_text import compact_json

__all__ = ["build_body", "decode_file"]

# ------------------------------------------------------------------------------------ building


def build_body(
    body: BodyBinding, args: Mapping[str, Any], bound: Mapping[str, str] | None = None
) -> tuple[bytes, str] | None:
    """``(content, Content-Type)`` of the body ``body`` describes, or None when none is sent.

    ``bound`` (environment variable -> value) feeds the properties the operator bound; they are
    set whenever a body is sent, over anything the arguments hold under that name.

    Raises:
        InvalidArgumentsError: the body cannot be built from the arguments.
        CredentialsError: a required bound property's variable is not set.
    """
    kind = body.kind or infer_kind(body.media_type)
    bound_names = [f.wire for f in body.bound_fields]
    if body.arg is not None:
        value = args.get(body.arg)
        if kind in (None, "json", "form", "multipart"):
            refuse_body_credentials(value, body.arg, bound_names)
        if value is None and not (body.bound_fields and body.required):
            if body.required:
                raise InvalidArgumentsError(f'Argument "{body.arg}" is required: it is the request body.')
            return None
        if body.bound_fields:
            value = _with_bound(body, value if value is not None else {}, bound or {})
    else:
        kind = kind or "json"
        # An explicit null is sent in JSON (the schema allowed it: "clear this field"); forms have no null.
        keep_null = kind == "json"
        for f in body.fields:
            if f.wire not in bound_names:
                refuse_credential("body", f.wire, f.arg, args.get(f.arg))
        value = {f.wire: args[f.arg] for f in body.fields if f.arg in args and (keep_null or args[f.arg] is not None)}
        if not value and not body.required:
            return None
        if body.bound_fields:
            value = _with_bound(body, value, bound or {})
        if kind not in ("json", "form", "multipart"):
            raise InvalidArgumentsError(f"A {body.media_type} request body cannot be built from separate arguments.")
    if kind is None:
        kind = "binary" if isinstance(value, str) else "json"
    arg = body.arg or "body"
    if kind == "json":
        data = compact_json(value).encode("utf-8")
        return data, body.content_type or concrete_json(body.media_type)
    if kind in ("form", "multipart"):
        if not isinstance(value, Mapping):
            raise InvalidArgumentsError(f'Argument "{arg}" must be an object: the request body is a form.')
        names = ArgNames(body, body.arg)
        if kind == "form":
            return urlencoded(value, body, names), body.content_type or _concrete(body.media_type, FORM)
        return multipart(value, body, names)
    if kind == "text":
        text = value if isinstance(value, str) else _text_scalar(value, arg)
        return text.encode("utf-8"), body.content_type or _text_type(body.media_type)
    if not isinstance(value, str):
        raise InvalidArgumentsError(f'Argument "{arg}" must be a base64 string or a data: URI.')
    data, mime, _ = decode_file(value, arg)
    return data, body.content_type or _binary_type(body.media_type, mime, arg)


def _with_bound(body: BodyBinding, value: Any, bound: Mapping[str, str]) -> Any:
    """``value`` (the body object) with the bound properties set, or removed when an optional
    one's variable is unset: the model never supplies them."""
    if not isinstance(value, Mapping):
        return value  # not an object: the schema check already refused it, or it has no properties
    out = dict(value)
    for field_ in body.bound_fields:
        assert field_.bound is not None
        resolved = resolve(field_.bound, bound, required=field_.required, optional_skip=True)
        if resolved is None:
            out.pop(field_.wire, None)
        else:
            out[field_.wire] = resolved
    return out


def _concrete(media_type: str, fallback: str) -> str:
    return fallback if "*" in base_media(media_type) else media_type


def _text_type(media_type: str) -> str:
    if "*" in base_media(media_type):
        return "text/plain; charset=utf-8"
    if base_media(media_type).startswith("text/") and "charset=" not in media_type.lower():
        return media_type + "; charset=utf-8"
    return media_type


def _binary_type(media_type: str, mime: str | None, arg: str) -> str:
    """The declared type, or for a wildcard the data: URI's type when the wildcard admits it."""
    base = base_media(media_type)
    if "*" not in base:
        return media_type
    if mime is not None and fnmatch.fnmatchcase(mime, base):
        return mime
    if mime is None and fnmatch.fnmatchcase(OCTET_STREAM, base):
        return OCTET_STREAM
    raise InvalidArgumentsError(
        f'Argument "{arg}" must be a data: URI whose media type matches {base} (data:<mime type>;base64,<data>).'
    )


def _text_scalar(value: Any, arg: str) -> str:
    if isinstance(value, bool | int | float):
        return primitive_text(value)
    raise InvalidArgumentsError(f'Argument "{arg}" must be text.')
