"""Which operations a query means: a BM25 index over operations, built once, ranked per query.

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
   matches, at a discount, a short table of near-synonyms (``remove`` -> ``delete``, ``comment``
   -> ``story``: bridge/modes/search_words.py), the few most common longer words it begins (``deploy``
   -> ``deployment``) and compounds it ends (``hook`` -> ``webhook``); two query words the index
   knows as one are that word (``sub tasks`` -> ``subtask``). A generic verb ("list", "get",
   "create") weighs ``VERB_TEXT_FACTOR``: it counts through step 3, since in an operation's text
   it is often a noun ("user task list").
3. Times how well the operation fits the request (bridge/modes/search_intent.py): the verb's intent
   against the operation's method and result (a listing for "list", ``GET /xs/{id}`` for "get a
   x"), and the query's nouns against the path ("list tasks in a project" is
   ``GET /projects/{id}/tasks``, not ``GET /tasks/{id}/projects``).
4. A deprecated operation (OpenAPI ``deprecated: true``, or a description sentence that starts
   with "deprecated", Kubernetes' convention) has its score cut to ``DEPRECATED_FACTOR``: it
   ranks below its replacement, which shares its words, unless it is asked for by name.
5. Then what the operation does against what the query asks (bridge/modes/search_effects.py, from the
   catalogue's annotations): a write never comes before the reads for a read query, nor a read before
   the writes for a write query, and a destructive operation is never first unless the query names
   a destructive verb.

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
from itertools import pairwise
from typing import Any

from bridge.contract.catalogue import ToolEntry
from bridge.contract.listing import listing
from bridge.contract.result_shape import MARKER_KEY
from bridge.modes.search_effects import Effects
from bridge.modes.search_intent import Request, Traits, fit, parse, traits
from bridge.modes.search_words import SYNONYMS, meaningful, raw_words, spelt, stem, words

__all__ = [
    "DEPRECATED_FACTOR",
    "FIELD_WEIGHTS",
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "SearchEntry",
    "SearchIndex",
    "says_deprecated",
    "stem",
    "words",
]

MAX_QUERY_CHARS = 512
MAX_TERMS = 16
MAX_EXPANSIONS = 4
# How many vocabulary words sharing a prefix are looked at before the most common are kept.
_EXPANSION_CANDIDATES = 64
_PREFIX_MIN, _PREFIX_MAX = 3, 8
_SUFFIX_MIN = 4
_SENTENCE_CHARS = 300

FIELD_WEIGHTS = {"name": 3.0, "summary": 2.0, "path": 1.0, "tags": 0.5, "description": 0.5}
PREFIX_FACTOR = 0.4
COMPOUND_FACTOR = 0.4
SYNONYM_FACTOR = 0.5
# A generic verb ("list", "get", "create") counts through the operation's kind (bridge/modes/search_intent.py);
# its text, often a noun elsewhere ("user task list"), weighs this much and is not a word to answer.
VERB_TEXT_FACTOR = 0.3
DEPRECATED_FACTOR = 0.2
# A summary holding the query's words in the query's order, next to one another ("list pull
# requests" in "List pull requests"), and one that is exactly those words: the operation the words
# name, over one that merely uses them ("Get all requested reviewers for a pull request").
PHRASE_FACTOR = 1.5
EXACT_SUMMARY_FACTOR = 2.0
# A read query's factor for an operation that is not read-only (its annotations) but named as a read.
UNPROMISED_READ = 0.7


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
    # Whether its result is an array or a page (bridge/contract/listing.py); None: no result schema.
    returns_list: bool | None = None
    # The catalogue's annotations (generator/parse/annotations.py); None: from the method alone.
    read_only: bool | None = None
    destructive: bool | None = None

    def reads(self) -> bool:
        if self.read_only is not None:
            return self.read_only
        return (self.operation or "").partition(" ")[0].upper() in ("GET", "HEAD", "OPTIONS")

    def destroys(self) -> bool:
        if self.destructive is not None:
            return self.destructive and not self.reads()
        return (self.operation or "").partition(" ")[0].upper() in ("DELETE", "PUT", "PATCH")

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
            returns_list=returns_list(entry.output_schema),
            read_only=entry.annotations.readOnlyHint,
            destructive=entry.annotations.destructiveHint,
        )


def returns_list(output_schema: Any) -> bool | None:
    """Whether a tool's output schema is a listing's (None when it has none)."""
    if not isinstance(output_schema, dict):
        return None
    return listing(output_schema, skip=frozenset({MARKER_KEY})) is not None


def _traits(entry: SearchEntry, summary: str) -> Traits:
    method, _, path = (entry.operation or "").partition(" ")
    return traits(method, path, entry.name, summary, entry.returns_list, reads=entry.reads())


def _summary_text(entry: SearchEntry) -> tuple[str, str]:
    """The summary (the description's first sentence when there is none) and the rest of the description."""
    description = entry.description.strip()
    if description.casefold().startswith(_DEPRECATED_PREFIX):
        description = description[len(_DEPRECATED_PREFIX) :].lstrip()
    summary = entry.summary.strip()
    if summary and description.startswith(summary):
        description = description[len(summary) :]
    elif not summary:  # no summary: the description's first sentence stands in for it
        summary, description = first_sentence(description), description[len(first_sentence(description)) :]
    return summary, description


def _fields(entry: SearchEntry) -> dict[str, list[str]]:
    summary, description = _summary_text(entry)
    return {
        "name": meaningful(entry.name),
        "summary": meaningful(summary[:_SENTENCE_CHARS]),
        "path": meaningful(entry.operation.split(" ", 1)[-1] if entry.operation else ""),
        "tags": meaningful(" ".join(entry.tags)),
        "description": meaningful(first_sentence(description.lstrip(". \n"))),
    }


class SearchIndex:
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
        self._traits = tuple(_traits(entry, _summary_text(entry)[0]) for entry in self._entries)
        self._effects = Effects(
            self._traits,
            reads=[entry.reads() for entry in self._entries],
            destroys=[entry.destroys() for entry in self._entries],
            deletes=[(entry.operation or "").startswith("DELETE ") for entry in self._entries],
        )
        # Imported here: numpy comes with it, and serving in tools mode never searches.
        from rank_bm25 import BM25Plus

        # One BM25 per field (its own lengths and idf); a field no entry fills is left out.
        self._bm25: dict[str, Any] = {
            field: BM25Plus(column, k1=1.2, b=0.75, delta=0.0) for field, column in columns.items() if any(column)
        }
        self._prefixes: dict[str, list[str]] = defaultdict(list)
        self._suffixes: dict[str, list[str]] = defaultdict(list)
        for word in self._postings:
            for size in range(_PREFIX_MIN, min(len(word) - 1, _PREFIX_MAX) + 1):
                self._prefixes[word[:size]].append(word)
            # A compound's head: "webhook" ends with "hook", "subtask" with "task".
            for size in range(_SUFFIX_MIN, len(word) - _PREFIX_MIN + 1):
                self._suffixes[word[-size:]].append(word)

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
            for other in SYNONYMS.get(term, ())
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
        if len(term) >= _SUFFIX_MIN:
            heads = [w for w in self._suffixes.get(term, [])[:_EXPANSION_CANDIDATES] if w not in terms]
            heads.sort(key=lambda word: -len(self._postings[word]))
            found += [(word, COMPOUND_FACTOR) for word in heads[:MAX_EXPANSIONS]]
        return found

    def _scores(self, terms: Sequence[str], soft: frozenset[str] = frozenset()) -> dict[int, float]:
        """BM25 summed over the query's words, times the coordination factor and the phrase factor;
        a ``soft`` word (a generic verb) weighs VERB_TEXT_FACTOR, in the coordination too."""
        total: dict[int, float] = defaultdict(float)
        matched: dict[int, float] = defaultdict(float)
        for term in terms:
            share = VERB_TEXT_FACTOR if term in soft else 1.0
            # A query word counts once per entry: through its best-scoring spelling.
            best: dict[int, float] = {}
            for word, weight in self._expansions(term, terms):
                held = self._postings.get(word, [])
                if not held:
                    continue
                summed = [0.0] * len(held)
                for field, bm25 in self._bm25.items():
                    if word in bm25.idf:
                        field_weight = FIELD_WEIGHTS[field] * weight * share
                        for i, value in enumerate(bm25.get_batch_scores([word], held)):
                            summed[i] += field_weight * value
                for position, value in zip(held, summed, strict=True):
                    if value > best.get(position, 0.0):
                        best[position] = value
            for position, value in best.items():
                total[position] += value
                matched[position] += share
        # Lucene's coordination factor: an entry that answers every word of the query beats one
        # that answers some of them very well (a summary "Create a pull request" for "open a pull
        # request", over "Request reviewers for a pull request").
        # The phrase is the query's words the index knows: a word no operation has is in no summary.
        known = [term for term in terms if term in self._postings]
        words_asked = sum(VERB_TEXT_FACTOR if term in soft else 1.0 for term in terms)
        return {
            position: value * matched[position] / words_asked * self._phrase(position, known)
            for position, value in total.items()
        }

    def _terms(self, query: str, request: Request) -> tuple[list[str], frozenset[str]]:
        """The query's words to score (two that the index knows as one word joined: "sub tasks" is
        "subtask"), and which of them is a generic verb."""
        terms = list(dict.fromkeys(meaningful(query)))
        for first, second in pairwise(raw_words(query)[: 4 * MAX_TERMS]):
            joined = spelt(first + second)
            if joined in self._postings and joined not in terms:
                terms = [t for t in terms if t not in (spelt(first), spelt(second))] + [joined]
        # A word the request implies: "how many tasks" asks for a count.
        terms += [word for word in sorted(request.target) if word not in terms and word in self._postings]
        terms = terms[:MAX_TERMS]
        soft = frozenset({request.verb} & set(terms)) if request.verb and len(terms) > 1 else frozenset()
        return terms, soft

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
        request = parse(query)
        terms, soft = self._terms(query, request)
        if not terms and not query.strip():
            order: Iterable[int] = range(len(self._entries))
        else:
            scores = self._scores(terms, soft)
            first = set(exact)
            scored = sorted(
                (
                    (
                        -value * self._factor[position] * fit(request, self._traits[position]),
                        position,
                    )
                    for position, value in scores.items()
                    if position not in first and value > 0.0
                ),
            )
            order = [*exact, *self._effects.settle([position for _, position in scored], request, query)]
        picked: list[str] = []
        for position in order:
            name = self._names[position]
            if allowed is None or allowed(name):
                picked.append(name)
                if len(picked) >= limit:
                    break
        return picked
