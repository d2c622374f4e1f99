"""Redaction (P26): no spelling of a configured secret leaves the bridge, and answers stay intact.

:class:`Redactor` is applied by the bridge to every text that may carry upstream data or request
details (tool results, success bodies and binary bodies included, error messages, log records).
It replaces with ``***``:

- every **secret of at least** :data:`MIN_SECRET_LENGTH` characters, wherever it appears, in any
  of its spellings: raw; percent-encoded (either hex case, double-encoded too, UTF-8 or Latin-1
  bytes); JSON/JavaScript-escaped (``\\/``, ``\\uXXXX``, ``\\xXX``, nested escaping); HTML
  entities (``&#47;``, ``&#x2F;``, ``&sol;``, ``&amp;#47;``); any mix of those; UTF-8 read as
  Latin-1; and the base64 and base64url of the secret, also inside a longer base64 text (at each
  of the three byte alignments the secret's own characters are recognised, minus the edge
  characters they share with their neighbours);
- a **shorter secret** only in a known credential position: after ``Bearer``/``Basic``/the
  scheme's word, after a credential name (the scheme's own header, query or cookie name,
  :data:`~bridge.secrets.scrub.CREDENTIAL_HEADERS`, :data:`~bridge.secrets.scrub.TOKEN_QUERY_PARAMS`) and
  ``:``/``=``, or as the value of such a JSON member or header pair (:meth:`Redactor.member`).
  Masked everywhere, ``API_KEY=a`` would turn ``{"name": ...}`` into ``{"n***me": ...}``; such a
  secret is a configuration problem, reported once at start-up (by :class:`~bridge.secrets.credentials.Credentials`);
- whatever the values, the structural spellings of credentials (:func:`bridge.secrets.scrub.scrub`).

Cost is linear in the text: escapes are decoded into one canonical text (only when the text has
an escape character at all, see :mod:`bridge.secrets.spellings`) and every form is a plain substring
search in C.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence

from bridge.secrets.literals import Literals
from bridge.secrets.scrub import CREDENTIAL_HEADERS, TOKEN_QUERY_PARAMS, scrub, scrub_can_change, structural_spans
from bridge.secrets.spellings import (
    DEEP,
    ESCAPE_CHARS,
    FAMILIES,
    NESTED,
    ONCE,
    Canonical,
    Squeezed,
    canonical_forms,
    decoded_text,
    has_escapes,
    short_spellings,
)

__all__ = ["MIN_SECRET_LENGTH", "Redactor", "mask_before_decoding"]

MIN_SECRET_LENGTH = 8
"""Shorter secrets are masked only in credential positions: a 1-7 character value is too likely to
be part of ordinary words and keys (and a real API key, token or password is longer)."""
MASK = "***"

_SCHEME_WORDS = ("bearer", "basic", "token", "digest")
_VALUE_END = r"(?![A-Za-z0-9_~+/-]|[.=][A-Za-z0-9])"
# What precedes a value in a credential position, read backwards from the value: `name: `,
# `name=`, `"name": "`, `["name", "`, `name%3D`; or `Bearer ` (and the other scheme words).
_NAME_BEFORE = re.compile(
    r"(?:[\"']\\*)?[ \t]*(?:[:=]|[aAdD]3%|,(?=\\*[\"']))[ \t]*(?:[\"']\\*)?([A-Za-z0-9_.-]{1,64})(?![A-Za-z0-9_-])"
)
_WORD_BEFORE = re.compile(r"(?:[ \t]|02%|\+)+([A-Za-z]{1,16})(?![A-Za-z0-9_-])")


class Redactor:
    """Masks every spelling of the registered secrets (see the module docstring) and scrubs.

    Callable as ``redactor(text)``; mutable (:meth:`learn`) so that every holder of it sees
    secrets learnt later (fetched OAuth2 tokens).
    """

    def __init__(
        self,
        secrets: Iterable[str] = (),
        *,
        names: Iterable[str] = (),
        header_names: Iterable[str] = (),
        scheme_words: Iterable[str] = (),
    ) -> None:
        self._secrets: dict[str, None] = {}
        self._learnt: tuple[str, ...] = ()
        self._header_names = frozenset(n.lower() for n in (*CREDENTIAL_HEADERS, *header_names))
        # The names no other name is part of: a text holding "set-cookie" holds "cookie" (and an
        # empty name, in every text, stays), so leaves_alone tests fewer substrings for the same answer.
        self._header_needles = tuple(
            sorted(n for n in self._header_names if not any(m != n and m in n for m in self._header_names))
        )
        self._names = self._header_names | frozenset(n.lower() for n in (*TOKEN_QUERY_PARAMS, *names))
        self._words = tuple(dict.fromkeys(w.lower() for w in (*_SCHEME_WORDS, *scheme_words) if w))
        for secret in secrets:
            self._secrets.setdefault(secret)
        self._ix = _Index((*self._secrets, *self._learnt), self._words)

    def learn(self, tokens: Iterable[str]) -> None:
        """Mask these (fetched) tokens from now on, instead of the ones learnt before.

        The new index is built whole, then swapped in: a text redacted meanwhile (in a worker
        thread) sees the old secrets or the new ones, never half of each."""
        learnt = tuple(t for t in tokens if t)
        self._ix = _Index((*self._secrets, *learnt), self._words)
        self._learnt = learnt

    @property
    def has_secrets(self) -> bool:
        return bool(self._secrets or self._learnt)

    @property
    def masks_numbers(self) -> bool:
        """Some secret could be written as a JSON number (all digits): numbers need redacting too."""
        return self._ix.numeric

    def _position_spans(self, text: str, ix: _Index) -> list[tuple[int, int]]:
        if ix.candidates is None or ix.candidates.search(text) is None:
            return []
        return [m.span() for m in ix.candidates.finditer(text) if self._positioned(text, m.start())]

    def _positioned(self, text: str, at: int) -> bool:
        """A credential name and separator, or a scheme word, ends at ``at``."""
        before = text[max(0, at - 96) : at][::-1]  # read backwards: regexes anchor at its start
        named = _NAME_BEFORE.match(before)
        if named is not None:
            name = named.group(1)[::-1].lower()
            rest = before[named.end() :]
            if name in self._names or (rest.startswith("%") and name[:2] in ("26", "3f") and name[2:] in self._names):
                return True
        worded = _WORD_BEFORE.match(before)
        return worded is not None and worded.group(1)[::-1].lower() in self._words

    # ------------------------------------------------------------------------------ masking

    def __call__(self, text: str) -> str:
        """``text`` with every spelling of the secrets and every structural credential masked."""
        if not text:
            return text
        spans = self._spans(text, self._ix)
        if spans:
            pieces: list[str] = []
            at = 0
            for start, end in _merge(spans):
                pieces.append(text[at:start])
                pieces.append(MASK)
                at = end
            pieces.append(text[at:])
            text = "".join(pieces)
        return scrub(text)

    def leaves_alone(self, text: str) -> bool:
        """True when redacting ``text``, any part of it, or the strings of the JSON it spells,
        can change nothing: one linear pass over a whole answer instead of one call per string.

        No escape character (so every JSON string is a plain substring and no decoded reading
        differs), no secret form or short-secret candidate, no credential header name (a member
        named like one is masked whatever its value) and no structural credential spelling.
        False only costs the per-string path.
        """
        # ESCAPE_CHARS's three characters as substring tests: a character-class search steps
        # through the text in Python's regex engine, about 20 times slower on a 20 KB answer.
        if "%" in text or "&" in text or "\\" in text or "\0" in text:
            return False
        ix = self._ix
        if ix.long.any_in(text):
            return False
        if ix.candidates is not None and ix.candidates.search(text) is not None:
            return False
        lowered = text.lower()
        if any(name in lowered for name in self._header_needles):
            return False
        return not scrub_can_change(text, lowered)

    def member(self, name: str, value: str) -> str:
        """The value of a JSON member or header pair ``name: value``, redacted.

        A credential header's value is masked whatever it is; a short secret is masked when it is
        the whole value of a credential-named member (optionally after ``Bearer`` and the like).
        """
        key = name.strip().lower()
        if key in self._header_names:
            return MASK if value else value
        value = self(value)
        pattern = self._ix.value
        if key in self._names and pattern is not None and pattern.fullmatch(value.strip()):
            return MASK
        return value

    def mask_bytes(self, data: bytes) -> tuple[bytes, int]:
        """``data`` with every secret spelling in it overwritten by ``*`` (same length, so binary
        formats keep their offsets), and how many places were masked. The bytes are read as
        Latin-1 (1:1) and as UTF-8 (a UTF-8 secret next to escaped text)."""
        ix = self._ix
        latin = data.decode("latin-1")
        spans = self._spans(latin, ix)
        spans.extend(structural_spans(latin))
        if not data.isascii():
            utf8 = data.decode("utf-8", "surrogateescape")
            spans.extend(_byte_spans(utf8, self._spans(utf8, ix)))
        merged = _merge(spans)
        if not merged:
            return data, 0
        out = bytearray(data)
        for start, end in merged:
            out[start:end] = b"*" * (end - start)
        return bytes(out), len(merged)

    def _spans(self, text: str, ix: _Index) -> list[tuple[int, int]]:
        spans = [*self._long_spans(text, ix), *self._position_spans(text, ix)]
        if "\0" in text:  # UTF-16/32 read as UTF-8 or Latin-1: the characters between NULs too
            squeezed = Squeezed(text)
            spans.extend(squeezed.original(s, e) for s, e in self._spans(squeezed.text, ix))
        return spans

    def _long_spans(self, text: str, ix: _Index) -> list[tuple[int, int]]:
        forms = ix.long
        if not forms:
            return []
        spans = forms.find_all(text) if forms.any_in(text) else []
        if ESCAPE_CHARS.search(text) is None:
            return spans
        # Escapes decoded once, and all the way at once (one character escaped deeper). When a
        # secret itself looks escaped: also twice and three times (nested encoders), and one
        # family at a time. Readings that decode to a text already searched are skipped.
        readings = [(ONCE, _DECODE_ROUNDS if ix.escaped else 1)]
        if ix.escaped:
            readings += [(family, 1) for family in FAMILIES]
        if NESTED.search(text):
            readings.append((DEEP, 1))
        seen: set[str] = {text}
        once: str | None = None
        for reading, rounds in readings:
            chain: list[Canonical] = []
            current = text
            for _ in range(rounds):
                if not has_escapes(current, reading):
                    break
                decoded = decoded_text(current, reading)
                if once is None:
                    once = decoded
                if decoded in seen:
                    break
                seen.add(decoded)
                if forms.any_in(decoded):
                    while len(chain) < rounds and (not chain or chain[-1].text != decoded):
                        chain.append(Canonical(chain[-1].text if chain else text, reading))
                    spans.extend(_through(chain, s, e) for s, e in forms.find_all(decoded))
                current = decoded
        if once is not None and ix.tails and ix.tails.any_in(once):
            spans.extend(self._swallowed(text, ix))
        return spans

    def _swallowed(self, text: str, ix: _Index) -> list[tuple[int, int]]:
        """Spellings whose first characters an escape before them swallowed: ``%`` then
        ``00ab%3A`` reads as ``%00`` then ``ab:``. Found as the rest of a form, right after a token
        that ends with the form's first characters."""
        canonical = Canonical(text)
        spans: list[tuple[int, int]] = []
        for s, e in ix.tails.find_all(canonical.text):
            start, end = canonical.original(s, e)
            for head in ix.heads[canonical.text[s:e]]:
                if text.endswith(head, 0, start):
                    spans.append((start - len(head), end))
        return spans


class _Index:
    """What the secrets are searched by: built whole by :meth:`Redactor.learn`, never changed.

    ``long``: every canonical form of the secrets of at least :data:`MIN_SECRET_LENGTH`
    characters; ``tails``/``heads``: those forms without the first characters an escape before
    them could swallow; ``candidates``/``value``: the short secrets (credential positions only).
    """

    __slots__ = ("candidates", "escaped", "heads", "long", "numeric", "tails", "value")

    def __init__(self, secrets: Sequence[str], words: Sequence[str]) -> None:
        long_forms: set[str] = set()
        short: set[str] = set()
        for secret in secrets:
            if not secret:
                continue
            if len(secret) >= MIN_SECRET_LENGTH:
                long_forms |= _forms(secret)
            else:
                short |= short_spellings(secret)
        self.long = Literals(long_forms)
        heads: dict[str, list[str]] = {}
        for form in self.long.literals:
            for j in range(1, min(_SWALLOWED, len(form) - 4) + 1):
                if _SWALLOWABLE.fullmatch(form[:j]):
                    heads.setdefault(form[j:], []).append(form[:j])
        self.heads = {tail: tuple(found) for tail, found in heads.items()}
        self.tails = Literals(self.heads)
        self.escaped = any(ESCAPE_CHARS.search(secret) for secret in secrets)
        self.numeric = any(_NUMERIC.fullmatch(secret) for secret in secrets)
        self.candidates: re.Pattern[str] | None = None
        self.value: re.Pattern[str] | None = None
        if short:
            values = "|".join(re.escape(s) for s in sorted(short, key=len, reverse=True))
            alternatives = "|".join(re.escape(w) for w in words)
            # A short value right after a separator; what comes before it is checked by _positioned.
            self.candidates = re.compile(r"(?:(?<=[:=,\s+\"'])|(?<=%3[aAdD])|(?<=%20))(?:" + values + ")" + _VALUE_END)
            self.value = re.compile(r"(?i:(?:" + alternatives + r")(?:[ \t]|%20|\+)+)?(?:" + values + ")")


@functools.lru_cache(maxsize=4096)
def _forms(secret: str) -> frozenset[str]:
    """A secret's canonical forms, worked out once: a server learns a fetched token again with
    every new one (the whole set is rebuilt)."""
    return frozenset(canonical_forms(secret))


def mask_before_decoding(data: bytes, redact: Callable[[str], str]) -> bytes:
    """A body about to be decoded as text, with every secret spelling its bytes hold in UTF-16 or
    UTF-32 (either byte order, with or without a BOM or charset: characters between NULs)
    overwritten first. Decoded with the wrong charset (UTF-8, Latin-1, the other byte order)
    such text shows the secret to anyone who drops the NULs or swaps bytes back; the decoded
    text's own redaction cannot see that."""
    if b"\0" not in data or not isinstance(redact, Redactor):
        return data
    return redact.mask_bytes(data)[0]


_DECODE_ROUNDS = 3
_NUMERIC = re.compile(r"[0-9][0-9.eE+-]*")  # what the repr of a JSON number can hold
_SWALLOWED = 8  # the most characters an escape takes after its introducer: &#x + 6 hex digits + ;
# What an escape can take from the start of a spelling: hex digits (%XX, \xXX, \uXXXX, &#xHH;,
# &#DD;, with the reference's ";"), or the rest of an entity name up to its ";".
_SWALLOWABLE = re.compile(r"[0-9A-Fa-f]+;?|[A-Za-z][A-Za-z0-9]*;")


def _through(chain: Sequence[Canonical], start: int, end: int) -> tuple[int, int]:
    """A span of the last reading in ``chain``, in the original text."""
    for canonical in reversed(chain):
        start, end = canonical.original(start, end)
    return start, end


def _byte_spans(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Character spans of ``text`` (decoded UTF-8, surrogateescape) as spans of its bytes."""
    offsets = sorted({o for span in spans for o in span})
    at_byte: dict[int, int] = {}
    done = length = 0
    for offset in offsets:  # one walk over the text, however many spans
        length += len(text[done:offset].encode("utf-8", "surrogateescape"))
        at_byte[offset] = length
        done = offset
    return [(at_byte[s], at_byte[e]) for s, e in spans]


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
