"""Lean tool definitions: keep what the model needs, drop what it does not.

Applied to every operation after parsing and before rendering (``GenerateOptions.compact``).

Schemas keep every constraint: ``type``, ``required``, ``enum``, ``const``, ``format``, bounds,
``pattern``, ``default``, nullability, ``items``, ``properties``, ``additionalProperties: false``
and ``$defs`` references. They lose what only documents: ``title`` (except on ``anyOf``/``oneOf``
branches, where it tells the branches apart), ``examples`` beyond one short one, ``readOnly``/
``writeOnly`` (already applied by the converter: the properties that do not travel in a direction
are gone), ``deprecated: false``, ``$comment``, empty ``required`` and ``additionalProperties:
true``. OpenAPI-only keywords (``xml``, ``externalDocs``, ``x-*``) never get this far; they are
dropped here too should one appear.

Descriptions (tool and schema) are cut to their first paragraph, markdown links and a few HTML
tags are reduced to their text, sentences that only point elsewhere ("For more information,
see ...") are dropped, as are sentences repeated across the whole API often enough to be
boilerplate (:attr:`CompactSettings.boilerplate_repeats`, never the first sentence a tool's
description starts with: an operation description's first sentence only when it follows the
summary), and the result is cut at a word near the configured limit.

``$defs``: a definition used once (and not from inside itself) is inlined; a sub-schema repeated
within one tool schema and big enough to pay for a reference is moved to ``$defs`` once and
referenced. Recursive schemas stay ``$defs`` references, so no cycle is ever expanded, and every
``$ref`` resolves inside the tool schema.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from bridge.binding import OutputPolicy
from bridge.trim import FIELDS_ARG_NAMES, FIELDS_SCHEMA, MARKER_KEY, advertised_schema, page_args
from generator.ir import Api, Operation
from generator.issues import Issue, Level
from generator.options import (
    DEFAULT_BOILERPLATE_REPEATS,
    DEFAULT_PROPERTY_DESCRIPTION_LIMIT,
    DEFAULT_SHARE_MIN_CHARS,
    DEFAULT_TOOL_DESCRIPTION_LIMIT,
    GenerateOptions,
)
from generator.schemas import LIST_KEYWORDS, MAP_KEYWORDS, ONE_KEYWORDS, child_schemas

__all__ = [
    "CompactSettings",
    "SchemaCompactor",
    "clean_text",
    "compact_api",
    "count_constraints",
    "first_paragraph",
    "share_defs",
]

JsonSchema = dict[str, Any]

DEFS = "$defs"
DEFS_PREFIX = "#/$defs/"
MAX_EXAMPLE_CHARS = 60
SHARED_ARGUMENT_SHARE = 0.8
ELLIPSIS = "…"

# Subschema keywords, as the converter knows them; $defs are handled on their own here.
_MAP_KEYWORDS = MAP_KEYWORDS - {"$defs", "definitions"}
_ONE_KEYWORDS = ONE_KEYWORDS
_LIST_KEYWORDS = LIST_KEYWORDS
_DROPPED = frozenset(
    {
        "readOnly",
        "writeOnly",
        "$comment",
        "xml",
        "externalDocs",
        "example",
        "discriminator",
        "nullable",
        "$schema",
        "$id",
        "$anchor",
        "definitions",
    }
)
_ANNOTATION_KEYS = frozenset({"title", "description", "default", "examples", "deprecated"})


@dataclass(frozen=True, slots=True)
class CompactSettings:
    description_limit: int = DEFAULT_TOOL_DESCRIPTION_LIMIT
    property_description_limit: int = DEFAULT_PROPERTY_DESCRIPTION_LIMIT
    boilerplate_repeats: int = DEFAULT_BOILERPLATE_REPEATS  # 0: never drop repeated sentences
    share_min_chars: int = DEFAULT_SHARE_MIN_CHARS  # 0: never move repeated sub-schemas to $defs
    boilerplate: frozenset[str] = field(default_factory=frozenset)


# ------------------------------------------------------------------------------------- text

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


def clean_text(text: str) -> str:
    """Markdown links, autolinks and common HTML tags reduced to their text; whitespace tidied."""
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
    paragraph = first_paragraph(clean_text(text))
    kept = []
    for position, sentence in enumerate(sentences(paragraph)):
        if _is_reference_only(sentence):
            continue
        if (position > 0 or after_summary) and sentence.strip() in boilerplate:
            continue
        kept.append(sentence)
    return cut(" ".join(kept).strip(), limit)


def find_boilerplate(texts: Iterable[str | tuple[str, bool]], repeats: int) -> frozenset[str]:
    """Sentences that occur at least ``repeats`` times, not counting first sentences.

    A text given as ``(text, True)`` follows a summary: its first sentence counts as well.
    """
    if repeats <= 0:
        return frozenset()
    counts: Counter[str] = Counter()
    for item in texts:
        text, after_summary = (item, False) if isinstance(item, str) else item
        found = sentences(first_paragraph(clean_text(text)))
        for sentence in found if after_summary else found[1:]:
            counts[sentence.strip()] += 1
    return frozenset(s for s, n in counts.items() if n >= repeats)


# ------------------------------------------------------------------------------------ schemas


class SchemaCompactor:
    """Compacts schemas of one API; results of shared input dicts are shared (memo by identity)."""

    def __init__(self, settings: CompactSettings) -> None:
        self.settings = settings
        self._memo: dict[tuple[int, bool], tuple[Any, Any]] = {}
        self.titles: dict[int, str] = {}  # id(compacted dict) -> the title it had
        self.prints = _Fingerprints()  # digests of compacted sub-schemas, shared by every tool

    def schema(self, node: Any, *, branch: bool = False) -> Any:
        if not isinstance(node, dict):
            return node
        key = (id(node), branch)
        hit = self._memo.get(key)
        if hit is not None and hit[0] is node:
            return hit[1]
        out = self._compact(node, branch)
        self._memo[key] = (node, out)  # keep the input alive so its id stays unique
        return out

    def _compact(self, node: Mapping[str, Any], branch: bool) -> Any:
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED or key.startswith("x-"):
                continue
            if key == "properties" and isinstance(value, dict):
                out[key] = {name: _without_trivial_description(name, self.schema(sub)) for name, sub in value.items()}
            elif key in _MAP_KEYWORDS and isinstance(value, dict):
                out[key] = {name: self.schema(sub) for name, sub in value.items()}
            elif key == DEFS and isinstance(value, dict):
                out[key] = {name: self.schema(sub) for name, sub in value.items()}
            elif key in _LIST_KEYWORDS and isinstance(value, list):
                in_branch = key in ("anyOf", "oneOf")
                out[key] = [self.schema(sub, branch=in_branch) for sub in value]
            elif key in _ONE_KEYWORDS:
                out[key] = self.schema(value)
            else:
                out[key] = value
        title = out.pop("title", None)
        description = out.get("description")
        if isinstance(description, str):
            text = compact_text(description, self.settings.property_description_limit, self.settings.boilerplate)
            if text and text != title:
                out["description"] = text
            else:
                del out["description"]
        if branch and isinstance(title, str) and title and "description" not in out:
            out["title"] = title
        if out.get("deprecated") is False:
            del out["deprecated"]
        required = out.get("required")
        if isinstance(required, list):
            if required:
                out["required"] = list(dict.fromkeys(required))
            else:
                del out["required"]
        for key in ("additionalProperties", "unevaluatedProperties"):
            if out.get(key) is True or out.get(key) == {}:
                del out[key]
        kind = out.get("type")
        if isinstance(kind, list) and len(kind) == 1:
            out["type"] = kind[0]
        examples = out.pop("examples", None)
        if isinstance(examples, list) and examples:
            first = json.dumps(examples[0], ensure_ascii=False)
            if len(first) <= MAX_EXAMPLE_CHARS and json.dumps(out.get("default"), ensure_ascii=False) != first:
                out["examples"] = examples[:1]
        all_of = out.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and out.keys() == {"allOf"}:
            return all_of[0]
        if isinstance(title, str) and title:
            self.titles[id(out)] = title
        return out


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


def _without_trivial_description(name: str, schema: Any) -> Any:
    if isinstance(schema, dict):
        description = schema.get("description")
        if isinstance(description, str) and is_trivial_description(name, description):
            return {k: v for k, v in schema.items() if k != "description"}
    return schema


# ------------------------------------------------------------------------------- $defs sharing


def _children(node: Any) -> Iterator[Any]:
    """Direct sub-schemas of a schema (not through the root ``$defs``)."""
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key == DEFS:
            continue
        if key in _MAP_KEYWORDS and isinstance(value, dict):
            yield from value.values()
        elif key in _LIST_KEYWORDS and isinstance(value, list):
            yield from value
        elif key in _ONE_KEYWORDS:
            yield value


def _rebuild(node: Any, change: Callable[[Any], Any | None], memo: dict[int, Any]) -> Any:
    """A copy of ``node`` where each sub-schema ``s`` becomes ``change(s)`` (when not None), else is
    rebuilt the same way. Nodes that need no change are returned as they are (shared)."""
    if not isinstance(node, dict):
        return node
    hit = memo.get(id(node))
    if hit is not None:
        return hit[1]
    out: dict[str, Any] = {}
    changed = False

    def sub(value: Any) -> Any:
        nonlocal changed
        new = change(value)
        if new is None:
            new = _rebuild(value, change, memo)
        if new is not value:
            changed = True
        return new

    for key, value in node.items():
        if key == DEFS:
            out[key] = value
        elif key in _MAP_KEYWORDS and isinstance(value, dict):
            out[key] = {name: sub(item) for name, item in value.items()}
        elif key in _LIST_KEYWORDS and isinstance(value, list):
            out[key] = [sub(item) for item in value]
        elif key in _ONE_KEYWORDS:
            out[key] = sub(value)
        else:
            out[key] = value
    result = out if changed else node
    memo[id(node)] = (node, result)
    return result


def _def_name(ref: Any) -> str | None:
    if isinstance(ref, str) and ref.startswith(DEFS_PREFIX):
        return ref[len(DEFS_PREFIX) :]
    return None


def _refs(node: Any, seen: set[int] | None = None) -> Iterator[str]:
    """Every ``$defs`` name referenced from ``node``, once per position (a tree walk)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if not isinstance(current, dict):
            continue
        name = _def_name(current.get("$ref"))
        if name is not None:
            yield name
        stack.extend(_children(current))


def _merge_ref(ref_node: Mapping[str, Any], body: Any) -> Any:
    """The body of a definition in place of ``{"$ref": ..., <siblings>}``."""
    siblings = {k: v for k, v in ref_node.items() if k != "$ref"}
    if not siblings:
        return body
    if not isinstance(body, dict):
        return {"allOf": [body], **siblings}
    if siblings.keys() <= _ANNOTATION_KEYS:
        return {**body, **siblings}
    return {"allOf": [body], **siblings}


def inline_single_use(schema: JsonSchema) -> JsonSchema:
    """Drop unreachable definitions and inline the ones used from exactly one place.

    One pass, linear in the schema: inlining a definition moves its references to its one use
    site, so neither the use counts nor the reachable set change while inlining, and the
    single-use definitions form a forest under their use sites (a cycle of them would be
    unreachable). Each is expanded once, memoised, where its reference was.
    """
    defs: dict[str, Any] = dict(schema.get(DEFS) or {})
    if not defs:
        return schema
    body = {k: v for k, v in schema.items() if k != DEFS}
    refs_of = {name: list(_refs(value)) for name, value in defs.items()}
    body_refs = list(_refs(body))
    reachable: set[str] = set()
    pending = [n for n in body_refs if n in defs]
    while pending:
        name = pending.pop()
        if name in reachable:
            continue
        reachable.add(name)
        pending.extend(n for n in refs_of[name] if n in defs and n not in reachable)
    uses: Counter[str] = Counter(body_refs)
    for name in reachable:
        uses.update(refs_of[name])
    single = {n for n in reachable if uses[n] == 1 and n not in refs_of[n]}
    kept = {name: value for name, value in defs.items() if name in reachable and name not in single}
    if single:
        memo: dict[int, Any] = {}
        expanded: dict[str, Any] = {}

        def expand(name: str) -> Any:
            done = expanded.get(name)
            if done is None:
                done = expanded[name] = at_root(defs[name])
            return done

        def change(node: Any) -> Any | None:
            if isinstance(node, dict):
                name = _def_name(node.get("$ref"))
                if name is not None and name in single:
                    return _merge_ref(_rebuild(node, change, memo), expand(name))
            return None

        def at_root(node: Any) -> Any:
            new = change(node)
            return _rebuild(node, change, memo) if new is None else new

        body = at_root(body)
        kept = {name: at_root(value) for name, value in kept.items()}
    if kept:
        return {**body, DEFS: dict(sorted(kept.items()))}
    return body


class _Fingerprints:
    """Canonical digest and serialized size of each sub-schema (memo by identity)."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[Any, str, int]] = {}
        self._censuses: dict[int, _Census] = {}

    def census(self, min_chars: int, titles: Mapping[int, str]) -> _Census:
        """The census of sub-schemas for these settings, kept as long as this memo."""
        found = self._censuses.get(min_chars)
        if found is None or found.titles is not titles:
            found = self._censuses[min_chars] = _Census(self, min_chars, titles)
        return found

    def __call__(self, node: Any) -> tuple[str, int]:
        if not isinstance(node, dict):
            text = json.dumps(node, sort_keys=True, ensure_ascii=False)
            return text, len(text)
        hit = self._memo.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1], hit[2]
        parts: list[str] = []
        size = 2
        for key in sorted(node):
            value = node[key]
            if key in _MAP_KEYWORDS and isinstance(value, dict):
                inner = [(name, self(item)) for name, item in sorted(value.items())]
                text = "{" + ",".join(json.dumps(n) + ":" + d for n, (d, _) in inner) + "}"
                length = 2 + sum(len(json.dumps(n, ensure_ascii=False)) + 2 + s for n, (_, s) in inner)
            elif key in _LIST_KEYWORDS and isinstance(value, list):
                inner_list = [self(item) for item in value]
                text = "[" + ",".join(d for d, _ in inner_list) + "]"
                length = 2 + sum(s + 1 for _, s in inner_list)
            elif key in _ONE_KEYWORDS or key == DEFS:
                text, length = self(value) if key != DEFS else (json.dumps(value, sort_keys=True), 0)
            else:
                text = json.dumps(value, sort_keys=True, ensure_ascii=False)
                length = len(text)
            parts.append(json.dumps(key) + ":" + text)
            size += len(key) + 3 + length
        digest = hashlib.sha1("{".join(parts).encode("utf-8")).hexdigest()
        self._memo[id(node)] = (node, digest, size)
        return digest, size


Census = dict[str, tuple[int, str]]
_NO_CENSUS: Census = {}


class _Census:
    """Sub-schemas of at least ``min_chars`` below a node: digest -> (uses, capped at 2; the name
    hint of its first use in a depth-first walk). Memoised per node and hint, so a sub-schema
    shared by many places (or many tools) is counted once, never once per path through it."""

    def __init__(self, prints: _Fingerprints, min_chars: int, titles: Mapping[int, str]) -> None:
        self.prints = prints
        self.min_chars = min_chars
        self.titles = titles
        self._memo: dict[tuple[int, str], tuple[Any, Census]] = {}

    def __call__(self, node: Any, hint: str) -> Census:
        if not isinstance(node, dict):
            return _NO_CENSUS
        hit = self._memo.get((id(node), hint))
        if hit is not None and hit[0] is node:
            return hit[1]
        out: Census = {}
        children: list[tuple[Any, str]] = []
        for key, value in node.items():
            if key == DEFS:
                continue
            if key in _MAP_KEYWORDS and isinstance(value, dict):
                items = [(item, str(prop)) for prop, item in value.items()]
            elif key in _LIST_KEYWORDS and isinstance(value, list):
                items = [(item, hint) for item in value]
            elif key in _ONE_KEYWORDS:
                items = [(value, f"{hint}_item" if key == "items" else hint)]
            else:
                continue
            for item, item_hint in items:
                if not isinstance(item, dict):
                    continue
                digest, size = self.prints(item)
                if size >= self.min_chars:
                    _add(out, digest, 1, self.titles.get(id(item)) or item_hint)
                children.append((item, item_hint))
        # The order of a stack walk: a node's children are seen first, then the last child's subtree.
        for item, item_hint in reversed(children):
            for digest, (n, found) in self(item, item_hint).items():
                _add(out, digest, n, found)
        result = out or _NO_CENSUS
        self._memo[(id(node), hint)] = (node, result)
        return result


def _add(census: Census, digest: str, uses: int, hint: str) -> None:
    known = census.get(digest)
    census[digest] = (1 if uses == 1 else 2, hint) if known is None else (2, known[1])


_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def share_defs(
    schema: JsonSchema,
    *,
    min_chars: int,
    titles: Mapping[int, str] | None = None,
    prints: _Fingerprints | None = None,
) -> JsonSchema:
    """Move sub-schemas repeated in ``schema`` (each at least ``min_chars`` of JSON) to ``$defs``.

    Names come from the sub-schema's original title, else the property it was first found under.
    Definitions that end up used once are inlined back.
    """
    if min_chars <= 0:
        return inline_single_use(schema)
    titles = titles if titles is not None else {}
    defs: dict[str, Any] = dict(schema.get(DEFS) or {})
    body = {k: v for k, v in schema.items() if k != DEFS}
    # One memo for a whole API: compacted sub-schemas are shared between its tools.
    prints = prints if prints is not None else _Fingerprints()
    census = prints.census(min_chars, titles)
    counts: dict[str, int] = {}
    hints: dict[str, str] = {}
    for root, hint in [(body, "schema"), *((value, name) for name, value in defs.items())]:
        for digest, (n, found) in census(root, hint).items():
            counts[digest] = counts.get(digest, 0) + n
            hints.setdefault(digest, found)
    chosen = {digest for digest, n in counts.items() if n >= 2}
    if not chosen:
        return inline_single_use(schema)
    names: dict[str, str] = {}
    taken = set(defs)
    pending: list[tuple[str, Any]] = []

    def name_for(digest: str, node: Any) -> str:
        name = names.get(digest)
        if name is None:
            base = _UNSAFE_NAME.sub("_", hints.get(digest, "schema")).strip("_.") or "schema"
            name, number = base, 2
            while name in taken:
                name, number = f"{base}_{number}", number + 1
            taken.add(name)
            names[digest] = name
            pending.append((name, node))
        return name

    memo: dict[int, Any] = {}

    def change(node: Any) -> Any | None:
        if not isinstance(node, dict):
            return None
        digest, size = prints(node)
        if size >= min_chars and digest in chosen:
            return {"$ref": DEFS_PREFIX + name_for(digest, node)}
        return None

    body = _rebuild(body, change, memo)
    defs = {name: _rebuild(value, change, memo) for name, value in defs.items()}
    while pending:
        name, node = pending.pop()
        defs[name] = _rebuild(node, change, memo)
    return inline_single_use({**body, DEFS: defs})


# -------------------------------------------------------------------------------- constraints


CONSTRAINT_KEYWORDS = (
    "type",
    "enum",
    "const",
    "format",
    "pattern",
    "default",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
)


def count_constraints(schema: Any, *, max_nodes: int = 2_000_000) -> Counter[str]:
    """Constraints of ``schema`` counted on its expansion: each ``$defs`` reference is followed,
    except into a definition already open on the current path (a cycle).

    ``required`` counts required names, ``enum`` counts values, ``additionalProperties: false``
    counts as ``closed``; the other keywords count occurrences. Two schemas that accept the same
    instances through the same constraints give the same counts whether or not they share
    ``$defs``.
    """
    root = schema if isinstance(schema, dict) else {}
    defs = root.get(DEFS) if isinstance(root.get(DEFS), dict) else {}
    assert isinstance(defs, dict)
    counts: Counter[str] = Counter()
    stack: list[tuple[Any, frozenset[str]]] = [(root, frozenset())]
    visited = 0
    while stack:
        node, path = stack.pop()
        if not isinstance(node, dict):
            continue
        visited += 1
        if visited > max_nodes:
            raise ValueError("schema expansion too large to count")
        name = _def_name(node.get("$ref"))
        if name is not None and name in defs and name not in path:
            stack.append((defs[name], path | {name}))
        for key in CONSTRAINT_KEYWORDS:
            if key not in node:
                continue
            value = node[key]
            if key == "enum" and isinstance(value, list):
                counts["enum"] += len(value)
            else:
                counts[key] += 1
        required = node.get("required")
        if isinstance(required, list):
            counts["required"] += len(set(required))
        if node.get("additionalProperties") is False:
            counts["closed"] += 1
        stack.extend((child, path) for child in _children(node))
    return counts


# --------------------------------------------------------------------------------- operations


def _schema_texts(node: Any, seen: set[int]) -> Iterator[str]:
    stack = [node]
    while stack:
        current = stack.pop()
        if not isinstance(current, dict) or id(current) in seen:
            continue
        seen.add(id(current))
        description = current.get("description")
        if isinstance(description, str):
            yield description
        stack.extend(child_schemas(current))


def _all_texts(api: Api) -> Iterator[str | tuple[str, bool]]:
    seen: set[int] = set()
    for op in api.operations:
        if op.description:
            yield op.description, bool(op.summary)
        yield from _schema_texts(op.input_schema, seen)
        if op.output_schema is not None:
            yield from _schema_texts(op.output_schema, seen)


def _restates(summary: str, sentence: str) -> bool:
    """Whether every content word of ``summary`` is in ``sentence`` ("List repository issues" and
    "Lists issues in a repository.")."""
    words = [w for w in _words(summary) if w not in _FILLER]
    other = _words(sentence)
    return bool(words) and all(any(_same_word(w, o) for o in other) for w in words)


def tool_description(op: Operation, settings: CompactSettings) -> str:
    """The first paragraph of the description, after the summary unless it only restates it."""
    from generator.parse import DEPRECATED_PREFIX

    summary = compact_text(op.summary, settings.description_limit) if op.summary else ""
    description = (
        compact_text(op.description, settings.description_limit, settings.boilerplate, after_summary=bool(summary))
        if op.description
        else ""
    )
    if summary and description:
        first = (sentences(description) or [""])[0]
        if _restates(summary, first):
            summary = ""
    text = "\n".join(part for part in (summary, description) if part) or op.label
    if op.deprecated:
        text = DEPRECATED_PREFIX + text
    return cut(text, settings.description_limit)


def compact_schema(schema: JsonSchema, compactor: SchemaCompactor) -> JsonSchema:
    compacted = compactor.schema(schema)
    assert isinstance(compacted, dict)
    return share_defs(
        compacted, min_chars=compactor.settings.share_min_chars, titles=compactor.titles, prints=compactor.prints
    )


def compact_api(api: Api, settings: CompactSettings) -> Api:
    """``api`` with every operation's description and schemas compacted."""
    if settings.boilerplate_repeats > 0 and not settings.boilerplate:
        settings = replace(settings, boilerplate=find_boilerplate(_all_texts(api), settings.boilerplate_repeats))
    compactor = SchemaCompactor(settings)
    operations = []
    for op in api.operations:
        output = compact_schema(op.output_schema, compactor) if op.output_schema is not None else None
        operations.append(
            replace(
                op,
                tool_description=tool_description(op, settings),
                input_schema=compact_schema(op.input_schema, compactor),
                output_schema=output,
            )
        )
    return replace(api, operations=tuple(operations))


# --------------------------------------------------------------------------- outputs and arguments


def _operation_overrides(options: GenerateOptions, op: Operation) -> Mapping[str, Any]:
    """Config overrides of one operation: ``METHOD /path`` first, then operationId (wins)."""
    merged: dict[str, Any] = {}
    for key, value in options.overrides.items():
        verb, _, rest = key.partition(" ")
        if rest and f"{verb.upper()} {rest}" == op.label and isinstance(value, dict):
            merged.update(value)
    by_id = options.overrides.get(op.operation_id) if op.operation_id else None
    if isinstance(by_id, dict):
        merged.update(by_id)
    return merged


def output_policy(op: Operation, options: GenerateOptions) -> tuple[OutputPolicy | None, list[Issue]]:
    """The operation's result shaping from ``x-mcp-output`` (a list of fields, or a mapping with
    ``fields``, ``max_items``, ``max_string``, ``max_bytes``) and the config's ``output`` (wins)."""
    issues: list[Issue] = []
    merged: dict[str, Any] = {}
    for source, raw in (
        ("x-mcp-output", op.extensions.get("x-mcp-output")),
        ("config output", _operation_overrides(options, op).get("output")),
    ):
        if raw is None:
            continue
        if isinstance(raw, list):
            raw = {"fields": raw}
        if not isinstance(raw, dict):
            issues.append(Issue(Level.WARNING, op.label, f"{source} must be a list of fields or a mapping; ignored"))
            continue
        for key, value in raw.items():
            if key == "fields" and isinstance(value, list) and all(isinstance(v, str) and v for v in value):
                merged["fields"] = tuple(value)
            elif key in ("max_items", "max_string", "max_bytes") and isinstance(value, int) and value > 0:
                merged[key] = value
            else:
                issues.append(Issue(Level.WARNING, op.label, f"{source}: {key!r} is not understood; ignored"))
    return (OutputPolicy(**merged) if merged else None), issues


MAX_SMALL_RESULT_FIELDS = 10


def _worth_selecting(advertised: Mapping[str, Any]) -> bool:
    """Whether a ``fields`` argument can make results much smaller: for lists, for objects with
    many fields and for results of unknown shape; not for a result known to be a few fields."""
    properties = {k: v for k, v in (advertised.get("properties") or {}).items() if k != MARKER_KEY}
    if not properties or len(properties) > MAX_SMALL_RESULT_FIELDS:
        return True
    if any(key in advertised for key in ("anyOf", "allOf", "additionalProperties", "patternProperties")):
        return True
    for prop in properties.values():
        if not isinstance(prop, dict):
            return True
        kind = prop.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        if "array" in kinds or kind is None:
            return True
    return False


def _fields_arg(properties: Mapping[str, Any]) -> str | None:
    return next((name for name in FIELDS_ARG_NAMES if name not in properties), None)


def shape_operation(op: Operation, options: GenerateOptions) -> tuple[Operation, list[Issue]]:
    """Output schema as trimmed results have it, the ``fields`` argument, paging arguments and the
    operation's output policy, recorded in the binding (bridge/trim.py is the other half)."""
    policy, issues = output_policy(op, options)
    properties = op.input_schema.get("properties")
    names = list(properties) if isinstance(properties, dict) else []
    binding_changes: dict[str, Any] = {"output": policy, "page_args": page_args(names)}
    input_schema = op.input_schema
    output = op.output_schema
    if output is not None and not options.output_schemas:
        output = None
    if output is not None:
        advertised = advertised_schema(
            output,
            depth=options.output_depth,
            descriptions=options.output_descriptions,
            wrapped=op.binding.wrap_output,
            selected=policy.fields if policy else (),
        )
        output = share_defs(advertised, min_chars=options.share_min_chars)
        fields_arg = (
            _fields_arg(properties if isinstance(properties, dict) else {}) if _worth_selecting(output) else None
        )
        if fields_arg is not None:
            binding_changes["fields_arg"] = fields_arg
            input_schema = {**input_schema, "properties": {**(properties or {}), fields_arg: dict(FIELDS_SCHEMA)}}
    binding = dataclasses.replace(op.binding, **binding_changes)
    return replace(op, input_schema=input_schema, output_schema=output, binding=binding), issues


def shared_arguments(api: Api, min_tools: int) -> tuple[Api, dict[str, str]]:
    """Arguments described identically in at least ``min_tools`` tools lose that description,
    which is returned (name -> description) to be said once in the server's instructions."""
    if min_tools <= 0:
        return api, {}
    counts: Counter[tuple[str, str]] = Counter()
    for op in api.operations:
        for name, prop in (op.input_schema.get("properties") or {}).items():
            if isinstance(prop, dict) and isinstance(prop.get("description"), str):
                counts[(name, prop["description"])] += 1
    uses: Counter[str] = Counter()
    for op in api.operations:
        uses.update(list(op.input_schema.get("properties") or {}))
    # Only a description that is the argument's meaning in (nearly) every tool that has it.
    shared = {
        (name, text) for (name, text), n in counts.items() if n >= min_tools and n >= SHARED_ARGUMENT_SHARE * uses[name]
    }
    if not shared:
        return api, {}
    operations = []
    for op in api.operations:
        properties = op.input_schema.get("properties") or {}
        changed = {
            name: {k: v for k, v in prop.items() if k != "description"}
            for name, prop in properties.items()
            if isinstance(prop, dict) and (name, prop.get("description")) in shared
        }
        if changed:
            op = replace(op, input_schema={**op.input_schema, "properties": {**properties, **changed}})
        operations.append(op)
    glossary = dict(sorted(shared))
    return replace(api, operations=tuple(operations)), glossary


def lean_api(api: Api, options: GenerateOptions) -> Api:
    """Compaction (when ``options.compact``) and output shaping of every operation.

    Shared argument descriptions (:func:`shared_arguments`) are a catalogue-level step on top.
    """
    if options.compact:
        settings = CompactSettings(
            description_limit=min(options.tool_description_limit, options.description_limit),
            property_description_limit=options.property_description_limit,
            boilerplate_repeats=options.boilerplate_repeats,
            share_min_chars=options.share_min_chars,
        )
        api = compact_api(api, settings)
    operations = []
    issues = list(api.issues)
    for op in api.operations:
        shaped, found = shape_operation(op, options)
        operations.append(shaped)
        issues.extend(found)
    return replace(api, operations=tuple(operations), issues=tuple(issues))
