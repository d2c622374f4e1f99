"""The ranking of bridge/modes/search.py before issue 20 (commit c57281e), kept so bench/search_bench.py
can measure before and after in one run on the same catalogue; not used by the bridge.

Its own docstring, as it was:
Which operations a query means: a BM25 index over operations, built once, ranked per query.

``SearchIndex(entries).rank(query, limit, allowed)`` is the whole interface (discovery's
``search_operations`` and code mode use it): the names of at most ``limit`` entries that
``allowed(name)`` admits, best first. Ranking, in order:

1. An exact tool name or ``METHOD /path`` (case and spacing aside) comes first.
2. Every other entry that shares a word with the query, by BM25 summed over weighted fields
   (``FIELD_WEIGHTS``): the tool name (split at case changes and separators:
   ``listCoreV1NamespacedPod`` is ``list core v1 namespaced pod``), the summary, the path (split
   at ``/`` and braces), the tags and the description's first sentence; times the share of the
   query's words the entry answers (Lucene's coordination factor). Words are lower-cased and
   lightly stemmed (``pods``/``pod``, ``namespaced``/``namespace`` meet), words of one meaning
   are spelt alike (``repository`` is ``repo``, ``read`` is ``get``), and a query word also
   matches, at a discount, a short table of near-synonyms (``remove`` -> ``delete``) and the few
   most common longer words it begins (``deploy`` -> ``deployment``).
3. A deprecated operation (OpenAPI ``deprecated: true``, or a description sentence that starts
   with "deprecated", Kubernetes' convention) has its score cut to ``DEPRECATED_FACTOR``: it
   ranks below its replacement, which shares its words, unless it is asked for by name.

A blank query lists every entry in the order given. ``rank`` never raises, whatever the string.

Cost: building is linear in the catalogue's text. A query is cut to ``MAX_QUERY_CHARS`` and
``MAX_TERMS`` distinct words, each expanded to at most ``MAX_EXPANSIONS`` other words, so one
query scores a bounded number of (word, field) pairs, each over the entries holding that word.
No regular expression is built from the query; the fixed ones here run in linear time.

The scoring is ``rank_bm25.BM25Plus`` with ``delta=0`` (rank-bm25 over bm25s: one module over
numpy, where bm25s also brings scipy): BM25 with the ``log((N + 1) / n)`` idf, which stays
positive, unlike ``BM25Okapi``'s, which is zero for a word in exactly half of a small catalogue's
operations and would make that word count for nothing.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bridge.contract.catalogue import ToolEntry

__all__ = ["Round1Index"]

MAX_QUERY_CHARS = 512
MAX_TERMS = 16
MAX_EXPANSIONS = 4
# How many vocabulary words sharing a prefix are looked at before the most common are kept.
_EXPANSION_CANDIDATES = 64
_PREFIX_MIN, _PREFIX_MAX = 3, 8
_SENTENCE_CHARS = 300

FIELD_WEIGHTS = {"name": 3.0, "summary": 2.0, "path": 1.0, "tags": 0.5, "description": 0.5}
PREFIX_FACTOR = 0.4
SYNONYM_FACTOR = 0.5
DEPRECATED_FACTOR = 0.2
# A summary holding the query's words in the query's order, next to one another ("list pull
# requests" in "List pull requests"), and one that is exactly those words: the operation the words
# name, over one that merely uses them ("Get all requested reviewers for a pull request").
PHRASE_FACTOR = 1.5
EXACT_SUMMARY_FACTOR = 2.0

# Words that say nothing about which operation is meant; dropped unless nothing else is left.
_STOP = frozenset(
    "a an and are as at be by can do does for from how i in into is it its me my of on or our please "
    "some that the their this to via what which with you your".split()
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


def _split_case(run: str) -> list[str]:
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
    return parts


def _undouble(word: str) -> str:
    if len(word) > 2 and word[-1] == word[-2] and word[-1] not in "lsz":
        return word[:-1]
    return word


def _has_vowel(word: str) -> bool:
    return any(char in _VOWELS for char in word)


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


def words(text: str) -> list[str]:
    """Lower-case, stemmed words of ``text``: split at separators, ``/``, braces and case changes;
    words of one meaning (``repository``, ``repo``) are spelt alike."""
    found = (stem(part.casefold()) for run in _RUN.findall(text) for part in _split_case(run))
    return [_CANONICAL.get(word, word) for word in found]


def _meaningful(text: str) -> list[str]:
    found = words(text)
    kept = [word for word in found if word not in _STOP]
    return kept or found


def _synonym_table() -> dict[str, tuple[str, ...]]:
    def spelt(word: str) -> str:
        return _CANONICAL.get(stem(word), stem(word))

    table: dict[str, list[str]] = defaultdict(list)
    for group in _NEAR:
        spellings = list(dict.fromkeys(spelt(word) for word in group))
        for word in spellings:
            table[word].extend(other for other in spellings if other != word)
    for word, others in _ONE_WAY.items():
        table[spelt(word)].extend(spelt(other) for other in others)
    return {word: tuple(dict.fromkeys(others)) for word, others in table.items()}


_SYNONYM_TABLE = _synonym_table()


def first_sentence(text: str) -> str:
    """The text up to its first sentence end or line break, at most ``_SENTENCE_CHARS`` characters."""
    text = text.strip()[:_SENTENCE_CHARS]
    ends = [i for i in (text.find(". "), text.find(".\n"), text.find("\n")) if i >= 0]
    return text[: min(ends)] if ends else text


_DEPRECATED_PREFIX = "[deprecated]"


# "Deprecated" opening a sentence and closed by punctuation: "... of Pod. deprecated: use the 'watch'
# parameter" (Kubernetes), "[Deprecated] ..." (the generator's prefix); not "Deprecated fields are ...".
_SAYS_DEPRECATED = re.compile(r"(?:^|[.!]\s+|\n[ \t]*)\[?deprecated\]?(?:[:.!,)\]—-]|\s+-|$)")


def says_deprecated(description: str) -> bool:
    """Whether the description (its first 2000 characters: the catalogue's, never the query) says so."""
    return _SAYS_DEPRECATED.search(description[:2000].casefold()) is not None


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


@dataclass(frozen=True, slots=True)
class SearchEntry:
    """What the index knows of one operation. ``operation`` is ``METHOD /path`` when it has one."""

    name: str
    operation: str | None = None
    summary: str = ""
    description: str = ""
    tags: tuple[str, ...] = ()
    deprecated: bool = False

    @classmethod
    def of(cls, entry: ToolEntry) -> SearchEntry:
        """The search entry of a catalogue tool."""
        return cls(
            name=entry.name,
            operation=entry.operation,
            summary=entry.title or "",
            description=entry.description,
            tags=entry.tags,
            deprecated=entry.deprecated,
        )


def _fields(entry: SearchEntry) -> dict[str, list[str]]:
    description = entry.description.strip()
    if description.casefold().startswith(_DEPRECATED_PREFIX):
        description = description[len(_DEPRECATED_PREFIX) :].lstrip()
    summary = entry.summary.strip()
    if summary and description.startswith(summary):
        description = description[len(summary) :]
    elif not summary:  # no summary: the description's first sentence stands in for it
        summary, description = first_sentence(description), description[len(first_sentence(description)) :]
    return {
        "name": _meaningful(entry.name),
        "summary": _meaningful(summary[:_SENTENCE_CHARS]),
        "path": _meaningful(entry.operation.split(" ", 1)[-1] if entry.operation else ""),
        "tags": _meaningful(" ".join(entry.tags)),
        "description": _meaningful(first_sentence(description.lstrip(". \n"))),
    }


class Round1Index:
    """Operations ranked for a query. Build once per catalogue (linear in its text); ``rank`` is
    bounded per query whatever the query is. Safe to share between tasks: nothing changes after
    building."""

    def __init__(self, entries: Iterable[SearchEntry | ToolEntry]) -> None:
        self._entries = tuple(e if isinstance(e, SearchEntry) else SearchEntry.of(e) for e in entries)
        self._names = tuple(entry.name for entry in self._entries)
        self._factor = [
            DEPRECATED_FACTOR if entry.deprecated or says_deprecated(entry.description) else 1.0
            for entry in self._entries
        ]
        self._exact: dict[str, list[int]] = defaultdict(list)
        for position, entry in enumerate(self._entries):
            self._exact[_normal(entry.name)].append(position)
            if entry.operation:
                self._exact[_normal(entry.operation)].append(position)
        columns: dict[str, list[list[str]]] = {field: [] for field in FIELD_WEIGHTS}
        postings: dict[str, list[int]] = defaultdict(list)
        for position, entry in enumerate(self._entries):
            for field, found in _fields(entry).items():
                columns[field].append(found)
                for word in found:
                    held = postings[word]
                    if not held or held[-1] != position:  # positions arrive in order: no sorting
                        held.append(position)
        self._postings = dict(postings)
        self._summaries = tuple(columns["summary"])
        # Imported here: numpy comes with it, and serving in tools mode never searches.
        from rank_bm25 import BM25Plus

        # One BM25 per field (its own lengths and idf); a field no entry fills is left out.
        self._bm25: dict[str, Any] = {
            field: BM25Plus(column, k1=1.2, b=0.75, delta=0.0) for field, column in columns.items() if any(column)
        }
        self._prefixes: dict[str, list[str]] = defaultdict(list)
        for word in self._postings:
            for size in range(_PREFIX_MIN, min(len(word) - 1, _PREFIX_MAX) + 1):
                self._prefixes[word[:size]].append(word)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def names(self) -> tuple[str, ...]:
        """Every entry's name, in the order given."""
        return self._names

    def _expansions(self, term: str, terms: Sequence[str]) -> list[tuple[str, float]]:
        """``term`` itself, its synonyms and the most common longer words it begins, with weights;
        never another word of the query, which counts on its own."""
        found = [(term, 1.0)]
        found += [
            (other, SYNONYM_FACTOR)
            for other in _SYNONYM_TABLE.get(term, ())
            if other in self._postings and other not in terms
        ]
        if len(term) >= _PREFIX_MIN:
            longer = [
                word
                for word in self._prefixes.get(term[:_PREFIX_MAX], [])[:_EXPANSION_CANDIDATES]
                if word != term and word.startswith(term) and word not in terms
            ]
            longer.sort(key=lambda word: -len(self._postings[word]))
            found += [(word, PREFIX_FACTOR) for word in longer[:MAX_EXPANSIONS]]
        return found

    def _scores(self, terms: Sequence[str]) -> dict[int, float]:
        total: dict[int, float] = defaultdict(float)
        matched: dict[int, int] = defaultdict(int)
        for term in terms:
            # A query word counts once per entry: through its best-scoring spelling.
            best: dict[int, float] = {}
            for word, weight in self._expansions(term, terms):
                held = self._postings.get(word, [])
                if not held:
                    continue
                summed = [0.0] * len(held)
                for field, bm25 in self._bm25.items():
                    if word in bm25.idf:
                        field_weight = FIELD_WEIGHTS[field] * weight
                        for i, value in enumerate(bm25.get_batch_scores([word], held)):
                            summed[i] += field_weight * value
                for position, value in zip(held, summed, strict=True):
                    if value > best.get(position, 0.0):
                        best[position] = value
            for position, value in best.items():
                total[position] += value
                matched[position] += 1
        # Lucene's coordination factor: an entry that answers every word of the query beats one
        # that answers some of them very well (a summary "Create a pull request" for "open a pull
        # request", over "Request reviewers for a pull request").
        # The phrase is the query's words the index knows: a word no operation has is in no summary.
        known = [term for term in terms if term in self._postings]
        return {
            position: value * matched[position] / len(terms) * self._phrase(position, known)
            for position, value in total.items()
        }

    def _phrase(self, position: int, terms: Sequence[str]) -> float:
        """PHRASE_FACTOR or EXACT_SUMMARY_FACTOR when the summary says the query's words as a phrase."""
        summary = self._summaries[position]
        if len(terms) < 2 or len(summary) < len(terms):
            return 1.0
        if list(summary) == list(terms):
            return EXACT_SUMMARY_FACTOR
        width = len(terms)
        runs = (summary[i : i + width] for i in range(len(summary) - width + 1))
        return PHRASE_FACTOR if any(run == list(terms) for run in runs) else 1.0

    def rank(self, query: str, limit: int = 10, allowed: Callable[[str], bool] | None = None) -> list[str]:
        """The names of at most ``limit`` entries that ``allowed`` admits (all when None), best first.

        An exact name or ``METHOD /path`` comes first; then entries sharing a word with the query;
        a blank query lists every entry in the order given. Never raises for any query string.
        """
        if limit <= 0:
            return []
        query = query[:MAX_QUERY_CHARS]
        exact = list(dict.fromkeys(self._exact.get(_normal(query), ())))
        terms = list(dict.fromkeys(_meaningful(query)))[:MAX_TERMS]
        if not terms and not query.strip():
            order: Iterable[int] = range(len(self._entries))
        else:
            scores = self._scores(terms)
            first = set(exact)
            scored = sorted(
                (
                    (-value * self._factor[position], position)
                    for position, value in scores.items()
                    if position not in first and value > 0.0
                ),
            )
            order = [*exact, *(position for _, position in scored)]
        picked: list[str] = []
        for position in order:
            name = self._names[position]
            if allowed is None or allowed(name):
                picked.append(name)
                if len(picked) >= limit:
                    break
        return picked
