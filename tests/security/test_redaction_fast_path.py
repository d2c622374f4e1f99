"""The whole-answer fast path of redaction is sound: when ``leaves_alone`` says an answer holds
nothing to mask, the string-by-string walk would indeed change nothing (hypothesis over JSON
answers with secrets, credential-named members and escapes placed anywhere)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from bridge.secrets.literals import FEW, KEY_CHARS, Literals
from bridge.secrets.redact import Redactor
from bridge.secrets.redact_json import redact_json
from bridge.secrets.scrub import _TOKEN_PARAMS, _USERINFO_HINT, TOKEN_QUERY_PARAMS, _token_param_in, _userinfo_in

SECRETS = ("sk-live-0123456789abcdef", "p@ss:w0rd/with&stuff", "pässwörd-long-123", "tok")  # long, escaped, short
REDACTOR = Redactor(SECRETS, names=("api_key",), header_names=("X-Key",), scheme_words=("bearer",))

_pieces = st.sampled_from(
    [
        *SECRETS,
        "Bearer " + "a" * 20,
        "X-Key",
        "x-key",
        "api_key",
        "user:pw@host",
        "%2F",
        "&amp;",
        "\\",
        "=",
        "@",
        "é",
        " ",
    ]
)
_text = st.lists(st.one_of(_pieces, st.text(max_size=6)), max_size=5).map("".join)
_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), _text),
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(_text, children, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(_json)
@example({"X-Key": "anything"})
@example({"note": "call with api_key=tok"})
@example(["sk-live-0123456789abcdef"])
def test_when_the_fast_path_leaves_an_answer_alone_the_full_walk_changes_nothing(value: Any) -> None:
    raw = json.dumps(value, ensure_ascii=False)
    if REDACTOR.leaves_alone(raw):
        assert redact_json(value, REDACTOR) == value


def test_the_fast_path_takes_ordinary_answers() -> None:
    answer = {"id": 1, "name": "Rex", "owner": {"login": "octocat", "url": "https://api.github.com/users/octocat"}}
    assert REDACTOR.leaves_alone(json.dumps(answer))
    for leak in ({"k": SECRETS[0]}, {"X-Key": "v"}, {"h": "Bearer " + "a" * 20}, {"u": "a%2Fb"}):
        assert not REDACTOR.leaves_alone(json.dumps(leak))


_query_pieces = st.sampled_from(["?", "&", ";", "=", "==", " ", '"', "#", "x", "é", "ſ", "K", "%3D"]).map(str)
_query_names = st.sampled_from(TOKEN_QUERY_PARAMS).flatmap(
    lambda name: st.sampled_from([name, name.upper(), name.title(), name.replace("s", "ſ").replace("k", "K")])
)
_query_text = st.lists(st.one_of(_query_pieces, _query_names, st.text(max_size=4)), max_size=12).map("".join)


@settings(max_examples=600, deadline=None)
@given(_query_text)
@example("?access_token=x")
@example("a" * 40 + ";x-amz-security-token=v")
@example("&key=")
@example("=" * 100 + "?sig=1")
def test_the_windowed_token_parameter_search_finds_what_the_whole_search_finds(text: str) -> None:
    assert _token_param_in(text) is (_TOKEN_PARAMS.search(text) is not None)


_url_text = st.lists(
    st.one_of(
        st.sampled_from(["://", ":/", "@", "/", "a", "b:c", " ", "\u2003", "?", "#", '"', "<", "https://u"]),
        st.text(max_size=3),
    ),
    max_size=12,
).map("".join)


@settings(max_examples=600, deadline=None)
@given(_url_text)
@example("https://user:pw@host")
@example("://@")
@example("a://b/c@d")
@example("x://y://z@w")
@example("@" * 100 + "s://u@h")
def test_the_userinfo_test_at_each_at_sign_finds_what_the_whole_search_finds(text: str) -> None:
    assert _userinfo_in(text) is (_USERINFO_HINT.search(text) is not None)


_forms = st.lists(st.text(alphabet="ab%c=é\0x", min_size=1, max_size=16), min_size=1, max_size=60)


@settings(max_examples=300, deadline=None)
@given(forms=_forms, text=st.text(alphabet="ab%c=é\0xy", max_size=200))
def test_the_automaton_finds_exactly_what_substring_searches_find(forms: list[str], text: str) -> None:
    few, many = Literals(forms), Literals(forms)
    few._automaton = None  # substring searches, whatever the number of keys
    if many._automaton is None:
        many = Literals([*forms, *(f"pad{i:03d}-key-{i}" for i in range(FEW + 1))])
    assert many._automaton is not None
    for text_ in (text, text + "".join(forms)):
        assert few.any_in(text_) is (any(f[:KEY_CHARS] in text_ for f in forms))
        assert sorted(few.find_all(text_)) == sorted(
            (at, at + len(f)) for f in set(forms) for at in range(len(text_)) if text_.startswith(f, at)
        )
        found = {span for span in many.find_all(text_) if text_[span[0] : span[1]] in set(forms)}
        assert found == set(few.find_all(text_))


def test_many_secrets_are_searched_in_one_pass() -> None:
    many = Redactor([f"{i:04d}-secret-value" for i in range(20)])
    assert many._ix.long._automaton is not None
    assert not many.leaves_alone('{"a": "0007-secret-value"}')
    assert many('{"a": "0007-secret-value"}') == '{"a": "***"}'
    assert many.leaves_alone('{"a": "b"}')
