"""What a verified token's claims say: its audience, its scopes, and the SDK's ``AccessToken`` made of them.

Shared by the JWT verifier (:mod:`bridge.identity.client_auth`) and token introspection
(:mod:`bridge.identity.introspection`), so both accept the same audiences and read scopes alike.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

# The client id of the static ``--auth-token-env`` secret: a shared secret, no user. Here, in a module
# without httpx, so that who-is-calling checks (bridge/server/callers.py) load nothing at start-up.
STATIC_TOKEN_CLIENT_ID = "static-token"

if TYPE_CHECKING:
    from mcp.server.auth.provider import AccessToken

__all__ = ["LEEWAY_SECONDS", "access_token", "audience_match", "same_resource", "scope_tokens", "scopes_of"]

LEEWAY_SECONDS = 60  # clock skew allowed on exp and nbf


def same_resource(a: str, b: str) -> bool:
    """Whether two http(s) URLs name one resource, by the rule the SDK's bearer middleware checks
    again (so the two never disagree): both as pydantic's ``AnyHttpUrl`` normalises them (scheme
    and host lower case, the default port dropped, dot segments resolved), then one trailing
    slash ignored: ``/mcp/`` is ``/mcp``; ``/mcp//``, ``/mcp/x``, ``/MCP`` and ``/mcp?x`` are not."""
    from pydantic import AnyHttpUrl, ValidationError

    try:
        left, right = AnyHttpUrl(a), AnyHttpUrl(b)
    except (ValidationError, ValueError, TypeError):
        return False
    if left.fragment is not None or right.fragment is not None:
        return False
    return str(left).removesuffix("/") == str(right).removesuffix("/")


_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5B\x5D-\x7E]+")  # RFC 6749 section 3.3's scope-token


def scope_tokens(scope: str) -> list[str]:
    """The scopes of an RFC 6749 scope string: split on spaces only (a tab, a no-break space or any
    other separator does not split one scope into two), and a token with a character the RFC
    does not allow in one grants nothing."""
    return [token for token in scope.split(" ") if _SCOPE_TOKEN.fullmatch(token)]


def scopes_of(claims: Mapping[str, Any]) -> list[str]:
    scope = claims.get("scope")
    if isinstance(scope, str):
        return scope_tokens(scope)
    scp = claims.get("scp")
    if isinstance(scp, list):
        return [s for s in scp if isinstance(s, str) and _SCOPE_TOKEN.fullmatch(s)]
    if isinstance(scp, str):
        return scope_tokens(scp)
    return []


def audience_match(claims: Mapping[str, Any], resource_url: str) -> str | None:
    aud = claims.get("aud")
    audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    return next((a for a in audiences if isinstance(a, str) and same_resource(a, resource_url)), None)


def access_token(token: str, claims: Mapping[str, Any], audience: str) -> AccessToken:
    from mcp.server.auth.provider import AccessToken

    subject = claims.get("sub") if isinstance(claims.get("sub"), str) else None
    client_id = next(
        (v for k in ("client_id", "azp", "sub") if isinstance(v := claims.get(k), str) and v),
        "unknown-client",
    )
    issuer = claims.get("iss")
    exp = claims.get("exp")
    return AccessToken(
        token=token,
        client_id=client_id,
        scopes=scopes_of(claims),
        # The SDK refuses a token past expires_at with no leeway of its own: the leeway is added here.
        expires_at=int(exp) + LEEWAY_SECONDS if isinstance(exp, int | float) and not isinstance(exp, bool) else None,
        resource=audience,
        subject=subject,
        claims={"iss": issuer} if isinstance(issuer, str) else None,
    )
