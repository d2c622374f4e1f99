"""What ``serve`` says at start-up: the upstream it calls and the credential variables it lacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bridge.secrets.credentials import Credentials
from bridge.serving.package import load_catalogue
from bridge.serving.startup import base_url_source, startup_lines

GENERATED = Path(__file__).resolve().parents[3] / "generated"
PETSTORE = load_catalogue(GENERATED / "petstore")
STORE = load_catalogue(GENERATED / "swagger_two_store")  # basic auth OR an API key, on every operation


def lines(catalogue, environ, option=None):  # type: ignore[no-untyped-def]
    source = base_url_source(catalogue, "http://api.example/v1", option=option, environ=environ)
    return startup_lines(catalogue, Credentials(catalogue.security_schemes, environ), source)


def test_a_missing_credential_is_named_with_the_tools_that_need_it() -> None:
    said = lines(PETSTORE, {})
    assert said[0].startswith("upstream: http://api.example/v1 (the spec's first server; set PETSTORE_BASE_URL")
    assert said[1].startswith("credentials missing: set PETSTORE_API_KEY")
    assert "5 of 6 tools" in said[1]


def test_a_configured_credential_is_said_without_its_value() -> None:
    said = lines(PETSTORE, {"PETSTORE_API_KEY": "sk-live-canary-123456", "PETSTORE_BASE_URL": "http://x"})
    assert said[0] == "upstream: http://api.example/v1 (from $PETSTORE_BASE_URL)"
    assert said[1].startswith('credentials: "apiKey" is configured')
    assert all("sk-live-canary" not in line for line in said)


def test_alternative_schemes_warn_only_while_no_alternative_is_configured() -> None:
    none_set = lines(STORE, {}, option="http://x")
    token_set = lines(STORE, {"SWAGGER_TWO_STORE_TOKEN_API_KEY": "k" * 20}, option="http://x")
    assert none_set[0] == "upstream: http://api.example/v1 (from --base-url)"
    assert sum(line.startswith("credentials missing") for line in none_set) == 2
    assert sum(line.startswith("credentials missing") for line in token_set) == 0
    assert sum(line.startswith("credentials not set") for line in token_set) == 1


def test_serve_says_it_once_on_stderr_over_stdio() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bridge", "serve", str(GENERATED / "petstore")],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)},
    )
    assert result.stdout == ""
    assert result.stderr.count("credentials missing: set PETSTORE_API_KEY") == 1
    assert result.stderr.count("upstream: ") == 1
