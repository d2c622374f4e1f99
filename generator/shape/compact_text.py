"""Description text as the model should see it: first paragraph, links and tags reduced to their
text, pointer-only and boilerplate sentences dropped, cut at a word near a limit.

Part of compaction (:mod:`generator.shape.compact`); pure functions of strings.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable

ELLIPSIS = "…"

_MD_LINK = re.compile(
    r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?[^()\s<>]*(?:\([^()\s]*\)[^()\s<>]*)*>?(?:\s+\"[^\"]*\")?\s*\)"
)
_MD_REF_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])+)\]\[[^\[\]]*\]")
_AUTOLINK = re.compile(r"<(https?://[^<>\s]+)>")
_HTML_TAGS = (
    "a|abbr|b|br|code|del|details|div|em|h[1-6]|hr|i|img|kbd|li|ol|p|pre|s|small|span|strong|sub|summary|sup"
    "|table|tbody|td|th|thead|tr|u|ul"
)
_HTML_TAG = re.compile(rf"</?(?:{_HTML_TAGS})(?:\s[^<>]*)?/?>", re.IGNORECASE)
_HEADING = re.compile(r"^\s{0,3}(#{1,6}\s|[-=*_]{3,}\s*$)")
_ADMONITION = re.compile(r"^[ \t]*>[ \t]*\[!\w+\][ \t]*", re.MULTILINE)
_QUOTE_MARK = re.compile(r"^[ \t]*>[ \t]?", re.MULTILINE)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_SPACES = re.compile(r"[ \t]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”)\]]*\s+(?=[A-Z0-9\"'`“(\[*_])")
_REFERENCE_ONLY = re.compile(
    r"^(?:\(?\s*)(?:for (?:more|further|additional) (?:information|details|info)|for details|to learn more|learn more"
    r"|for an example|for examples|for more about)\b[^.]*?\bsee\b"
    r"|^\(?see\b.*\b(?:for (?:more|further) (?:information|details)|for details|documentation|docs)\b",
    re.IGNORECASE,
)


_MARKUP = ("[", "<", ">", "\r")  # what any of the substitutions below needs to find


def clean_text(text: str) -> str:
    """Markdown links, autolinks and common HTML tags reduced to their text; whitespace tidied."""
    if not any(mark in text for mark in _MARKUP):  # most descriptions: no link, tag or quote to reduce
        return "\n".join(_SPACES.sub(" ", line).strip() for line in text.split("\n")).strip()
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    for _ in range(3):  # nested links ([![badge](img)](url)) unwrap from the inside out
        new = _MD_LINK.sub(lambda m: m.group(1), text)
        if new == text:
            break
        text = new
    text = _MD_REF_LINK.sub(lambda m: m.group(1), text)
    text = _AUTOLINK.sub(lambda m: m.group(1), text)
    text = re.sub(r"<br\s*/?>", "\n", text, flags=re.IGNORECASE)
    text = _HTML_TAG.sub("", text)
    text = _ADMONITION.sub("", text)
    text = _QUOTE_MARK.sub("", text)
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    return "\n".join(lines).strip()


_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


def first_paragraph(text: str) -> str:
    """The first paragraph that is prose (headings and rules skipped); wrapped lines joined, list
    items kept on their own lines."""
    for paragraph in _PARAGRAPH_BREAK.split(text):
        lines = [line.strip() for line in paragraph.strip().split("\n") if line.strip()]
        while lines and _HEADING.match(lines[0]):
            lines.pop(0)
        if lines:
            joined = lines[0]
            for line in lines[1:]:
                joined += ("\n" if _LIST_ITEM.match(line) else " ") + line
            return joined
    return ""


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text) if s]


def _is_reference_only(sentence: str) -> bool:
    return bool(_REFERENCE_ONLY.search(sentence.strip()))


def cut(text: str, limit: int) -> str:
    """``text`` if it fits; else its whole sentences that fit; else its first sentence cut at a
    word, ending with "…"."""
    if len(text) <= limit:
        return text
    kept = ""
    for sentence in sentences(text):
        joined = f"{kept} {sentence}" if kept else sentence
        if len(joined) > limit:
            break
        kept = joined
    if kept:
        return kept
    room = max(limit - len(ELLIPSIS), 1)
    head = text[:room]
    space = max(head.rfind(" "), head.rfind("\n"))
    if space >= room // 2:
        head = head[:space]
    return head.rstrip(" ,;:-\n") + ELLIPSIS


def compact_text(
    text: str, limit: int, boilerplate: frozenset[str] = frozenset(), *, after_summary: bool = False
) -> str:
    """One description as the model should see it (see the module docstring).

    ``after_summary``: the text follows the operation's summary, so its own first sentence is not
    the tool description's first and may be dropped as boilerplate too.
    """
    kept = []
    for position, sentence in enumerate(_first_sentences(text)):
        if _is_reference_only(sentence):
            continue
        if (position > 0 or after_summary) and sentence.strip() in boilerplate:
            continue
        kept.append(sentence)
    return cut(" ".join(kept).strip(), limit)


@functools.lru_cache(maxsize=1 << 15)
def _first_sentences(text: str) -> tuple[str, ...]:
    """The sentences of the cleaned first paragraph; memoised, since an API repeats its descriptions
    (GitHub's 1,223 operations share most parameter texts) and boilerplate finding reads them all first."""
    return tuple(sentences(first_paragraph(clean_text(text))))


def find_boilerplate(texts: Iterable[str | tuple[str, bool]], repeats: int) -> frozenset[str]:
    """Sentences that occur at least ``repeats`` times, not counting first sentences.

    A text given as ``(text, True)`` follows a summary: its first sentence counts as well.
    """
    if repeats <= 0:
        return frozenset()
    counts: Counter[str] = Counter()
    for item in texts:
        text, after_summary = (item, False) if isinstance(item, str) else item
        found = _first_sentences(text)
        for sentence in found if after_summary else found[1:]:
            counts[sentence.strip()] += 1
    return frozenset(s for s, n in counts.items() if n >= repeats)


_WORD = re.compile(r"[A-Za-z][a-z]*|[0-9]+")
# Words a description may add to a property name and still say nothing more than the name.
_FILLER = frozenset(
    "a an the of for to this that which is are be its it in on by with as or and given "
    "name number id identifier identifies unique value string integer boolean flag field parameter param "
    "argument".split()
)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _same_word(a: str, b: str) -> bool:
    return a == b or (min(len(a), len(b)) >= 3 and (a.startswith(b) or b.startswith(a)))


def is_trivial_description(name: str, description: str) -> bool:
    """Whether ``description`` only restates the property name ("The name of the secret." for
    ``secret_name``): every word is the name's or filler."""
    own = _words(name)
    words = _words(description)
    if not own or len(words) > 12 or "`" in description:
        return False
    return all(w in _FILLER or any(_same_word(w, o) for o in own) for w in words)


def restates(summary: str, sentence: str) -> bool:
    """Whether every content word of ``summary`` is in ``sentence`` ("List repository issues" and
    "Lists issues in a repository.")."""
    words = [w for w in _words(summary) if w not in _FILLER]
    other = _words(sentence)
    return bool(words) and all(any(_same_word(w, o) for o in other) for w in words)
