"""What each kind of security scheme puts on a request: its name in messages, where its
credential sits (for the redactor), and which requirements no single request can carry."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from bridge.contract.catalogue import SchemeUse, SecurityScheme

__all__ = ["authorization_clash", "bearer_kind", "credential_positions", "scheme_kind"]


def credential_positions(schemes: Iterable[SecurityScheme]) -> dict[str, list[str]]:
    """Where each scheme puts its credential: the redactor masks even short secrets there."""
    names: list[str] = []
    header_names: list[str] = []
    words: list[str] = []
    for scheme in schemes:
        if scheme.type == "apiKey" and scheme.param_name:
            names.append(scheme.param_name)
            if scheme.location == "header":
                header_names.append(scheme.param_name)
        elif scheme.type == "http" and scheme.http_scheme:
            words.append(scheme.http_scheme)
    return {"names": names, "header_names": header_names, "scheme_words": words}


def scheme_kind(scheme: SecurityScheme) -> str:
    if scheme.type == "apiKey":
        return "API key"
    if scheme.type == "http":
        return f"HTTP {scheme.http_scheme or 'auth'}"
    if scheme.type == "oauth2":
        return "OAuth2"
    if scheme.type == "openIdConnect":
        return "OpenID Connect token"
    return "mutual TLS"


def _uses_authorization(scheme: SecurityScheme) -> bool:
    if scheme.type in ("http", "oauth2", "openIdConnect"):
        return True
    return (
        scheme.type == "apiKey" and scheme.location == "header" and (scheme.param_name or "").lower() == "authorization"
    )


def bearer_kind(scheme: SecurityScheme) -> bool:
    """A scheme whose credential is ``Authorization: Bearer <token>``: one token can stand for several."""
    if scheme.type in ("oauth2", "openIdConnect"):
        return True
    return scheme.type == "http" and (scheme.http_scheme or "bearer").lower() == "bearer"


def authorization_clash(schemes: Mapping[str, SecurityScheme], alternative: Sequence[SchemeUse]) -> str | None:
    """Why ``alternative`` cannot be sent, or None: two of its schemes of different kinds (basic and
    OAuth2, say) both need the one ``Authorization`` header, and HTTP carries one credential there.
    Bearer-token schemes together are one credential (see ``Credentials``)."""
    users = [use.scheme for use in alternative if (s := schemes.get(use.scheme)) is not None and _uses_authorization(s)]
    bearers = [name for name in users if bearer_kind(schemes[name])]
    if len(users) < 2 or (len(bearers) == len(users)):
        return None
    return f"the requirement {' + '.join(users)} needs two credentials in one Authorization header"
