"""Which OAuth scopes a tool needs, and whether the caller's token has them.

A tool's requirement comes from its operation's OAuth2 / OpenID Connect security requirements
(overridable with ``--config``): a tuple of alternatives, any one of which suffices, each the set
of scopes it needs. ``()`` means the tool needs no scope (it still needs an authenticated caller
when authentication is on). Schemes of other types (API keys, basic) are the operator's
credentials and ask nothing of the caller.

Who calls is the SDK's authenticated access token of the request being served
(``get_access_token``); without authentication (stdio, or HTTP without ``--auth-*``) every
tool is visible and callable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bridge.contract.catalogue import SchemeUse, SecurityScheme

Requirement = tuple[frozenset[str], ...]
CALLER_SCHEMES = ("oauth2", "openIdConnect")


def requirement(security: Sequence[Sequence[SchemeUse]], schemes: Mapping[str, SecurityScheme]) -> Requirement:
    """The scope alternatives of an operation's security requirements (``()``: no scope needed)."""
    alternatives: list[frozenset[str]] = []
    for alternative in security:
        scopes = frozenset(
            scope
            for use in alternative
            if (scheme := schemes.get(use.scheme)) is not None and scheme.type in CALLER_SCHEMES
            for scope in use.scopes
        )
        if not scopes:
            return ()  # this alternative asks nothing of the caller
        alternatives.append(scopes)
    return tuple(sorted(set(alternatives), key=sorted))


def allows(need: Requirement, granted: Iterable[str] | None) -> bool:
    """Whether a token with ``granted`` scopes may use a tool needing ``need`` (None: no auth)."""
    if not need or granted is None:
        return True
    have = set(granted)
    return any(alternative <= have for alternative in need)


def missing(need: Requirement, granted: Iterable[str]) -> list[str]:
    """The scopes to ask for: those the closest alternative lacks (sorted)."""
    have = set(granted)
    if not need:
        return []
    closest = min(need, key=lambda alternative: (len(alternative - have), sorted(alternative)))
    return sorted(closest - have)


def caller_scopes() -> frozenset[str] | None:
    """The scopes of the request's access token; None when the request is not authenticated."""
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    return None if token is None else frozenset(token.scopes)


def call_requirement(
    scopes_by_tool: Mapping[str, Requirement], via: Mapping[str, str] | None = None
) -> Callable[[str, Mapping[str, Any]], Requirement | None]:
    """What a JSON-RPC call needs: ``tools/call`` of a tool, or of an operation named in an argument.

    ``via`` maps a dispatching tool (discovery's ``call_operation``) to the argument that names
    the operation it runs.
    """
    via = dict(via or {})

    def need(method: str, params: Mapping[str, Any]) -> Requirement | None:
        if method != "tools/call":
            return None
        name = params.get("name")
        if not isinstance(name, str):
            return None
        if name in via:
            arguments = params.get("arguments")
            target = arguments.get(via[name]) if isinstance(arguments, Mapping) else None
            return scopes_by_tool.get(target) if isinstance(target, str) else None
        return scopes_by_tool.get(name)

    return need
