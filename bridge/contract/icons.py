"""Icons for ``initialize``: only ``https:`` and ``data:`` image URLs, bounded (no httpx: the generator uses it)."""

from __future__ import annotations

import base64
import binascii
import mimetypes
import re
from pathlib import Path
from urllib.parse import urlsplit

from bridge.contract.catalogue import IconSpec

__all__ = ["MAX_DATA_BYTES", "MAX_URL_CHARS", "IconError", "icon_from_option", "icon_from_url"]

MAX_URL_CHARS = 2048
MAX_DATA_BYTES = 64 * 1024
"""Largest icon sent inline (as a ``data:`` URL): it rides in every ``initialize`` answer."""

RASTER_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
# SVG can carry script: accepted from the operator (--icon, the package config), never from spec text.
OPERATOR_TYPES = RASTER_TYPES | {"image/svg+xml"}
_DATA = re.compile(r"data:(image/[a-z0-9.+\-]+);base64,([A-Za-z0-9+/]*={0,2})")
_EXTENSIONS = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif"}
_EXTENSIONS |= {".webp": "image/webp", ".svg": "image/svg+xml"}


class IconError(ValueError):
    """An icon that cannot be offered; the message says why."""


def icon_from_url(src: str, *, operator: bool = False, mime_type: str | None = None) -> IconSpec:
    """``src`` as an icon, when it is an ``https:`` URL or a base64 ``data:`` image URL.

    ``operator=False`` (spec text): raster images only. Raises :class:`IconError`.
    """
    allowed = OPERATOR_TYPES if operator else RASTER_TYPES
    if not isinstance(src, str) or not src or len(src) > MAX_URL_CHARS + MAX_DATA_BYTES * 4 // 3 + 64:
        raise IconError("an icon must be a URL of at most 2048 characters, or a data: URL of at most 64 KiB")
    if src.startswith("data:"):
        match = _DATA.fullmatch(src)
        if match is None:
            raise IconError("a data: icon must be data:image/<type>;base64,<data>")
        media = match.group(1)
        try:
            data = base64.b64decode(match.group(2), validate=True)
        except binascii.Error:
            raise IconError("the icon's base64 data is not valid") from None
        if len(data) > MAX_DATA_BYTES:
            raise IconError(f"a data: icon must be at most {MAX_DATA_BYTES // 1024} KiB")
        if media not in allowed:
            raise IconError(f"icons of type {media} are not offered")
        return IconSpec(src=src, mime_type=media)
    if len(src) > MAX_URL_CHARS or not src.isascii() or any(c.isspace() or ord(c) < 0x21 for c in src):
        raise IconError("an icon URL must be at most 2048 visible ASCII characters")
    try:
        url = urlsplit(src)
        url.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise IconError("the icon URL is not valid") from None
    if url.scheme.lower() != "https" or not url.hostname or "@" in url.netloc:
        raise IconError("an icon URL must be https:// with a host and no user name or password")
    guessed = mime_type or _EXTENSIONS.get(Path(url.path).suffix.lower())
    if guessed is not None and guessed not in allowed:
        raise IconError(f"icons of type {guessed} are not offered")
    return IconSpec(src=src, mime_type=guessed)


def icon_from_option(value: str) -> IconSpec:
    """``serve --icon``: an https or data: URL, or an image file made into a data: URL."""
    if value.startswith(("https:", "data:", "http:")):
        return icon_from_url(value, operator=True)
    path = Path(value)
    media = _EXTENSIONS.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0]
    if media not in OPERATOR_TYPES:
        raise IconError(f"{value}: an icon file must be .png, .jpg, .gif, .webp or .svg")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise IconError(f"{value}: cannot read the icon ({exc.strerror})") from None
    if len(data) > MAX_DATA_BYTES:
        raise IconError(f"{value}: an icon file must be at most {MAX_DATA_BYTES // 1024} KiB")
    return IconSpec(src=f"data:{media};base64,{base64.b64encode(data).decode('ascii')}", mime_type=media)
