"""The spellings of a secret: how one value can be written in a text, and how to read them back.

A secret echoed by an API rarely comes back as it was sent: URLs percent-encode it (either hex
case, sometimes twice), JSON encoders escape ``/`` and non-ASCII characters, HTML escapes it with
character references, a wrong charset turns its UTF-8 into mojibake, and HTTP basic sends it in
base64. Instead of listing every combination of escapes, :class:`Canonical` decodes all escapes of
a text at once (each decoded character remembers where it came from), so that the secret's few
escape-free forms (:func:`canonical_forms`) can be searched with plain substring search.
"""

from __future__ import annotations

import base64
import bisect
import codecs
import functools
import html.entities
import json
import re

__all__ = [
    "ESCAPE_CHARS",
    "NESTED",
    "Canonical",
    "Squeezed",
    "base64_forms",
    "canonical_forms",
    "decoded_text",
    "has_escapes",
    "short_spellings",
]

_HEXD = "[0-9A-Fa-f]"


Reading = tuple[bool, str]
"""How a text is decoded: nested escapes all the way (or once), and which escape families:
``p`` percent, ``j`` JSON/JavaScript backslash escapes, ``h`` HTML character references."""
ONCE: Reading = (False, "pjh")
DEEP: Reading = (True, "pjh")
# Real encoders use one family: reading one family alone keeps a secret's own escape-like
# characters (a raw ``%00`` in a secret that a JSON encoder escaped elsewhere) as they are.
FAMILIES: tuple[Reading, ...] = ((False, "p"), (False, "j"), (False, "h"))
_NEVER = "(?!)"


def _escape_pattern(reading: Reading) -> re.Pattern[str]:
    """One escaped character: the bytes of one UTF-8 sequence (else one byte, read as Latin-1), a
    JSON or JavaScript escape, an HTML character reference. Deep: nested escapes (``%252F``,
    ``&amp;#47;``, ``\\\\/``) are one token, decoded all the way."""
    deep, families = reading
    introducers = [r"%(?:25)*+" if deep else "%"] if "p" in families else []
    if "j" in families:
        introducers.append(r"\\+x" if deep else r"\\x")
    byte = "(?:" + "|".join(introducers) + ")" if introducers else _NEVER
    cont = byte + "[89abAB]" + _HEXD
    slash = (r"\\+" if deep else r"\\") if "j" in families else _NEVER
    amp = ("&(?:amp;)*" if deep else "&") if "h" in families else _NEVER
    return re.compile(
        r"(?=[%&\\])(?:(?P<bytes>"
        + f"{byte}[0-7]{_HEXD}|{byte}[cdCD]{_HEXD}{cont}"
        + f"|{byte}[eE]{_HEXD}(?:{cont}){{2}}|{byte}[fF][0-7](?:{cont}){{3}}"
        + f"|{byte}{_HEXD}{{2}}"
        + ("|%25" if deep and "p" in families else "")
        + f")|(?P<pair>{slash}u[dD][89abAB]{_HEXD}{{2}}{slash}u[dD][c-fC-F]{_HEXD}{{2}})"
        + f"|{slash}"
        + r"(?:u(?P<u4>[0-9A-Fa-f]{4})|U(?P<u8>[0-9A-Fa-f]{8})|(?P<short>[/\"'\\bfnrt]))"
        + f"|{amp}"
        + r"(?:#(?:(?P<dec>[0-9]{1,7})|[xX](?P<hex>[0-9A-Fa-f]{1,6}));?|(?P<name>[A-Za-z][A-Za-z0-9]{1,31};)))"
    )


# Both readings of an ambiguous text are searched: ``%2541`` is ``A`` encoded twice, or ``%``
# followed by ``41``; ``&amp;#47;`` is ``/`` escaped twice, or the text ``&#47;``.
_ESCAPES = {reading: _escape_pattern(reading) for reading in (ONCE, DEEP, *FAMILIES)}
_BYTES = {
    False: re.compile(r"(?:%|\\x)([0-9A-Fa-f]{2})()"),
    True: re.compile(r"(?:%(?:25)*+|\\+x)([0-9A-Fa-f]{2})|%(25)"),
}
# A nested escape, for which the deep reading differs from reading once.
NESTED = re.compile(r"%25[0-9A-Fa-f]{2}|&amp;(?:amp;)*(?:#[0-9xX]|[A-Za-z][A-Za-z0-9]{1,31};)|\\{2,}")


def has_escapes(text: str, reading: Reading = ONCE) -> bool:
    return _ESCAPES[reading].search(text) is not None


ESCAPE_CHARS = re.compile(r"[%&\\]")
_SHORT_ESCAPES = {"/": "/", '"': '"', "'": "'", "\\": "\\", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _utf8_chars(data: bytes) -> list[tuple[str, int, int]]:
    """``data`` as characters with the byte range of each: UTF-8 where it decodes, else Latin-1."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    out: list[tuple[str, int, int]] = []
    start = 0
    for i in range(len(data)):
        try:
            chars = decoder.decode(data[i : i + 1])
        except UnicodeDecodeError:
            decoder.reset()
            out.extend((chr(b), j, j + 1) for j, b in enumerate(data[start : i + 1], start))
            start = i + 1
            continue
        if chars:
            out.extend((c, start, i + 1) for c in chars)
            start = i + 1
    out.extend((chr(b), j, j + 1) for j, b in enumerate(data[start:], start))
    return out


class Canonical:
    """A text with every escape decoded, and the way back from its offsets to the original's."""

    def __init__(self, text: str, reading: Reading = ONCE) -> None:
        pieces: list[str] = []
        # Per decoded character, in order: its canonical start and end, and its original span.
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._spans: list[tuple[int, int]] = []
        at = 0  # original offset copied so far
        length = 0  # canonical length so far
        for match in _ESCAPES[reading].finditer(text):
            decoded = _decode(match.group(0), reading)
            if decoded is None:
                continue
            raw = text[at : match.start()]
            pieces.append(raw)
            length += len(raw)
            for chars, start, end in decoded:
                pieces.append(chars)
                self._starts.append(length)
                length += len(chars)
                self._ends.append(length)
                self._spans.append((match.start() + start, match.start() + end))
            at = match.end()
        pieces.append(text[at:])
        self.text = "".join(pieces)

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The original span of canonical ``[start, end)``."""
        i = bisect.bisect_right(self._starts, start) - 1
        if i < 0:
            first = start
        elif start < self._ends[i]:
            first = self._spans[i][0]
        else:
            first = self._spans[i][1] + start - self._ends[i]
        j = bisect.bisect_left(self._starts, end) - 1
        if j < 0:
            last = end
        elif end <= self._ends[j]:
            last = self._spans[j][1]
        else:
            last = self._spans[j][1] + end - self._ends[j]
        return first, last


class Squeezed:
    """A text with every NUL removed, and the way back from its offsets to the original's.

    UTF-16 and UTF-32 text read as UTF-8 or Latin-1 (no charset, or a wrong one; the bytes of
    either byte order, at any alignment) is the text's characters with NULs between them: a
    reader that drops the NULs reads the secret. Its characters up to U+00FF come back as they
    are, so the squeezed text is searched like any other.
    """

    _CHUNK = 4096

    def __init__(self, text: str) -> None:
        self._source = text
        self.text = text.replace("\0", "")
        # Kept (non-NUL) characters before each chunk of the original: a way back in a few steps.
        self._kept = [0]
        for at in range(0, len(text), self._CHUNK):
            chunk = text[at : at + self._CHUNK]
            self._kept.append(self._kept[-1] + len(chunk) - chunk.count("\0"))

    def _at(self, index: int) -> int:
        """The original offset of the squeezed text's character ``index``."""
        chunk = bisect.bisect_right(self._kept, index) - 1
        left = index - self._kept[chunk]
        at = chunk * self._CHUNK
        source = self._source
        while True:
            if source[at] != "\0":
                if not left:
                    return at
                left -= 1
            at += 1

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The original span of squeezed ``[start, end)`` (NULs inside it included)."""
        return self._at(start), self._at(end - 1) + 1


def decoded_text(text: str, reading: Reading = ONCE) -> str:
    """``text`` with every escape decoded (no offsets kept: the cheap first look)."""
    return _ESCAPES[reading].sub(lambda match: _decoded_chars(match.group(0), reading), text)


@functools.lru_cache(maxsize=4096)
def _decoded_chars(token: str, reading: Reading) -> str:
    decoded = _decode(token, reading)
    return token if decoded is None else "".join(chars for chars, _, _ in decoded)


_PAIR = re.compile(r"u([0-9A-Fa-f]{4})")


@functools.lru_cache(maxsize=4096)
def _decode(token: str, reading: Reading) -> tuple[tuple[str, int, int], ...] | None:
    """The characters one escape token stands for, each with its span inside the token."""
    match = _ESCAPES[reading].fullmatch(token)  # the branch finditer took: earlier ones matched nothing
    assert match is not None
    if match.group("bytes") is not None:
        parts = list(_BYTES[reading[0]].finditer(token))
        data = bytes(int(m.group(1) or m.group(2), 16) for m in parts)
        return tuple((c, parts[b0].start(), parts[b1 - 1].end()) for c, b0, b1 in _utf8_chars(data))
    chars: str | None = None
    if match.group("pair") is not None:
        hi, lo = (int(h, 16) for h in _PAIR.findall(token))
        chars = chr(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
    elif (short := match.group("short")) is not None:
        chars = _SHORT_ESCAPES[short]
    elif (name := match.group("name")) is not None:
        chars = html.entities.html5.get(name)
    else:
        for group, base in (("u4", 16), ("u8", 16), ("dec", 10), ("hex", 16)):
            if (digits := match.group(group)) is not None and int(digits, base) <= 0x10FFFF:
                chars = chr(int(digits, base))
    return None if not chars else ((chars, 0, len(token)),)


def base64_forms(data: bytes) -> set[str]:
    """What the base64 and base64url of ``data`` look like, alone or inside a longer base64 text.

    Alone: the full encoding, padded and unpadded. Inside: ``data`` starts at byte 0, 1 or 2 of a
    3-byte group; for each alignment, the characters that depend only on ``data``'s bits.
    """
    forms: set[str] = set()
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + data + b"\0\0").decode("ascii")
        first = -(-8 * pad // 6)
        last = 8 * (pad + len(data)) // 6
        forms.add(encoded[first:last])
    alone = base64.b64encode(data).decode("ascii")
    forms.update({alone, alone.rstrip("=")})
    forms.update({f.translate(_URLSAFE) for f in forms})
    forms.discard("")
    return forms


_URLSAFE = str.maketrans("+/", "-_")


def canonical_forms(secret: str) -> set[str]:
    """The canonical (escape-free) forms of ``secret``: searched in a text's canonical form."""
    forms = {secret, secret.replace(" ", "+")}
    data = secret.encode("utf-8", "surrogatepass")
    for charset in ("latin-1", "cp1252"):  # UTF-8 read with the wrong charset
        try:
            forms.add(data.decode(charset))
        except UnicodeDecodeError:
            pass
    forms |= base64_forms(data)
    forms |= {data.hex(), data.hex().upper()}  # a hex dump of the bytes, in either case
    # UTF-16/32 bytes with their NULs dropped (Squeezed): the secret itself when it is Latin-1.
    for wide in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"):
        forms.add(secret.encode(wide, "surrogatepass").replace(b"\0", b"").decode("latin-1"))
    # The common escaped spellings as they stand, too: a character before one can make an escape
    # of its own with the spelling's first characters ("&" + "#000000\\u00e9"), and the decoded
    # reading then loses the secret; the literal spelling is still in the raw text.
    forms |= short_spellings(secret)
    forms.add(json.dumps(secret)[1:-1])
    return forms


def short_spellings(secret: str) -> set[str]:
    """Common spellings of a short secret, as literals (for credential positions)."""
    spellings = {secret, secret.replace(" ", "+"), secret.replace("/", "\\/")}
    for upper in (True, False):
        spellings.add("".join(c if c.isalnum() or c in "-._~" else _pct(c, upper) for c in secret))
    for entity in ("&#x{:X};", "&#x{:x};", "&#{};"):
        spellings.add("".join(c if c.isalnum() else entity.format(ord(c)) for c in secret))
    data = secret.encode("utf-8", "surrogatepass")
    alone = base64.b64encode(data).decode("ascii")
    spellings.update({alone, alone.rstrip("="), alone.translate(_URLSAFE), alone.rstrip("=").translate(_URLSAFE)})
    spellings.discard("")
    return spellings


def _pct(char: str, upper: bool) -> str:
    hexed = "".join(f"%{b:02X}" for b in char.encode("utf-8", "surrogatepass"))
    return hexed if upper else hexed.lower()
