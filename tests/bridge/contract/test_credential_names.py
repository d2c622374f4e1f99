"""The credential-name rule (P11) over spellings: every credential-like one is refused, every cursor kept.

Each spelling is a list of words; hypothesis renders it in any case (lower, UPPER, Title, camel),
with any separator (``_ - .`` or none), behind a vendor prefix (``x-``, ``X-Goog-``, ``my_``) and
with a trailing number, and checks both the rule and the runtime's refusal: a hand-made binding
(a catalogue from an older generator, or edited by hand) that offers such a parameter cannot send
a model's value for it.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.contract.catalogue import BodyBinding, BodyField, HttpBinding, ParamBinding
from bridge.contract.wire_rules import credential_name, describes_credential, may_hold_text
from bridge.request.build import build_request
from bridge.tools.errors import InvalidArgumentsError

BASE = "https://api.example.test/v1"
PARAMS = ("query", "header", "cookie")

# Words -> where that name carries a credential (all other locations: it does not).
CREDENTIALS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("api", "key"): (*PARAMS, "body", "path"),
    ("access", "token"): (*PARAMS, "body", "path"),
    ("oauth", "token"): (*PARAMS, "body", "path"),
    ("auth", "token"): (*PARAMS, "body", "path"),
    ("refresh", "token"): (*PARAMS, "body", "path"),
    ("id", "token"): (*PARAMS, "body", "path"),
    ("session", "token"): (*PARAMS, "body", "path"),
    ("provider", "token"): (*PARAMS, "body", "path"),
    ("bot", "token"): (*PARAMS, "body", "path"),
    ("client", "secret"): (*PARAMS, "body", "path"),
    ("secret", "key"): (*PARAMS, "body", "path"),
    ("private", "key"): (*PARAMS, "body", "path"),
    ("subscription", "key"): (*PARAMS, "body", "path"),
    ("access", "key"): (*PARAMS, "body", "path"),
    ("key",): PARAMS,  # Google's `key`; in a body or a path it is a map key or an object's name
    ("token",): (*PARAMS, "body"),
    ("secret",): (*PARAMS, "body"),
    ("password",): (*PARAMS, "path"),  # a body's is account data
    ("signature",): PARAMS,  # a body's may be an e-mail signature
    ("sig",): PARAMS,
    ("authorization",): PARAMS,
    ("auth",): PARAMS,
    ("credentials",): (*PARAMS, "body"),
    ("security", "token"): (*PARAMS, "body", "path"),
    ("x", "amz", "signature"): PARAMS,
    ("x", "amz", "security", "token"): (*PARAMS, "body", "path"),
    ("x", "amz", "credential"): (*PARAMS, "body"),
    ("x", "amz", "date"): ("query", "header"),
    ("x", "amz", "algorithm"): ("query", "header"),
    ("x", "amz", "signed", "headers"): ("query", "header"),
    ("x", "amz", "content", "sha256"): ("query", "header"),
    ("session", "id"): ("header", "cookie"),  # a session's id in a query or path names a resource
}
# Never a credential, anywhere: cursors, idempotency tokens, identifiers and properties of keys.
KEPT: tuple[tuple[str, ...], ...] = (
    ("page", "token"),
    ("next", "token"),
    ("next", "page", "token"),
    ("continuation", "token"),
    ("sync", "token"),
    ("pagination", "token"),
    ("starting", "token"),
    ("skip", "token"),
    ("delta", "token"),
    ("client", "token"),
    ("client", "request", "token"),
    ("idempotency", "token"),
    ("idempotency", "key"),
    ("device", "token"),
    ("sort", "key"),
    ("partition", "key"),
    ("public", "key"),  # no secret
    ("token", "type"),
    ("token", "id"),
    ("key", "id"),
    ("api", "key", "id"),
    ("secret", "name"),
    ("credential", "id"),
    ("max", "tokens"),
    ("signature", "method"),
    ("page", "size"),
    ("authentication",),  # EC2's CreateClientVpnEndpoint: how the VPN authenticates its clients
)
SEPARATORS = ("_", "-", ".", "")
PREFIXES: tuple[tuple[str, ...], ...] = ((), ("x",), ("x", "goog"), ("my",))


@st.composite
def spelled(draw: st.DrawFn, words: tuple[str, ...]) -> str:
    """``words`` in any case and separator, maybe behind a vendor prefix or before a number."""
    if words[:2] != ("x", "amz"):
        words = draw(st.sampled_from(PREFIXES)) + words
    case = draw(st.sampled_from(("lower", "upper", "title", "camel")))
    sep = draw(st.sampled_from(SEPARATORS))
    if case == "lower":
        parts = list(words)
    elif case == "upper":
        parts = [w.upper() for w in words]
    elif case == "title":
        parts = [w.title() for w in words]
    else:
        parts = [words[0], *(w.title() for w in words[1:])]
        sep = ""
    text = sep.join(parts)
    if draw(st.booleans()) and words[:2] != ("x", "amz"):  # AWS spells its fields one way
        text += draw(st.sampled_from(("2", "_2", "-1")))
    return text


def _label(words: tuple[str, ...]) -> str:
    return "_".join(words)


@pytest.mark.parametrize("words", list(CREDENTIALS), ids=_label)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_spelling_of_a_credential_name_is_one_where_it_carries_a_credential(
    words: tuple[str, ...], data: st.DataObject
) -> None:
    name = data.draw(spelled(words))
    for location in (*PARAMS, "body", "path"):
        expected = location in CREDENTIALS[words]
        assert (credential_name(location, name) is not None) is expected, (location, name)


@pytest.mark.parametrize("words", KEPT, ids=_label)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_no_spelling_of_a_cursor_or_identifier_is_a_credential(words: tuple[str, ...], data: st.DataObject) -> None:
    name = data.draw(spelled(words))
    for location in (*PARAMS, "body", "path"):
        assert credential_name(location, name) is None, (location, name)


@pytest.mark.parametrize(
    ("name", "description", "credential"),
    [
        ("k", "Your API key. Get one at https://example.test.", True),
        ("X-Custom", "OAuth 2.0 token for the current user.", True),
        ("hash", "HMAC request signature of the query.", True),
        ("keyId", "The API key ID.", False),  # an identifier
        ("pageToken", "Access token page cursor.", False),  # a cursor
        ("filter", "Filter by status. Works with any API key.", False),  # not the first sentence
        ("include", "Include the access token's scopes", False),
        ("ReasonCode", "<p>The reason codes.</p> <ul><li>not accepting my password</li></ul>", False),  # HTML
    ],
)
def test_a_description_names_a_credential_only_in_its_first_sentence_and_never_for_an_identifier(
    name: str, description: str, credential: bool
) -> None:
    assert (describes_credential("query", name, description) is not None) is credential
    assert describes_credential("body", name, description) is None  # a body's: by name only


@pytest.mark.parametrize(
    ("description", "credential"),
    [
        (None, True),  # undescribed: Google's
        ("API key. Your API key identifies your project.", True),
        ("A key for identifying the cache.", False),  # GitHub's actions cache
        ("An explicit key or prefix for identifying the cache", False),
    ],
)
def test_a_bare_key_is_an_api_key_unless_its_description_says_what_else_it_is(
    description: str | None, credential: bool
) -> None:
    for location in PARAMS:
        assert (credential_name(location, "key", description) is not None) is credential
    binding = _old_binding("query", "key")
    descriptions = {"cred": description} if description else None
    if credential:
        with pytest.raises(InvalidArgumentsError, match="carries a credential"):
            build_request(binding, {"cred": "npm-linux-x64"}, base_url=BASE, descriptions=descriptions)
    else:
        request = build_request(binding, {"cred": "npm-linux-x64"}, base_url=BASE, descriptions=descriptions)
        assert request.query == (("key", "npm-linux-x64"),)
    assert credential_name("query", "api_key", "A key for identifying the cache.") is not None  # only a bare key


def test_numbers_and_booleans_never_hold_a_credential() -> None:
    assert not may_hold_text({"type": "integer"}) and not may_hold_text({"type": ["boolean", "null"]})
    assert may_hold_text({"type": "string"}) and may_hold_text({}) and may_hold_text({"type": ["integer", "string"]})


def _old_binding(location: str, wire: str) -> HttpBinding:
    """A binding that offers ``wire`` as an argument, as an older generator (or a hand) wrote it."""
    style = "simple" if location in ("path", "header") else "form"
    if location == "body":
        body = BodyBinding(media_type="application/json", fields=(BodyField(arg="cred", wire=wire),))
        return HttpBinding(method="POST", path="/things", params=(), body=body)
    path = "/things/{cred}" if location == "path" else "/things"
    param = ParamBinding(arg="cred", wire=wire, location=location, style=style, explode=style == "form")  # type: ignore[arg-type]
    return HttpBinding(method="GET", path=path, params=(param,))


@pytest.mark.parametrize("words", list(CREDENTIALS), ids=_label)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_model_value_for_any_spelling_of_a_credential_is_never_built_into_a_request(
    words: tuple[str, ...], data: st.DataObject
) -> None:
    name = data.draw(spelled(words))
    location = data.draw(st.sampled_from(CREDENTIALS[words]))
    value = data.draw(st.sampled_from(["model-chosen-1234", ["a", "b"], {"k": "v"}]))
    if location in ("path", "header") and not isinstance(value, str):
        value = "model-chosen-1234"
    with pytest.raises(InvalidArgumentsError, match="carries a credential"):
        build_request(_old_binding(location, name), {"cred": value}, base_url=BASE)


@pytest.mark.parametrize("words", KEPT, ids=_label)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_a_cursor_of_any_spelling_is_sent(words: tuple[str, ...], data: st.DataObject) -> None:
    name = data.draw(spelled(words))
    request = build_request(_old_binding("query", name), {"cred": "CAESBggDEgQ"}, base_url=BASE)
    assert "CAESBggDEgQ" in str(request.url)


@pytest.mark.parametrize(
    ("args", "refused"),
    [
        ({"body": {"provider_token": "tok-1234567890", "title": "t"}}, True),
        ({"body": {"Api-Key": "abc"}}, True),
        ({"body": {"key": "label", "value": "v", "sort_key": "a", "max_tokens": 5}}, False),
        ({"body": {"provider_token": 7}}, False),  # a number carries no credential
    ],
)
def test_a_whole_body_argument_cannot_carry_a_credential_at_its_top_level(args: dict[str, Any], refused: bool) -> None:
    binding = HttpBinding(
        method="POST", path="/sendInvoice", params=(), body=BodyBinding(media_type="application/json", arg="body")
    )
    if refused:
        with pytest.raises(InvalidArgumentsError, match="carries a credential"):
            build_request(binding, args, base_url=BASE)
    else:
        assert build_request(binding, args, base_url=BASE).content is not None


def test_an_exploded_query_object_cannot_send_a_member_named_like_a_credential() -> None:
    param = ParamBinding(arg="filter", wire="filter", location="query", style="form", explode=True, free_members=True)
    binding = HttpBinding(method="GET", path="/things", params=(param,))
    with pytest.raises(InvalidArgumentsError):
        build_request(binding, {"filter": {"oauth_token": "ya29.model"}}, base_url=BASE)
    assert build_request(binding, {"filter": {"pageToken": "x"}}, base_url=BASE).query == (("pageToken", "x"),)
