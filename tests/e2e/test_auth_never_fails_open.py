"""Every ``serve --auth-*`` option is enforced, or ``serve`` refuses to start with one line.

The table covers every combination of the six options on both transports: whatever is given,
either the resulting app refuses a request without a token, or start-up stops before listening.
"""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest

from bridge.identity.auth_options import AuthOptions, client_auth_from_options
from tests.e2e.conftest import PACKAGE

ENV = {"CLIENT_TOKEN": "static-client-token-0123456789", "BRIDGE_ID": "bridge", "BRIDGE_SECRET": "s" * 24}
VALUES = {
    "token_env": "CLIENT_TOKEN",
    "resource_url": "http://127.0.0.1:8000/mcp",
    "issuer": "https://issuer.example",
    "jwks_url": "https://issuer.example/jwks",
    "introspection_url": "https://issuer.example/introspect",
    "client_id_env": "BRIDGE_ID",
    "client_secret_env": "BRIDGE_SECRET",
    "issuer_url": "https://issuer.example",
    "required_scopes": ("pets:read",),
}
COMBINATIONS = [combo for n in range(1, len(VALUES) + 1) for combo in itertools.combinations(sorted(VALUES), n)]


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("combo", COMBINATIONS, ids="+".join)
def test_any_auth_option_is_enforced_or_refused(combo: tuple[str, ...], transport: str) -> None:
    options = AuthOptions(**{name: VALUES[name] for name in combo})  # type: ignore[arg-type]
    try:
        auth = client_auth_from_options(options, ENV, transport=transport, host="127.0.0.1", port=8000)
    except ValueError as exc:
        assert "\n" not in str(exc)
        return
    assert transport == "http"
    assert auth is not None, "an auth option was given but no authentication is enforced"
    verifiers = bool(auth.tokens) + bool(auth.jwks_url) + bool(auth.introspection_url)
    assert verifiers >= 1
    if "issuer" in combo or "required_scopes" in combo:
        assert auth.jwks_url or auth.introspection_url  # issued tokens are checked, not only a static one
    if "jwks_url" in combo:
        assert auth.issuer == VALUES["issuer"]  # never "any issuer"
    if "introspection_url" in combo:
        assert auth.client_id and auth.client_secret


def test_no_auth_option_means_no_auth() -> None:
    assert client_auth_from_options(AuthOptions(), ENV, transport="http", host="127.0.0.1", port=8000) is None


def test_an_unset_secret_variable_is_refused_not_ignored() -> None:
    with pytest.raises(ValueError):
        client_auth_from_options(
            AuthOptions(token_env="NOT_SET_ANYWHERE"), {}, transport="http", host="127.0.0.1", port=8000
        )


@pytest.mark.parametrize(
    "flags",
    [
        ["--auth-jwt-issuer", "https://issuer.example", "--auth-resource-url", "http://127.0.0.1:8000/mcp"],
        ["--auth-jwks-url", "https://issuer.example/jwks"],
        ["--auth-introspection-url", "https://issuer.example/introspect"],
        ["--auth-jwks-url", "http://issuer.example/jwks", "--auth-issuer", "https://issuer.example"],
        ["--auth-required-scope", "pets:read"],
        ["--auth-issuer-url", "https://issuer.example"],
    ],
)
def test_serve_with_an_auth_option_it_cannot_enforce_stops_with_one_line(flags: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bridge", "serve", str(PACKAGE), "--transport", "http", "--port", "0", *flags],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
