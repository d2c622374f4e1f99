"""File content from a tool argument: base64 or a ``data:`` URI, decoded before it is sent."""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import unquote

from bridge.tools.errors import InvalidArgumentsError

__all__ = ["decode_file"]

_MIME = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*")


def decode_file(value: str, arg: str) -> tuple[bytes, str | None, str | None]:
    """``(bytes, mime type, file name)`` from base64 or ``data:<mime>[;name=…];base64,<data>``."""
    mime: str | None = None
    filename: str | None = None
    payload = value
    if value.startswith("data:"):
        header, sep, payload = value[5:].partition(",")
        params = header.split(";")
        if not sep or "base64" not in (p.strip().lower() for p in params[1:]):
            raise InvalidArgumentsError(
                f'Argument "{arg}" must be a base64 data: URI (data:<mime type>;base64,<data>) or plain base64.'
            )
        if params[0] and _MIME.fullmatch(params[0].strip()):
            mime = params[0].strip().lower()
        elif params[0]:
            raise InvalidArgumentsError(f'Argument "{arg}" has an invalid media type in its data: URI.')
        for p in params[1:]:
            key, _, val = p.partition("=")
            if key.strip().lower() in ("name", "filename") and val:
                filename = _safe_filename(unquote(val))
    compact = "".join(payload.split())
    try:
        if "-" in compact or "_" in compact:
            data = base64.urlsafe_b64decode(compact + "=" * (-len(compact) % 4))
        else:
            data = base64.b64decode(compact + "=" * (-len(compact) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise InvalidArgumentsError(
            f'Argument "{arg}" is not valid base64. Pass the file content as base64 or as '
            "data:<mime type>;base64,<data>."
        ) from None
    return data, mime, filename


def _safe_filename(name: str) -> str | None:
    cleaned = re.sub(r"[^A-Za-z0-9._ -]", "_", name).strip(" .")[:200]
    return cleaned or None
