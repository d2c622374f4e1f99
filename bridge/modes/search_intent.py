"""What a query asks for and what an operation does, and how well the two fit.

A query (:func:`parse`) is read as a request: the intent of its verb (``list``, ``get``,
``create``, ``update``, ``delete``, ``search``, another action such as ``cancel``, or ``read`` for
a question: "who starred a repository"), the noun it acts on (the *target*: "tasks" in "list
tasks in a project") and the nouns that hold it (the *containers*: "project"; after ``in``,
``of``, ``on``, ``for``..., or before a possessive: "a member's boards"). A noun used as a verb at
the start ("comment on an issue", "tag a task") asks to create one.

An operation (:func:`traits`) is read from its method, its path and its result: a GET whose
result is an array or a page is a listing, a GET on ``/xs/{id}`` an item lookup, a POST to a
collection a creation, a DELETE a deletion; a verb that the summary, the path's last part or the
name starts with says more (``POST /chat.delete`` deletes, ``POST /tasks/{id}/addFollowers``
adds). The path's last fixed segment is what it acts on; the fixed segments before it hold it.

:func:`fit` is the factor bridge/modes/search.py multiplies an operation's text score by: above 1 when
the operation does what the verb asks (a listing for "list") and acts on the target inside the
containers (``GET /projects/{id}/tasks`` for "list tasks in a project"), below 1 when it does
the opposite (a creation for "list", ``GET /tasks/{id}/projects`` for that query). The text
score still decides among operations that fit alike, so the spec's own words stay first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from bridge.modes.search_words import SYNONYMS, raw_words, spelt

__all__ = [
    "GENERIC_VERBS",
    "READ_INTENTS",
    "READ_KINDS",
    "VERBS",
    "WRITE_INTENTS",
    "Request",
    "Traits",
    "fit",
    "parse",
    "traits",
]

# Verb -> intent. "read": a question or a verb that only reads (download, check, count).
_INTENT_WORDS = {
    "list": "list enumerate browse",
    "get": "get read fetch retrieve show view describe inspect display see",
    "read": "check download count return",
    "search": "search find query lookup locate filter",
    "create": (
        "create add new make open post publish register upload submit insert attach invite generate start request"
    ),
    "update": "update edit modify change patch set rename mark move replace assign configure",
    "delete": "delete remove destroy erase drop detach unassign purge terminate",
    "action": (
        "cancel refund capture confirm void finalize send merge approve reject archive unarchive close reopen "
        "lock unlock star unstar fork pin unpin follow unfollow accept decline trigger run execute dispatch "
        "retry rerun restore copy duplicate transfer share pay verify reset enable disable schedule snooze "
        "sync import subscribe unsubscribe mute unmute kick join leave resume pause stop suspend deploy "
        "install uninstall promote rollback resize reboot restart block unblock react vote renew expire "
        "convert migrate upgrade downgrade approve dismiss resolve revoke rotate redeliver allow grant deny "
        "authorize export"
    ),
}
VERBS = {spelt(word): intent for intent, text in _INTENT_WORDS.items() for word in text.split()}
# Verbs that say only the intent: matched through it, their text weighs little (a "list" in
# "user task list" is a noun). Other verbs (merge, cancel, upload) are words the operation says.
GENERIC_VERBS = frozenset(
    spelt(w)
    for w in "list enumerate browse get read fetch retrieve show view create add new make update edit modify "
    "change delete remove destroy erase".split()
)
_QUESTION = frozenset("who what which whose where when is are does did has have".split())
_FILLER = frozenset(
    "please i we want need would like to can could you let me us just now also then and help try should "
    "must will shall do how i'd i'm im".split()
)
_DETERMINERS = frozenset(
    "a an the this that these those my our your their its his her some all any each every another other "
    "one new recent existing specific given single".split()
)
_CONTAINS = frozenset("in of on for from within under inside across at to into onto belonging about".split())
_QUALIFIES = frozenset("by with via using as than without".split())
# Nouns that stand for what follows them: "information about a chat" asks for the chat.
_PLACEHOLDERS = frozenset(spelt(w) for w in "info information detail details data metadata".split())
_PERSONAL = frozenset("my me mine myself i i'm im".split())
_OWN = frozenset(spelt(w) for w in "authenticated me my current self mine viewer own".split())
_NOT_NOUNS = _DETERMINERS | _FILLER | _PERSONAL | _QUESTION | frozenset("many much am was were be been own".split())
_DENOMINAL_NEXT = _DETERMINERS | frozenset("on to onto into".split())

_TOKEN = re.compile(r"[^\W_]+(?:['’]s\b)?")
_VERSION = re.compile(r"(?:v\d+(?:\.\d+)*[a-z]*\d*|\d[\d.-]*|api|rest)", re.IGNORECASE)
_EXTENSIONS = frozenset("json xml csv txt yaml yml html pdf png jpg jpeg gif svg zip".split())

# Intent x kind -> factor. Kinds: list, item, object, search (reads); create, update, delete, action (writes).
MATCH, CLASH = 1.5, 0.5
_READS = ("list", "item", "object", "search")
_WRITES = ("create", "update", "delete", "action")
READ_INTENTS = frozenset({"list", "get", "read", "search"})
READ_KINDS = frozenset(_READS)
WRITE_INTENTS = frozenset(_WRITES)
_FIT: dict[str, dict[str, float]] = {
    "list": {"list": MATCH, "search": 1.0, "object": 1.0, "item": 0.75} | dict.fromkeys(_WRITES, CLASH),
    "get": {"item": MATCH, "object": MATCH, "list": 1.0, "search": 0.9} | dict.fromkeys(_WRITES, CLASH),
    "read": dict.fromkeys(_READS, 1.3) | dict.fromkeys(_WRITES, CLASH),
    "search": {"search": MATCH, "list": 1.1, "object": 1.0, "item": 0.8} | dict.fromkeys(_WRITES, CLASH),
    "create": {"create": MATCH, "action": 1.0, "update": 0.9, "delete": CLASH} | dict.fromkeys(_READS, CLASH),
    "update": {"update": MATCH, "action": 1.0, "create": 0.8, "delete": CLASH} | dict.fromkeys(_READS, CLASH),
    "delete": {"delete": MATCH, "action": 0.9, "update": 0.7, "create": 0.6} | dict.fromkeys(_READS, CLASH),
    "action": {"action": 1.2, "update": 1.0, "create": 1.0, "delete": 1.0} | dict.fromkeys(_READS, 0.6),
}
# Path structure: the target right inside a container (GET /projects/{id}/tasks), inside one further
# up, the target alone, the two swapped, and a path about some other thing.
BOTH, ANCESTOR, TARGET_ONLY, SWAPPED, ELSEWHERE = 1.5, 1.15, 1.15, 0.6, 0.7
# One thing ("get a droplet") on /xs/{id}, many ("delete all pods") on /xs: for get, update, delete.
NUMBER_FITS = 1.2
SYNONYM_SHARE = 0.7  # of a structure bonus, when the target is met only through a synonym
PERSONAL = 1.3  # "my", "me": an operation on the caller's own things


@dataclass(frozen=True, slots=True)
class Request:
    """What a query asks: ``intent`` (None: no verb), ``verb`` (its spelling, when generic),
    ``target`` and ``containers`` (spelt nouns), ``plural`` (the target), ``personal`` (my, me)."""

    intent: str | None = None
    verb: str | None = None
    target: frozenset[str] = frozenset()
    containers: frozenset[str] = frozenset()
    plural: bool = False
    personal: bool = False
    action: str | None = None  # an action verb's spelling ("fork"): its noun may be what a path acts on
    leading: str | None = None  # the verb the query opens with, spelt ("list my running instances": list)


@dataclass(frozen=True, slots=True)
class Traits:
    """What an operation does: ``kind`` (list, item, object, search, create, update, delete, action
    or None), the words of its path's last fixed segment (``acts_on``) and of those before (``within``),
    and whether it is about the caller's own things (``own``)."""

    kind: str | None = None
    acts_on: frozenset[str] = frozenset()
    within: frozenset[str] = frozenset()
    parent: frozenset[str] = frozenset()  # the head word of the fixed segment before the last one
    own: bool = False
    item: bool = False  # the path ends with a parameter: /xs/{id}
    modifiers: frozenset[str] = frozenset()  # the last segment's other words: "workspace" of workspace_memberships
    said: frozenset[str] = frozenset()  # the words of its name and summary


def _tokens(query: str) -> list[tuple[str, bool]]:
    """(word, possessive) pairs: ``member's`` is (member, True)."""
    found: list[tuple[str, bool]] = []
    for match in _TOKEN.finditer(query.casefold()):
        text = match.group()
        if text.endswith(("'s", "’s")):
            parts = raw_words(text[:-2])
            found.extend((part, i == len(parts) - 1) for i, part in enumerate(parts))
        else:
            found.extend((part, False) for part in raw_words(text))
    return found


def _nouns(words: Iterable[str]) -> frozenset[str]:
    return frozenset(spelt(w) for w in words if w not in _NOT_NOUNS)


def parse(query: str) -> Request:
    """The request a query makes (never raises; an empty or odd query is an empty request)."""
    tokens = _tokens(query[:512])[:32]
    words = [word for word, _ in tokens]
    personal = any(word in _PERSONAL for word in words)
    start = 0
    while start < len(words) and words[start] in _FILLER:
        if words[start] == "how" and start + 1 < len(words) and words[start + 1] in ("many", "much"):
            break
        start += 1
    if start >= len(words):
        return Request(personal=personal)
    first = words[start]
    intent: str | None = VERBS.get(spelt(first))
    verb = spelt(first) if spelt(first) in GENERIC_VERBS else None
    rest = start + 1
    target_words: list[str] = []
    containers: list[str]
    if first in _QUESTION or first == "how":
        intent, verb = "read", None
        if words[start + 1 : start + 2] in (["many"], ["much"]):
            target_words = ["count"]  # "how many tasks": a count, of tasks
            containers = []
    elif intent is None:
        following = words[start + 1] if start + 1 < len(words) else None
        singular = spelt(first) == first or not first.endswith("s")
        if following in _DENOMINAL_NEXT and singular and first not in _DETERMINERS:
            intent = "create"  # "comment on an issue", "tag a task": add one to what follows
            target_words = [first]
            containers = []
        else:
            rest = start  # no verb: the query is all nouns
    if not target_words:
        containers = []
    into = containers if target_words else target_words
    phrase_open = not target_words
    possessive_seen = False
    for position in range(rest, len(tokens)):
        word, possessive = tokens[position]
        if word in _CONTAINS:
            into, phrase_open = containers, False
            continue
        if word in _QUALIFIES:
            into = []
            continue
        if possessive and phrase_open and not possessive_seen:
            containers.extend(target_words)
            containers.append(word)
            target_words.clear()
            possessive_seen = True
            continue
        into.append(word)
    target = _nouns(target_words)
    head = next((w for w in reversed(target_words) if w not in _DETERMINERS), "")
    plural = bool(head) and head.endswith("s") and spelt(head) != head and not head.endswith("ss")
    held = _nouns(containers) - target
    if target and target <= _PLACEHOLDERS and held:
        target, held = held, frozenset()
    if intent is None and plural:
        intent = "list"  # "pull request reviews", "projects in a workspace": a listing
    action = spelt(first) if intent == "action" else None
    leading = spelt(first) if spelt(first) in VERBS else None
    return Request(intent, verb, target, held, plural, personal, action, leading)


def _segments(path: str) -> list[str]:
    """The fixed parts of a path, in order: ``/v1/tasks/{id}/addTag`` -> tasks, {}, addTag;
    ``/chat.postMessage`` -> chat, postMessage; ``/files/{id}#lock`` -> files, {}, lock."""
    out: list[str] = []
    path, _, fragment = path.partition("#")
    for segment in path.split("/"):
        if not segment:
            continue
        stem_, dot, extension = segment.rpartition(".")
        if dot and extension.casefold() in _EXTENSIONS:
            segment = stem_  # /Calls/{Sid}.json
        if segment.startswith("{") and segment.endswith("}"):
            out.append("{}")
            continue
        for part in segment.split("."):
            fixed = re.sub(r"\{[^}]*\}", "", part)
            if not fixed or fixed.casefold() in _EXTENSIONS or _VERSION.fullmatch(fixed):
                continue
            out.append(fixed)
    if fragment:
        out.append(fragment)
    return out


def _first_verb(text: str, within: int = 3) -> str | None:
    for word in raw_words(text)[:within]:
        intent = VERBS.get(spelt(word))
        if intent is not None:
            return intent
    return None


def _plural(word: str) -> bool:
    return word.endswith("s") and not word.endswith("ss") and spelt(word) != word


def _resource(fixed: list[str]) -> tuple[list[str], list[str], str | None]:
    """The words of what the path acts on, the fixed segments that hold it, and a verb its last
    segment starts with: ``addFollowers`` acts on followers (add); ``/chat.postMessage`` on messages;
    ``/conversations.list`` and ``/pulls/{n}/merge`` on what the segment before names."""
    if not fixed:
        return [], [], None
    last = raw_words(fixed[-1])
    verb = VERBS.get(spelt(last[0])) if last else None
    if verb is not None and len(last) > 1:
        return last[1:], fixed[:-1], verb
    if verb is not None and not _plural(last[0]) and len(fixed) > 1:  # a lone verb, not "forks" or "runs"
        return raw_words(fixed[-2]), fixed[:-2], verb
    return last, fixed[:-1], None


def traits(
    method: str,
    path: str,
    name: str = "",
    summary: str = "",
    returns_list: bool | None = None,
    *,
    reads: bool = True,
) -> Traits:
    """What the operation ``METHOD path`` named ``name`` does (``returns_list``: whether its result
    is an array or a page; None when it has no result schema; ``reads``: whether its annotations
    say read-only: a ``GET /?Action=RunInstances`` does not list, whatever its method)."""
    method = method.upper()
    segments = _segments(path)
    item = bool(segments) and segments[-1] == "{}"
    fixed = [s for s in segments if s != "{}"]
    nouns, holders, path_verb = _resource(fixed)
    acts_on = frozenset(spelt(w) for w in nouns[-1:])  # the head noun: "workspace_memberships" is memberships
    modifiers = frozenset(spelt(w) for w in nouns[:-1]) - acts_on
    within = frozenset(spelt(w) for s in holders for w in raw_words(s))
    parent = frozenset(spelt(w) for w in raw_words(holders[-1])[-1:]) if holders else frozenset()
    # The spec's words first: a summary that is more than the name, then the path's last part.
    said = summary if summary.strip().rstrip("()") != name else ""
    declared = _first_verb(said) or path_verb or _first_verb(name, 1)
    if not declared and "_" in name:
        declared = _first_verb(name.rsplit("_", 1)[-1], 1)
    kind: str | None
    if method == "GET":
        if declared == "search" or "search" in acts_on | modifiers | parent:
            kind = "search"
        elif returns_list:
            kind = "list"
        elif returns_list is not None and not item:
            kind = "object"  # GET /user, GET /balance, or a listing its spec types as one object
        elif declared == "list":
            kind = "list"
        else:
            kind = "item" if item else "list"
    elif method == "DELETE":
        kind = "delete"
    elif method in ("PUT", "PATCH"):
        kind = {"delete": "delete", "action": "action"}.get(declared or "", "update")  # PUT creates or replaces
    elif method == "POST":
        # RPC APIs read with POST too (POST /getChat): the verb says which
        kind = {"list": "list", "get": "item", "read": "item"}.get(declared or "", declared)
        if kind is None:
            kind = "update" if item else "create"
    else:
        kind = None
    if not reads and method in ("GET", "HEAD") and kind in _READS:  # a GET named as a write
        kind = declared if declared in _WRITES else "action"
    words = frozenset(spelt(w) for w in raw_words(f"{name} {said}"))
    own = bool(_OWN & (acts_on | within | words))
    return Traits(kind, acts_on, within, parent, own, item, modifiers, words)


def _meets(nouns: frozenset[str], words: frozenset[str]) -> float:
    """1 when a noun is among ``words`` (or is the end of one: hook, webhook), SYNONYM_SHARE when
    only a synonym is, 0 otherwise."""
    if not nouns or not words:
        return 0.0
    if nouns & words or any(w.endswith(n) for n in nouns if len(n) >= 4 for w in words):
        return 1.0
    if any(other in words for n in nouns for other in SYNONYMS.get(n, ())):
        return SYNONYM_SHARE
    return 0.0


def fit(request: Request, op: Traits) -> float:
    """How well the operation fits the request, as a factor of its text score (1: no opinion)."""
    factor = 1.0
    if request.intent is not None and op.kind is not None:
        factor = _FIT[request.intent].get(op.kind, 1.0)
        if request.intent == "get" and op.kind == "list" and request.plural:
            factor = MATCH
    wanted, containers = request.target, request.containers
    if request.action and request.action in op.acts_on:
        # "fork a repository": POST /repos/{owner}/{repo}/forks makes a fork of what the query names.
        wanted, containers = frozenset({request.action}), containers | request.target
    target = _meets(wanted, op.acts_on)
    if request.intent in ("get", "update", "delete") and op.kind is not None and request.target:
        if op.item != request.plural:
            factor *= NUMBER_FITS
    if containers:
        held = _meets(containers, op.parent)
        if target and held:
            factor *= 1 + (BOTH - 1) * target * held
        elif target and (held := _meets(containers, op.within)):
            factor *= 1 + (ANCESTOR - 1) * target * held
        elif _meets(containers, op.acts_on) and _meets(wanted, op.within):
            factor *= SWAPPED
        elif target:
            factor *= 1 + (TARGET_ONLY - 1) * target
    elif target:
        factor *= 1 + (TARGET_ONLY - 1) * target
    if wanted and op.acts_on and not target:
        # About some other thing: one the target holds (GET /droplets/{id}/actions for "get a
        # droplet", workspace_memberships for "list workspaces"), or one that never says the target
        # (an RPC namespace's summary says what it acts on: POST /chat.delete "Deletes a message").
        if _meets(wanted, op.within | op.modifiers | op.parent) or not (wanted & op.said):
            factor *= ELSEWHERE
    if request.personal and op.own:
        factor *= PERSONAL
    return factor
