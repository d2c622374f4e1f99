"""An operation's annotations from every signal, the safe one winning.

The method gives a start (``GET`` reads, ``DELETE`` destroys: ``BY_METHOD``). Then every other
signal of what the operation does is read: the verb its ``operationId`` leads with, an AWS action
(``x-aws-operation-name``, a one-value ``Action`` query constant, ``Action=`` in the path), a Google
custom method (``/{name}:cancel``), an RPC path (``/chat.delete``), the summary's opening verb, and
``x-ms-long-running-operation``. The vocabulary is data (bridge/contract/verbs.py).

- **Read-only** needs a safe method and no signal of a write. An AWS action is a command: it reads
  only when its verb is a read verb (Describe, Get, List...); any other verb writes.
- **Destructive** is any signal of a destructive verb (terminate, delete, purge, revoke...) whatever
  the method, or the method's own (PUT, PATCH, DELETE).
- The spec's ``x-mcp-annotations`` may say more, but never less safe than a signal: it cannot make
  an operation named as a write read-only, nor one named as destructive harmless. The operator's
  ``--config`` ``annotations`` settle everything.

Where the method (or the spec's hint) says read-only and a name says write, the operation is not
read-only and :func:`disagreements` lists it, so the operator sees it and can settle it.

This is the one decision: ``--read-only`` filters on it, and the catalogue carries it to run_query,
``--confirm``, discovery and search.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bridge.contract.catalogue import ToolAnnotationsSpec
from bridge.contract.vocabulary.verbs import DESTRUCTIVE, READS, name_parts, prose_verb, verb_of, words_of
from generator.issues import Issue, Level
from generator.parse.context import Context, RawOperation, Skip, deref

__all__ = ["ANNOTATION_KEYS", "BY_METHOD", "Decision", "decide", "disagreements"]

# (readOnlyHint, destructiveHint, idempotentHint) per method; openWorldHint is always true.
BY_METHOD: dict[str, tuple[bool, bool, bool]] = {
    "GET": (True, False, True),
    "HEAD": (True, False, True),
    "OPTIONS": (True, False, True),
    "TRACE": (True, False, True),
    "POST": (False, False, False),
    "PUT": (False, True, True),
    "PATCH": (False, True, False),
    "DELETE": (False, True, True),
}
ANNOTATION_KEYS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
LISTED = 20  # operations named in the disagreement warning; the rest are counted
_ACTION_PARAMS = frozenset({"action"})
_PATH_ACTION = re.compile(r"[?#&]Action=([A-Za-z0-9]+)")
_CUSTOM_METHOD = re.compile(r":([A-Za-z][A-Za-z0-9]*)$")
_VERSION = re.compile(r"v\d+[a-z]*\d*")
_EXTENSIONS = frozenset("json xml csv txt yaml yml html pdf png jpg jpeg gif svg zip".split())


@dataclass(frozen=True, slots=True)
class Decision:
    """The annotations, and the signals of a write that a read-only method or hint met (empty when none)."""

    annotations: ToolAnnotationsSpec
    conflicts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Signal:
    source: str  # what said it: "operationId GET_TerminateInstances"
    verb: str
    writes: bool
    destroys: bool


def _rest_signal(source: str, words: Sequence[str]) -> _Signal | None:
    """A name's verb by the REST rule: it writes when it is a write verb."""
    verb = verb_of(list(words))
    if verb is None or verb in READS:
        return None if verb is None else _Signal(source, verb, False, False)
    return _Signal(source, verb, True, verb in DESTRUCTIVE)


def _action_signal(source: str, name: str) -> _Signal | None:
    """An RPC action's verb: a command, so it reads only when its verb is a read verb."""
    words = words_of(name)
    verb = verb_of(words) or next((w for w in words if w not in READS), None)
    if verb is None:
        return None
    if verb in READS:
        return _Signal(source, verb, False, False)
    return _Signal(source, verb, True, verb in DESTRUCTIVE)


def _operation_id_signal(method: str, operation_id: str) -> _Signal | None:
    """The verb leading the id's last part that leads with one: an RPC namespace or a resource comes
    first, the verb last (``drive.files.delete``, ``VirtualMachines_Delete``, ``repos/delete-a-repo``,
    ``api.terminate_instances``, ``users_partial_update``, ``delete_user``); a leading method
    (``GET_TerminateInstances``) is not a verb."""
    parts = [part for part in name_parts(operation_id) if not part[0].isdigit() and not _VERSION.fullmatch(part[0])]
    if len(parts) > 1 and parts[0] == [method.casefold()]:
        parts = parts[1:]
    for part in reversed(parts):
        found = _rest_signal(f"operationId {operation_id}", part)
        if found is not None:
            return found
    return None


def _action_constants(ctx: Context, raw: RawOperation) -> list[str]:
    """The values an ``Action`` query parameter is fixed to (a one-value enum or a const), and
    ``Action=`` in the path's query or fragment."""
    found = _PATH_ACTION.findall(raw.path)
    for node in [*raw.path_params, *(raw.op.get("parameters") or [])]:
        try:
            param = deref(ctx.document, node, "parameter")
        except Skip:
            continue
        if not isinstance(param, Mapping) or str(param.get("name", "")).casefold() not in _ACTION_PARAMS:
            continue
        if param.get("in") != "query":
            continue
        nested = param.get("schema")
        # OpenAPI 2 keeps the enum on the parameter itself
        schema: Mapping[str, Any] = nested if isinstance(nested, Mapping) else param
        values = schema.get("enum") if isinstance(schema.get("enum"), list) else None
        if "const" in schema:
            values = [schema["const"]]
        if values and len(values) == 1 and isinstance(values[0], str):
            found.append(values[0])
    return found


def _path_signal(path: str) -> _Signal | None:
    """A Google custom method (``/{name}:cancel``) or an RPC segment (``/chat.delete``)."""
    bare = path.partition("?")[0].partition("#")[0].rstrip("/")
    last = bare.rsplit("/", 1)[-1]
    if (custom := _CUSTOM_METHOD.search(last)) is not None:
        return _rest_signal(f"path {path}", words_of(custom.group(1)))
    if "{" in last or "." not in last:
        return None
    method_part = last.rsplit(".", 1)[-1]
    if method_part.casefold() in _EXTENSIONS:
        return None
    return _rest_signal(f"path {path}", words_of(method_part))


def _signals(ctx: Context, raw: RawOperation) -> list[_Signal]:
    op = raw.op
    found: list[_Signal | None] = []
    if raw.operation_id:
        found.append(_operation_id_signal(raw.method, raw.operation_id))
    for key, value in op.items():
        if str(key).startswith(("x-aws-", "x-amazon-")) and str(key).endswith("operation-name"):
            if isinstance(value, str):
                found.append(_action_signal(f"{key} {value}", value))
    found.extend(_action_signal(f"Action {value}", value) for value in _action_constants(ctx, raw))
    found.append(_path_signal(raw.path))
    named = [signal for signal in found if signal is not None]
    if not named:  # the summary speaks when no name does: prose often opens with a noun ("Drop rate")
        summary, description = op.get("summary"), op.get("description")
        said = summary if isinstance(summary, str) and summary.strip() else None
        if said is None and isinstance(description, str):
            said = description.strip().split("\n", 1)[0]
        if said and (verb := prose_verb(said)) is not None:
            named.append(_Signal(f"summary {said[:60]!r}", verb, verb not in READS, verb in DESTRUCTIVE))
    if op.get("x-ms-long-running-operation") is True:
        named.append(_Signal("x-ms-long-running-operation", "long-running", True, False))
    return named


def _explicit(ctx: Context, raw: RawOperation, source: str, extra: Any) -> dict[str, bool]:
    if extra is None:
        return {}
    if not isinstance(extra, Mapping):
        ctx.warn(raw.label, f"{source} must be a mapping; ignored")
        return {}
    values: dict[str, bool] = {}
    for key, value in extra.items():
        if key in ANNOTATION_KEYS and isinstance(value, bool):
            values[key] = value
        else:
            ctx.warn(raw.label, f"{source}: {key!r} must be one of {', '.join(ANNOTATION_KEYS)} with a boolean")
    return values


def decide(ctx: Context, raw: RawOperation) -> Decision:
    """The operation's annotations from its method, its names, its summary, the spec's hints and the
    config's (which settle any disagreement)."""
    read_only, destructive, idempotent = BY_METHOD.get(raw.method, (False, True, False))
    signals = _signals(ctx, raw)
    writes = [s for s in signals if s.writes]
    destroys = any(s.destroys for s in signals)
    values = {
        "readOnlyHint": read_only and not writes,
        "destructiveHint": destructive or destroys,
        "idempotentHint": idempotent and not (read_only and writes),  # a GET that writes is no longer known idempotent
        "openWorldHint": True,
    }
    spec = _explicit(ctx, raw, "x-mcp-annotations", raw.op.get("x-mcp-annotations"))
    claims_read = read_only or spec.get("readOnlyHint") is True
    if writes and spec.get("readOnlyHint") is True:
        del spec["readOnlyHint"]
    if destroys and spec.get("destructiveHint") is False:
        del spec["destructiveHint"]
    values.update(spec)
    config = _explicit(ctx, raw, "overrides", raw.overrides.get("annotations"))
    values.update(config)
    conflicts: tuple[str, ...] = ()
    if claims_read and writes and "readOnlyHint" not in config:
        conflicts = tuple(f"{s.source} says {s.verb}" for s in writes)
    return Decision(ToolAnnotationsSpec(**values), conflicts)


def disagreements(found: Mapping[str, Decision]) -> list[Issue]:
    """One warning naming (at most ``LISTED``) operations that read by their method or the spec's
    hint but are named as writes: they were made not read-only; the config settles each."""
    clashing = [(label, decision) for label, decision in found.items() if decision.conflicts]
    if not clashing:
        return []
    named = "; ".join(f"{label} ({decision.conflicts[0]})" for label, decision in clashing[:LISTED])
    more = f"; and {len(clashing) - LISTED} more" if len(clashing) > LISTED else ""
    detail = (
        f"{len(clashing)} operation(s) read by their method or x-mcp-annotations but are named as writes, "
        f"so they are not read-only (kept out of --read-only and run_query, asked under --confirm writes); "
        f"if one only reads, settle it in --config: operations: {{<id>: {{annotations: {{readOnlyHint: true}}}}}}: "
        f"{named}{more}"
    )
    return [Issue(Level.WARNING, "annotations", detail)]
