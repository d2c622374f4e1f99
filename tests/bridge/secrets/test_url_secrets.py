"""What counts as a secret in a base URL (P82), both sides of the token-likeness line."""

from __future__ import annotations

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.contract.catalogue import (
    BoundValue,
    Catalogue,
    HttpBinding,
    ParamBinding,
    ServerSpec,
    ServerVariable,
    ToolAnnotationsSpec,
    ToolEntry,
)
from bridge.secrets.redact import Redactor
from bridge.secrets.url_secrets import MIN_TOKEN_PIECE, looks_like_token, url_secrets

TOKENS = [
    "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",  # Telegram's secret half (base64url, both cases)
    "3f2a9b0c4d5e6f708192a3b4c5d6e7f8",  # hex
    "ABCD1234EFGH5678",  # one case, half digits, exactly 16
    "sk8Live2xYzQ9wErTy",
]
WORDS = [
    "organizationsmanagement",  # letters only
    "v1beta1",  # short
    "2024",  # short
    "550e8400",  # a UUID's pieces are 12 characters at most
    "446655440000",
    "MyCompanyAPIv2Endpoint",  # both cases, one digit
    "ordersandinvoices2",  # one case, one digit
    "abcdefghijklmn12",  # one case, 2 of 16 digits (under a quarter)
    "1234567890123456789",  # digits only: an account number, not a token
    "AAHdqTcvCH1vGWJ",  # a token's piece, but 15 characters
]


@pytest.mark.parametrize("piece", TOKENS)
def test_a_long_mixed_piece_looks_like_a_token(piece: str) -> None:
    assert looks_like_token(piece)


@pytest.mark.parametrize("piece", WORDS)
def test_words_versions_dates_and_uuid_pieces_do_not(piece: str) -> None:
    assert not looks_like_token(piece)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz-._~", min_size=1, max_size=60))
def test_a_path_of_lower_case_words_has_no_secret(path: str) -> None:
    assert url_secrets(httpx.URL(f"https://api.example.test/{path}/v1")) == []


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", min_size=MIN_TOKEN_PIECE, max_size=40),
    st.integers(min_value=10, max_value=10**12),
)
def test_a_segment_with_a_token_piece_is_masked_whole_and_alone(letters: str, digits: int) -> None:
    piece = f"{letters[:8]}{digits}{letters[8:]}"
    if not looks_like_token(piece):
        return  # one case and few digits: below the line (the table tests say which)
    found = url_secrets(httpx.URL(f"https://api.example.test/bot42:{piece}/"))
    assert f"bot42:{piece}" in found and f"42:{piece}" in found and piece in found


def _catalogue(variable_description: str | None, bound: str | None = None) -> Catalogue:
    params = (
        (
            ParamBinding(
                arg="", wire="api_key", location="query", style="form", explode=True, bound=BoundValue(value=bound)
            ),
        )
        if bound
        else ()
    )
    entry = ToolEntry(
        name="op",
        description="",
        input_schema={"type": "object"},
        annotations=ToolAnnotationsSpec(
            readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=True
        ),
        binding=HttpBinding(method="GET", path="/x", params=params),
    )
    variables = {"tenant": ServerVariable(default="acme", description=variable_description)}
    server = ServerSpec(url="https://{tenant}.example.test", variables=variables)
    return Catalogue(name="t", title="T", api_version="1", env_prefix="T", servers=(server,), tools=(entry,))


def test_a_server_variable_named_or_described_as_a_credential_is_a_secret_whatever_it_looks_like() -> None:
    url = httpx.URL("https://api.example.test/")
    assert url_secrets(url, _catalogue(None), {"token": "short-but-secret"}) == ["short-but-secret"]
    assert "s3cret-tenant" in url_secrets(url, _catalogue("The tenant's API key."), {"tenant": "s3cret-tenant"})
    assert url_secrets(url, _catalogue("The tenant."), {"tenant": "acme-corp"}) == []


def test_a_fixed_value_bound_to_a_credential_parameter_is_a_secret() -> None:
    assert "fixed-api-key-123" in url_secrets(httpx.URL("https://a.test/"), _catalogue(None, "fixed-api-key-123"))


def test_the_redactor_masks_every_spelling_of_a_url_secret() -> None:
    token = "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
    redact = Redactor(url_secrets(httpx.URL(f"https://api.telegram.org/bot{token}")))
    for text in (f"/bot{token}/getMe", token, token.replace(":", "%3A"), f'{{"t":"{token}"}}'.replace("/", "\\/")):
        assert "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw" not in redact(text), text
