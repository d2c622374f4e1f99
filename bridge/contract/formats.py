"""Formats asserted on arguments, and the decoder check of base64 file arguments.

A format is asserted only where the check is unambiguous, cheap and stdlib-only. Everything else
(uri, hostname, regex, duration, ...) is an annotation and passes, as in JSON Schema 2020-12.

``contentEncoding: base64`` strings (file and binary-body arguments) are checked with a decoder,
a chunk at a time, not with a regular expression: the generated base64 pattern cost about 60
bytes of memory per character in Python's ``re`` (a 52 MB file argument took the server to
3.4 GB), while decoding 64 KiB at a time needs a fixed few hundred kilobytes whatever the size.
"""

from __future__ import annotations

import binascii
import datetime
import ipaddress
import re

import jsonschema

__all__ = ["FORMAT_CHECKER", "FORMAT_NOUNS", "is_base64_file"]

FORMAT_CHECKER = jsonschema.FormatChecker(formats=())
"""The format checker used for arguments: date, date-time, time, email, ipv4, ipv6, uuid."""

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2})(?::?(\d{2}))?)?", re.ASCII)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def _is_date(value: str) -> bool:
    m = _DATE.fullmatch(value)
    if m is None:
        return False
    try:
        datetime.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return False
    return True


def _is_time(value: str, *, zone_required: bool) -> bool:
    m = _TIME.fullmatch(value)
    if m is None:
        return False
    if zone_required and not value.endswith(("Z", "z")) and m[4] is None:
        return False
    hour, minute, second = int(m[1]), int(m[2]), int(m[3])
    if m[4] is not None and (int(m[4]) > 23 or (m[5] is not None and int(m[5]) > 59)):
        return False
    return hour <= 23 and minute <= 59 and second <= 60  # 60: leap second


@FORMAT_CHECKER.checks("date")
def _check_date(value: object) -> bool:
    return not isinstance(value, str) or _is_date(value)


@FORMAT_CHECKER.checks("date-time")
def _check_date_time(value: object) -> bool:
    # RFC 3339, accepting "t" and " " as separator and +hhmm offsets like common clients (Ajv).
    if not isinstance(value, str):
        return True
    return len(value) > 11 and value[10] in "Tt " and _is_date(value[:10]) and _is_time(value[11:], zone_required=True)


@FORMAT_CHECKER.checks("time")
def _check_time(value: object) -> bool:
    return not isinstance(value, str) or _is_time(value, zone_required=False)


@FORMAT_CHECKER.checks("email")
@FORMAT_CHECKER.checks("idn-email")
def _check_email(value: object) -> bool:
    if not isinstance(value, str):
        return True
    local, at, domain = value.rpartition("@")
    return bool(local and at and domain) and not any(c.isspace() for c in domain)


@FORMAT_CHECKER.checks("ipv4")
def _check_ipv4(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        return False
    return True


@FORMAT_CHECKER.checks("ipv6")
def _check_ipv6(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if "%" in value:  # zone ids are not part of the format
        return False
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


@FORMAT_CHECKER.checks("uuid")
def _check_uuid(value: object) -> bool:
    return not isinstance(value, str) or _UUID.fullmatch(value) is not None


FORMAT_NOUNS = {
    "date-time": "ISO datetime",
    "date": "ISO date",
    "time": "ISO time",
    "email": "email address",
    "idn-email": "email address",
    "ipv4": "IPv4 address",
    "ipv6": "IPv6 address",
    "uuid": "UUID",
}
"""What Zod calls each asserted format in "Invalid <noun>"."""

# --------------------------------------------------------------------------------------------
# base64 and data: URIs
# --------------------------------------------------------------------------------------------

_CHUNK = 64 * 1024  # characters decoded at once: a multiple of 4, so only the last chunk is partial
_URL_SAFE = str.maketrans("-_", "+/")
_MAX_HEADER = 4096  # a data: URI's media type and parameters; a longer header is refused
_MIME = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*", re.ASCII)


def is_base64_file(value: str) -> bool:
    """``value`` is what a file argument takes: base64 or ``data:[<mime>][;param]*;base64,<data>``.

    Standard and URL-safe alphabets (even mixed), padding optional, no whitespace: exactly what
    the runtime decodes (``bridge.request.build.decode_file``) and what the schema describes.
    """
    start = 0
    if value.startswith("data:"):
        # Only the header is sliced: a copy of the payload would double the memory of the check.
        comma = value.find(",", 5, _MAX_HEADER)
        params = value[5:comma].split(";") if comma > 0 else []
        if len(params) < 2 or params[-1] != "base64":
            return False
        if params[0] and _MIME.fullmatch(params[0]) is None:
            return False
        start = comma + 1
    return _is_base64(value, start)


def _is_base64(text: str, start: int) -> bool:
    end = len(text)
    padding = 2 if text.endswith("==", start) else 1 if text.endswith("=", start) else 0
    end -= padding
    rest = (end - start) % 4
    if rest == 1 or (padding and rest != 4 - padding):
        return False
    for at in range(start, end, _CHUNK):
        chunk = text[at : min(at + _CHUNK, end)].translate(_URL_SAFE)
        if len(chunk) % 4:
            chunk += "=" * (-len(chunk) % 4)
        try:
            binascii.a2b_base64(chunk, strict_mode=True)
        except (binascii.Error, ValueError):  # ValueError: a non-ASCII character
            return False
    return True
