"""Media types of upstream answers: which are JSON, which are text, how text is decoded."""

from __future__ import annotations

import re

__all__ = ["decode_text", "is_json", "is_text", "looks_textual", "media_type"]

_TEXT_TYPES = ("application/xml", "application/yaml", "application/x-yaml", "application/javascript", "image/svg+xml")


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _charset(content_type: str) -> str:
    match = re.search(r"charset=\"?([A-Za-z0-9._-]+)", content_type, re.IGNORECASE)
    return match.group(1) if match else "utf-8"


def decode_text(content: bytes, content_type: str) -> str:
    try:
        return content.decode(_charset(content_type), errors="replace")
    except LookupError:
        return content.decode("utf-8", errors="replace")


def is_json(media: str) -> bool:
    return media in ("application/json", "text/json") or media.endswith("+json")


def is_text(media: str) -> bool:
    return media.startswith("text/") or media in _TEXT_TYPES or media.endswith(("+xml", "+yaml"))


def looks_textual(body: bytes) -> bool:
    if b"\x00" in body[:4096]:
        return False
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
