"""Spec text made safe to show in a client: plain text, no links, bounded (instructions, titles, forms)."""

from __future__ import annotations

import html
import re

__all__ = ["DESCRIPTION_LIMIT", "TITLE_LIMIT", "first_paragraph", "plain_text"]

DESCRIPTION_LIMIT = 600
"""Characters of the spec's description that go into the server's instructions."""
TITLE_LIMIT = 100

_IMAGE = re.compile(r"!\[([^\[\]\n]{0,500})\]\([^)\n]{0,2000}\)")
_LINK = re.compile(r"\[([^\[\]\n]{0,500})\](?:\([^)\n]{0,2000}\)|\[[^\]\n]{0,200}\])")
_PASSES = 8  # nested markup is taken apart from the inside out, a bounded number of times
_LINK_DEFINITION = re.compile(r"(?m)^[ \t]{0,3}\[[^\]\n]{1,200}\]:[ \t]*\S+.*$")
_TAG = re.compile(r"<[^<>\n]{0,2000}>")
# What renderers turn into links by themselves: URLs with a scheme, www. hosts, e-mail addresses
# (those are kept readable, without the @ that makes them links).
# No word boundary: renderers link "_http://x" and "(www.x" too.
_URL = re.compile(r"(?i)[a-z][a-z0-9+.\-]{0,30}:(?://|[^\s]*@)\S*|www\.\S+")
_SCHEME_WORD = re.compile(r"(?i)(?:javascript|vbscript|data|mailto|file)\s*:")  # dangerous even unlinked
_EMAIL = re.compile(r"([\w.+\-]+)@([\w\-]+(?:\.[\w\-]+)+)")
_EMPHASIS = re.compile(r"\*\*|__|`+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_QUOTE_OR_BULLET = re.compile(r"(?m)^\s{0,3}(?:>\s?|#{1,6}\s+)")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_SPACES = re.compile(r"\s+")
_SPACE_BEFORE_STOP = re.compile(r" +([.,;:!?)])")


def plain_text(text: str, limit: int | None = None) -> str:
    """``text`` without markup a client could render as a link, an image or formatting, on one line.

    HTML tags (after entities are decoded, so ``&lt;a&gt;`` goes too), Markdown links and images
    (their text stays), reference definitions, bare URLs, ``www.`` hosts and e-mail addresses are
    removed; control and bidirectional-override characters are dropped; whitespace is collapsed.
    ``limit`` cuts at a word boundary and ends with an ellipsis.
    """
    text = _one_line(_clean(text))
    # Joining lines, closing up spaces and dropping stray angle brackets can bring a link back
    # together ("www.\n)", ".<@host.x"): until stable.
    for _ in range(_PASSES):
        before = text
        text = _one_line(_SCHEME_WORD.sub("", _EMAIL.sub(r"\1 at \2", _URL.sub("", text))))
        if text == before:
            break
    return _bounded(text, limit)


def first_paragraph(text: str | None, limit: int = DESCRIPTION_LIMIT) -> str | None:
    """The first paragraph of ``text`` that is not a heading, as :func:`plain_text`; None when empty."""
    if not text:
        return None
    for paragraph in _BLANK_LINE.split(text.replace("\r\n", "\n").replace("\r", "\n")):
        if _HEADING.match(paragraph) and "\n" not in paragraph.strip():
            continue  # a lone heading says nothing
        plain = plain_text(paragraph, limit)
        if plain:
            return plain
    return None


def _one_line(text: str) -> str:
    return _SPACE_BEFORE_STOP.sub(r"\1", _SPACES.sub(" ", text)).strip()


def _clean(text: str) -> str:
    text = html.unescape(text)
    text = _CONTROL.sub("", text)
    text = _LINK_DEFINITION.sub("", text)
    for _ in range(_PASSES):
        before = text
        text = _TAG.sub("", _LINK.sub(r"\1", _IMAGE.sub(r"\1", text)))
        if text == before:
            break
    text = _SCHEME_WORD.sub("", _EMAIL.sub(r"\1 at \2", _URL.sub("", text)))
    text = _QUOTE_OR_BULLET.sub("", text)
    return _EMPHASIS.sub("", text).replace("<", "").replace(">", "")


def _bounded(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"
