"""Tool names and argument names: sanitised, length-capped, unique and deterministic.

Tool names come from the operationId (or ``method_path``) with every character outside
``[A-Za-z0-9_.-]`` turned into ``_``. Names over the length cap keep a prefix plus ``_`` and
8 hex digits of the full name's sha256, so two long names sharing a prefix stay distinct and the
result does not change between runs. Duplicates get ``_2``, ``_3``… in (path, method) order.

Argument names follow the same character rule with a 64-character cap. When two parameters want
the same argument name, the location priority decides who keeps it: path, query, header, cookie,
body. The loser gets ``_<location>`` appended (``id`` + ``id_query``), then ``_2``, ``_3``….
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from generator.issues import Issue, Level

TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
MAX_ARG_NAME_LENGTH = 64
HASH_LENGTH = 8
# Fixed order for (path, method) sorting: the order of the OpenAPI path item fields.
METHOD_ORDER = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_UNDERSCORES = re.compile(r"_{2,}")


def sanitize(raw: str) -> str:
    """Replace unsafe characters by ``_``, collapse runs of ``_`` and strip it at both ends.

    >>> sanitize("issues/list for-repo")
    'issues_list_for-repo'
    """
    return _UNDERSCORES.sub("_", _UNSAFE.sub("_", raw)).strip("_")


def fit_length(name: str, max_length: int) -> str:
    """Shorten ``name`` to ``max_length`` by keeping a prefix and appending ``_`` + a hash.

    The hash covers the whole original name, so names that differ only after the cut stay
    distinct.
    """
    if len(name) <= max_length:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:HASH_LENGTH]
    prefix = name[: max(max_length - HASH_LENGTH - 1, 0)].rstrip("_.-")
    return f"{prefix}_{digest}" if prefix else digest[:max_length]


def fallback_tool_name(method: str, path: str) -> str:
    """``GET /pets/{petId}`` → ``get_pets_petId``."""
    return sanitize(f"{method.lower()}_{path}") or method.lower()


def base_tool_name(operation_id: str | None, method: str, path: str) -> str:
    """The name before length capping and de-duplication."""
    if operation_id:
        cleaned = sanitize(operation_id)
        if cleaned:
            return cleaned
    return fallback_tool_name(method, path)


def operation_sort_key(path: str, method: str) -> tuple[str, int, str]:
    """Sort key that depends only on the path and method, never on dict or hash order."""
    lowered = method.lower()
    rank = METHOD_ORDER.index(lowered) if lowered in METHOD_ORDER else len(METHOD_ORDER)
    return (path, rank, lowered)


@dataclass(frozen=True, slots=True)
class NameRequest:
    """One operation asking for a tool name.

    ``report`` is False for operations that will not become tools (filtered out): their names
    are still reserved so filters never rename other tools, but problems with their explicit
    names are not reported on their own.
    """

    label: str  # "GET /pets"
    method: str
    path: str
    operation_id: str | None = None
    explicit: str | None = None  # x-mcp-name or an override: used as is
    report: bool = True


def assign_tool_names(requests: Sequence[NameRequest], max_length: int) -> tuple[dict[str, str], list[Issue]]:
    """Give every request a unique valid name; returns ``{label: name}`` and ERROR issues.

    Explicit names are claimed first. An invalid or duplicated explicit name is an ERROR naming
    the operations involved; the operation then falls back to a generated name so the result is
    still complete.
    """
    ordered = sorted(requests, key=lambda r: operation_sort_key(r.path, r.method))
    names: dict[str, str] = {}
    issues: list[Issue] = []
    owner: dict[str, NameRequest] = {}
    generated: list[NameRequest] = []
    for request in ordered:
        explicit = request.explicit
        if explicit is None:
            generated.append(request)
        elif not _valid_tool_name(explicit, max_length):
            generated.append(request)
            if request.report:
                issues.append(_invalid_explicit(request, explicit, max_length))
        elif explicit in owner:
            generated.append(request)
            first = owner[explicit]
            if request.report or first.report:
                detail = f"{first.label} and {request.label} both want tool name {explicit!r}"
                issues.append(Issue(Level.ERROR, request.label, detail))
        else:
            owner[explicit] = request
            names[request.label] = explicit
    _assign_generated(generated, max_length, names)
    return names, issues


def _valid_tool_name(name: str, max_length: int) -> bool:
    return bool(TOOL_NAME_PATTERN.fullmatch(name)) and len(name) <= max_length


def _invalid_explicit(request: NameRequest, name: str, max_length: int) -> Issue:
    detail = f"tool name {name!r} is invalid: use 1-{max_length} characters of letters, digits, '_', '.' and '-'"
    return Issue(Level.ERROR, request.label, detail)


def _assign_generated(requests: list[NameRequest], max_length: int, names: dict[str, str]) -> None:
    """Base names first (in sort order), then numbered suffixes for whoever lost.

    Two passes, so an operation whose own name is ``foo_2`` keeps it even when it sorts after a
    second ``foo``.
    """
    taken = set(names.values())
    losers: list[tuple[NameRequest, str]] = []
    for request in requests:
        full = base_tool_name(request.operation_id, request.method, request.path)
        base = fit_length(full, max_length)
        if base in taken:
            losers.append((request, full))
        else:
            taken.add(base)
            names[request.label] = base
    for request, full in losers:
        name = _numbered(full, max_length, taken)
        taken.add(name)
        names[request.label] = name


def _numbered(name: str, max_length: int, taken: set[str], start: int = 2) -> str:
    number = start
    while True:
        suffix = f"_{number}"
        candidate = fit_length(name, max_length - len(suffix)) + suffix
        if candidate not in taken:
            return candidate
        number += 1


def arg_name(wire: str) -> str:
    """A safe argument name for a wire name: ``filter[status]`` → ``filter_status``, ``$select`` → ``select``."""
    return fit_length(sanitize(wire) or "arg", MAX_ARG_NAME_LENGTH)


class ArgNames:
    """Hands out unique argument names within one tool.

    Callers claim names in location priority order (path first, body last), so the
    higher-priority location keeps the plain name.
    """

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self._taken: set[str] = set(taken)

    def __contains__(self, name: object) -> bool:
        return name in self._taken

    def claim(self, wire: str, location: str) -> str:
        """Claim the argument name for ``wire``; on a clash append ``_<location>``, then a number."""
        return self.claim_first([arg_name(wire), arg_name(f"{arg_name(wire)}_{location}")])

    def claim_first(self, candidates: Sequence[str]) -> str:
        """Claim the first free candidate, else the last one with ``_2``, ``_3``… appended."""
        for candidate in candidates:
            if candidate not in self._taken:
                self._taken.add(candidate)
                return candidate
        name = _numbered(candidates[-1], MAX_ARG_NAME_LENGTH, self._taken)
        self._taken.add(name)
        return name
