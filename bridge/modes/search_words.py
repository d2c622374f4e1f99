"""The words of search: operations and queries split, lower-cased, stemmed and spelt alike.

``words(text)`` is what both the index and a query are made of (bridge/modes/search.py): runs of
letters and digits, split at case changes (``listCoreV1NamespacedPod`` is ``list core v1
namespac pod``), lightly stemmed (plurals, ``-ed``, ``-ing``: only agreement matters, since the
index and the query are stemmed alike), and words of one meaning spelt as one (``repository`` is
``repo``). ``SYNONYMS`` holds the words a query word also matches at a discount: near-synonyms
of API verbs (``remove``/``delete``), and the nouns different APIs use for one thing (a Asana
"story" is a comment, a GitHub "hook" a webhook). Every regular expression here is fixed and
runs in linear time.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict

__all__ = ["STOP", "SYNONYMS", "meaningful", "raw_words", "spelt", "split_case", "stem", "words"]

# Words that say nothing about which operation is meant; dropped unless nothing else is left.
STOP = frozenset(
    "a about am an and are as at be been by can could did do does for from has have how i in into is it its many me "
    "much my of on or our please should some that the their there this to via was were what when where which who "
    "whom whose why will with would you your s t".split()
)
# Words that mean the same in API descriptions: each is indexed and queried as the group's first.
_SAME = (
    ("get", "read", "fetch", "retrieve"),
    ("delete", "destroy", "erase"),
    ("repo", "repository"),
    ("org", "organization", "organisation"),
    ("config", "configuration"),
    ("env", "environment"),
    ("app", "application"),
    ("info", "information"),
    ("stat", "statistic", "stats"),
    ("msg", "message"),
)
# Words that often mean one another: each of a group's words also matches the others, at SYNONYM_FACTOR.
_NEAR = (
    ("get", "show", "view", "describe", "inspect"),
    ("delete", "remove", "drop"),
    ("create", "add", "make"),
    ("update", "edit", "modify", "change", "patch"),
    ("list", "enumerate", "browse"),
    ("find", "search", "query", "lookup"),
    ("run", "trigger", "execute", "exec", "start"),
    # Nouns APIs spell differently for one thing: Asana's "stories" are a task's comments, GitHub's
    # "hooks" its webhooks, a team's "members" its users, Stripe's "charges" payments.
    ("comment", "story", "note"),
    ("webhook", "hook"),
    ("member", "user"),
    ("charge", "payment"),
)
# One way only: in a query these are verbs (set a secret, open an issue, publish a release); in an
# API's text they are often a noun or a state (StatefulSet, open issues, unpublished).
_ONE_WAY = {
    "set": ("update", "create"),
    "open": ("create",),
    "new": ("create",),
    "publish": ("create",),
    "register": ("create",),
}

# Runs of letters and digits (any script); underscores, punctuation and spaces separate them.
_RUN = re.compile(r"[^\W_]+")
_VOWELS = frozenset("aeiouy")


# split_case and stem are memoised: Microsoft Graph's 11,422 operations hold 266,589 runs of letters
# but only 8,850 distinct ones, and indexing them took half of the search index's build (bounded: a
# query's words go through them too).
_CACHED_WORDS = 1 << 14


@functools.lru_cache(maxsize=_CACHED_WORDS)
def split_case(run: str) -> tuple[str, ...]:
    """``listCoreV1NamespacedPod`` -> list, Core, V1, Namespaced, Pod; ``HTTPServer`` -> HTTP, Server."""
    parts: list[str] = []
    start = 0
    for i in range(1, len(run)):
        char, before = run[i], run[i - 1]
        if char.isupper() and (
            before.islower() or before.isdigit() or (before.isupper() and i + 1 < len(run) and run[i + 1].islower())
        ):
            parts.append(run[start:i])
            start = i
    parts.append(run[start:])
    return tuple(parts)


def _undouble(word: str) -> str:
    if len(word) > 2 and word[-1] == word[-2] and word[-1] not in "lsz":
        return word[:-1]
    return word


def _has_vowel(word: str) -> bool:
    return any(char in _VOWELS for char in word)


@functools.lru_cache(maxsize=_CACHED_WORDS)
def stem(word: str) -> str:
    """A light English stemmer, applied alike to the index and the query, so only agreement matters:
    plurals, ``-ed``/``-ing`` and a final ``e`` go (``namespaced``, ``namespaces`` -> ``namespac``)."""
    if len(word) < 4 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ed") and len(word) > 4 and _has_vowel(word[:-2]):
        word = _undouble(word[:-2])
    elif word.endswith("ing") and len(word) > 5 and _has_vowel(word[:-3]):
        word = _undouble(word[:-3])
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


def _canonical_table() -> dict[str, str]:
    table: dict[str, str] = {}
    for group in _SAME:
        for word in group[1:]:
            table[stem(word)] = stem(group[0])
    return table


_CANONICAL = _canonical_table()
# Compared after stemming, as words() gives them ("does" is "doe" by then).
_STOP_SPELT = frozenset(_CANONICAL.get(stem(word), stem(word)) for word in STOP) | STOP


def raw_words(text: str) -> list[str]:
    """The lower-cased words of ``text`` as written (split as :func:`words` splits, not stemmed)."""
    return [part.casefold() for run in _RUN.findall(text) for part in split_case(run)]


def spelt(word: str) -> str:
    """One lower-cased word as the index spells it (stemmed, its group's first word)."""
    stemmed = stem(word)
    return _CANONICAL.get(stemmed, stemmed)


def words(text: str) -> list[str]:
    """Lower-case, stemmed words of ``text``: split at separators, ``/``, braces and case changes;
    words of one meaning (``repository``, ``repo``) are spelt alike."""
    found = (stem(part.casefold()) for run in _RUN.findall(text) for part in split_case(run))
    return [_CANONICAL.get(word, word) for word in found]


def meaningful(text: str) -> list[str]:
    """:func:`words` without the words that say nothing (all of them when nothing else is left)."""
    found = words(text)
    kept = [word for word in found if word not in _STOP_SPELT]
    return kept or found


def _synonym_table() -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = defaultdict(list)
    for group in _NEAR:
        spellings = list(dict.fromkeys(spelt(word) for word in group))
        for word in spellings:
            table[word].extend(other for other in spellings if other != word)
    for word, others in _ONE_WAY.items():
        table[spelt(word)].extend(spelt(other) for other in others)
    return {word: tuple(dict.fromkeys(others)) for word, others in table.items()}


SYNONYMS = _synonym_table()
