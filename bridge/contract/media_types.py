"""Media-type rules both halves share: what counts as JSON or text, and what a wildcard admits.

Part of the contract between the generator and the runtime (no httpx, no generator): the generator
decides a body's kind and the runtime serialises it by the same rules.
"""

from __future__ import annotations

import fnmatch
import re

from bridge.contract.catalogue import BodyKind

_JSON_TYPES = ("application/json", "text/json")
_TEXT_TYPES = ("application/xml", "application/yaml", "application/x-yaml", "application/javascript", "image/svg+xml")
FORM = "application/x-www-form-urlencoded"
OCTET_STREAM = "application/octet-stream"


def base_media(media_type: str) -> str:
    """``Application/JSON; charset=utf-8`` → ``application/json``."""
    return media_type.split(";", 1)[0].strip().lower()


def is_json_media(media_type: str) -> bool:
    """A concrete JSON media type (``application/json``, ``text/json``, ``…+json``)."""
    base = base_media(media_type)
    return "*" not in base and (base in _JSON_TYPES or base.endswith("+json"))


def is_text_media(media_type: str) -> bool:
    """Text a person can read: ``text/*``, XML, YAML, JavaScript, SVG (requests and answers alike)."""
    base = base_media(media_type)
    return base.startswith("text/") or base in _TEXT_TYPES or base.endswith(("+xml", "+yaml"))


def admits_json(media_type: str) -> bool:
    """A concrete JSON type, or a wildcard that a JSON type matches (``*/*``, ``application/*+json``)."""
    base = base_media(media_type)
    if "*" not in base:
        return is_json_media(base)
    return base.endswith("+json") or any(fnmatch.fnmatchcase(t, base) for t in _JSON_TYPES)


def concrete_json(media_type: str) -> str:
    """The Content-Type for JSON sent to ``media_type``: itself when concrete, else the first JSON
    type the wildcard matches; ``application/json`` for ``application/*+json``, which names none."""
    if is_json_media(media_type):
        return media_type
    base = base_media(media_type)
    return next((t for t in _JSON_TYPES if fnmatch.fnmatchcase(t, base)), "application/json")


def infer_kind(media_type: str) -> BodyKind | None:
    """The kind a media type implies; None for a JSON-admitting wildcard (the value decides)."""
    base = base_media(media_type)
    if is_json_media(base):
        return "json"
    if base == FORM:
        return "form"
    if base.startswith("multipart/"):
        return "multipart"
    if is_text_media(base):
        return "text"  # text/* too: a structured schema there gets kind "json" from the generator
    return None if admits_json(base) else "binary"


def charset(content_type: str) -> str:
    match = re.search(r"charset=\"?([A-Za-z0-9._-]+)", content_type, re.IGNORECASE)
    return match.group(1) if match else "utf-8"


def decode_text(content: bytes, content_type: str) -> str:
    """An answer's text in its declared charset (UTF-8 when none or unknown), never failing."""
    try:
        return content.decode(charset(content_type), errors="replace")
    except LookupError:
        return content.decode("utf-8", errors="replace")


def looks_textual(body: bytes) -> bool:
    """An untyped answer that is UTF-8 text (no NUL in its first 4 KiB)."""
    if b"\x00" in body[:4096]:
        return False
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
