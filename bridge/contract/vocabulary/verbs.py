"""The verbs operations are named with, as data: which read, which write, which destroy.

Both halves use one vocabulary: the generator decides an operation's annotations from the verbs its
names and summary lead with (generator/parse/annotations.py), and search asks whether a query names
a destructive verb (bridge/modes/search.py). Words are compared lower-cased and whole; a name is
split at separators and case changes (``TerminateInstances``, ``terminate_instances``,
``terminate-instances``, ``drive.files.delete``). Every regular expression here is fixed and runs in
linear time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "DESTRUCTIVE",
    "MODIFIERS",
    "PATH_ACTION",
    "READS",
    "WRITES",
    "Said",
    "action_verb",
    "id_verb",
    "imperative",
    "name_parts",
    "path_verb",
    "prose_verb",
    "said_by",
    "verb_of",
    "words_of",
]

# Verbs that only read. An RPC action (AWS's ``Action=``) reads only when it leads with one of these.
READS = frozenset(
    """get list describe search query find head check count fetch read retrieve show view lookup look
    preview validate estimate simulate decode download return returns watch test poll batchget
    calculate compute analyze analyse evaluate explain inspect display see browse enumerate select
    scan summarize summarise resolve translate detect lookups filter exists compare diff mget""".split()
)
# Verbs that change something. Leading an operationId, an Action constant or a summary, they say the
# operation writes, whatever its method. Words as often nouns as verbs in REST names and summaries
# ("new", "index", "report", "schedule", "record", "verify") are left out: an AWS action needs none of
# them, since it reads only when it leads with a read verb. "export" is neither: an AWS action
# ExportImage writes (to S3), Drive's GET files.export only reads.
WRITES = frozenset(
    """create add make post put insert upload submit register run start stop reboot restart modify
    update edit change patch set reset replace enable disable attach detach associate disassociate
    assign unassign cancel accept reject approve allocate authorize copy move import apply send
    publish unpublish tag untag merge rename restore retry rerun resume pause suspend deploy redeploy
    install provision purchase release request subscribe unsubscribe generate swap rebuild abort
    execute rollback activate deactivate failover promote upgrade downgrade clone renew share unshare
    lock unlock archive unarchive follow unfollow unpin mute unmute unblock invite join leave kick ban
    dismiss rotate redeliver trigger dispatch sync migrate convert transfer pay refund void finalize
    fork reply forward notify close open save write push commit increment decrement acknowledge claim
    reserve sign resend enroll unenroll grant deny login logout signout shutdown deallocate reimage
    invoke upsert bind unbind unlink mount unmount resize scale allow disallow""".split()
)
# Verbs that destroy or take away: an operation leading with one is destructive whatever its method.
DESTRUCTIVE = frozenset(
    """delete remove destroy erase drop purge terminate revoke wipe truncate deregister unregister
    deprovision discard evict kill shred flush uninstall clear expunge obliterate nuke""".split()
)
# Words before the verb that do not replace it: ``BatchDeleteItem`` deletes, ``AdminGetUser`` gets.
MODIFIERS = frozenset("batch bulk admin force async try mass multi".split())

_SEPARATORS = re.compile(r"[^A-Za-z0-9-]+")
_CASE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_PROSE = re.compile(r"[A-Za-z]+")
# An AWS query-protocol action written into the path: /?Action=TerminateInstances, /#Action=...
PATH_ACTION = re.compile(r"[?#&]Action=([A-Za-z0-9]+)")
_CUSTOM_METHOD = re.compile(r":([A-Za-z][A-Za-z0-9]*)$")
_VERSION = re.compile(r"v\d+[a-z]*\d*")
_EXTENSIONS = frozenset("json xml csv txt yaml yml html pdf png jpg jpeg gif svg zip".split())
# After a plural, these make it a noun: "Posts by a user", "Tags for a repository".
_PREPOSITIONS = frozenset("by for in from with on per to at about within across".split())


def words_of(name: str) -> list[str]:
    """``TerminateInstances`` -> terminate, instances; ``HTTPServer_Get`` -> http, server, get."""
    return [word.casefold() for word in _CASE.findall(name.replace("-", " "))]


def name_parts(name: str) -> list[list[str]]:
    """The words of each part of a name split at separators (``.``, ``_``, ``/``, ``:``...; a hyphen
    joins words): ``drive.files.delete`` -> [drive], [files], [delete]; ``repos/get-content`` ->
    [repos], [get, content]. A part's first word is where a verb leads."""
    return [found for part in _SEPARATORS.split(name[:256]) if (found := words_of(part))]


def imperative(word: str) -> str | None:
    """The verb a prose word is a form of: ``deletes`` -> delete, ``copies`` -> copy; None if none."""
    word = word.casefold()
    for form in (word, word[:-1] if word.endswith("s") else "", word[:-2] if word.endswith("es") else ""):
        if form and form in READS | WRITES | DESTRUCTIVE:
            return form
    if word.endswith("ies") and (form := word[:-3] + "y") in READS | WRITES | DESTRUCTIVE:
        return form
    return None


def verb_of(words: list[str]) -> str | None:
    """The verb a run of name words leads with, past modifiers (``batch``, ``admin``); None if none."""
    for word in words:
        if word in MODIFIERS:
            continue
        return word if word in READS or word in WRITES or word in DESTRUCTIVE else None
    return None


def prose_verb(text: str) -> str | None:
    """The verb a sentence opens with, past adverbs and modifiers (``Permanently deletes a file``,
    ``Bulk delete``: delete); None when its first word is something else (``User posts``) or a noun
    after all (``Posts by a user``, ``Set of rules``)."""
    found = _PROSE.findall(text[:200])[:6]
    for position, word in enumerate(found):
        lowered = word.casefold()
        if lowered.endswith("ly") or lowered in MODIFIERS:
            continue
        verb = imperative(lowered)
        following = found[position + 1].casefold() if position + 1 < len(found) else ""
        if verb is not None and (following == "of" or (verb != lowered and following in _PREPOSITIONS)):
            return None
        return verb
    return None


def id_verb(method: str, operation_id: str) -> str | None:
    """The verb leading an operationId's last part that leads with one: an RPC namespace or a
    resource comes first, the verb last (``drive.files.delete``, ``VirtualMachines_Delete``,
    ``repos/delete-a-repo``, ``api.terminate_instances``, ``users_partial_update``, ``delete_user``);
    a leading method (``GET_TerminateInstances``) and a version (``v2``) are not verbs."""
    parts = [part for part in name_parts(operation_id) if not part[0].isdigit() and not _VERSION.fullmatch(part[0])]
    if len(parts) > 1 and parts[0] == [method.casefold()]:
        parts = parts[1:]
    for part in reversed(parts):
        if (verb := verb_of(part)) is not None:
            return verb
    return None


def action_verb(action: str) -> str | None:
    """An RPC action's verb (AWS's ``TerminateInstances``): a command, so a word outside the vocabulary
    is returned as it is, and reads only if it is a read verb."""
    found = words_of(action)
    return verb_of(found) or next((word for word in found if word not in MODIFIERS), None)


def path_verb(path: str) -> str | None:
    """The verb of a Google custom method (``/{name}:cancel``) or an RPC segment (``/chat.delete``)."""
    bare = path.partition("?")[0].partition("#")[0].rstrip("/")
    last = bare.rsplit("/", 1)[-1]
    if (custom := _CUSTOM_METHOD.search(last)) is not None:
        return verb_of(words_of(custom.group(1)))
    if "{" in last or "." not in last:
        return None
    method_part = last.rsplit(".", 1)[-1]
    if method_part.casefold() in _EXTENSIONS:
        return None
    return verb_of(words_of(method_part))


@dataclass(frozen=True, slots=True)
class Said:
    """What one name of an operation says it does: ``source`` ("operationId GET_TerminateInstances")
    named ``verb``, which writes, and may destroy."""

    source: str
    verb: str
    writes: bool
    destroys: bool


def _said(source: str, verb: str | None, *, command: bool = False) -> Said | None:
    """A write verb writes; for a ``command`` (an RPC action) any verb but a read one does."""
    if verb is None:
        return None
    writes = verb not in READS if command else verb in WRITES or verb in DESTRUCTIVE
    return Said(source, verb, writes, verb in DESTRUCTIVE)


def said_by(
    method: str,
    *,
    operation_id: str | None = None,
    actions: Iterable[tuple[str, str]] = (),
    path: str = "",
    summary: str | None = None,
) -> list[Said]:
    """Every verb an operation's names say: its ``operation_id``'s, each RPC action's (``(source,
    name)``: an AWS operation name or ``Action`` constant), its path's (``Action=`` in it, a custom
    method, an RPC segment), and its ``summary``'s when no name says one (prose often opens with a
    noun: "Drop rate"). The generator decides annotations from these (generator/parse/annotations.py);
    serving reads them again for a package generated before it did (bridge/serving/package.py)."""
    found = [_said(f"operationId {operation_id}", id_verb(method, operation_id))] if operation_id else []
    named = [*actions, *((f"path {path}", action) for action in PATH_ACTION.findall(path))]
    found.extend(_said(f"{source} {name}", action_verb(name), command=True) for source, name in named)
    found.append(_said(f"path {path}", path_verb(path)))
    out = [said for said in found if said is not None]
    if not out and summary and (verb := prose_verb(summary)) is not None:
        out.append(Said(f"summary {summary[:60]!r}", verb, verb not in READS, verb in DESTRUCTIVE))
    return out
