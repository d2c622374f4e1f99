"""Excerpts of outside text for the model (P26): redacted first, cut after, on every path.

An upstream's error body, a running operation's status word, a workflow's failure, a program's
diagnostic, a task's status message: each is shown cut to a few hundred or thousand characters.
Cutting first and redacting after lets a secret that straddles the cut through with all but its
last characters (redaction looks for whole spellings). :func:`excerpt` is the one way these
paths cut text: it redacts, then cuts on a character boundary, and never leaves part of a mask
(``**`` at the end would read as a cut secret, or as the text's own asterisks).

Redaction is linear, but a text may be megabytes long for a 64-character excerpt: past
``limit + SLACK`` characters only that much is read and redacted, and the last ``SLACK``
characters of what redaction returns are dropped too, since a secret straddling the read's end
lies there. (Keeping ``limit`` characters of the redacted read instead would not do: a read full
of masked secrets is shorter than the text it came from, which brings the cut secret closer.)
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["SLACK", "cut_redacted", "cut_redacted_bytes", "excerpt"]

SLACK = 32 * 1024
"""Longer than any spelling of a secret the redactor recognises (an escaped 2 KB token)."""


def excerpt(
    text: str,
    redact: Callable[[str], str],
    limit: int,
    *,
    mark: str = "",
    truncated: bool = False,
    partial: bool = False,
) -> str:
    """``text`` redacted, then cut to at most ``limit`` characters; ``mark`` is appended when
    something was left out (or ``truncated`` says the text is itself part of a longer one).

    ``partial``: ``text`` is the start of a longer text, cut before it came here (a read of a
    bounded number of bytes); a secret may straddle its end, so its last :data:`SLACK` characters
    never show."""
    if len(text) > limit + SLACK:
        text, partial = text[: limit + SLACK], True
    if partial:
        redacted = redact(text)
        return cut_redacted(redacted, max(0, min(limit, len(redacted) - SLACK)), mark=mark, truncated=True)
    return cut_redacted(redact(text), limit, mark=mark, truncated=truncated)


def cut_redacted(text: str, limit: int, *, mark: str = "", truncated: bool = False) -> str:
    """Already redacted ``text`` cut to at most ``limit`` characters, never inside a mask; ``mark``
    is appended when something was left out (or ``truncated`` says so)."""
    if len(text) <= limit:
        return text + mark if truncated else text
    shown = text[:limit]
    if text[limit] == "*" and shown.endswith("*"):
        shown = shown.rstrip("*")  # part of a mask: all of it goes
    return shown.rstrip() + mark if mark else shown


def cut_redacted_bytes(data: bytes, limit: int) -> bytes:
    """Already redacted ``data`` cut to at most ``limit`` bytes, never inside a mask."""
    if len(data) <= limit:
        return data
    shown = data[:limit]
    if data[limit : limit + 1] == b"*" and shown.endswith(b"*"):
        shown = shown.rstrip(b"*")
    return shown
