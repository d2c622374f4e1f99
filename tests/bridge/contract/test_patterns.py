"""Spec patterns run in time linear in the value, with ECMA-262 meaning (bridge/contract/expressions/patterns.py)."""

from __future__ import annotations

import re
import time
import warnings
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.contract.expressions.patterns import compiled_pattern
from bridge.tools.errors import InvalidArgumentsError
from bridge.tools.validation import ArgumentValidator, check_output

# Patterns that backtrack exponentially (or polynomially) in Python's re, each with a value that
# makes them do it: a long run that almost matches, then a character that breaks the match.
CATASTROPHIC: list[tuple[str, Callable[[int], str]]] = [
    (r"^[a-zA-Z0-9]+([._-]?[a-zA-Z0-9]+)*$", lambda n: "a" * n + "!"),  # the spec that took 3.4 s
    (r"^(a+)+$", lambda n: "a" * n + "!"),
    (r"^(a|a)*$", lambda n: "a" * n + "!"),
    (r"^(a|aa)+$", lambda n: "a" * n + "!"),
    (r"^(\w+\s?)*$", lambda n: "a" * n + "!"),
    (r"^([a-z0-9]+(-[a-z0-9]+)*\.)+[a-z]{2,}$", lambda n: "a" * n + "!"),
    (r"^(.*a){12}$", lambda n: "a" * n + "!"),
    (r"^(\d+)*[a-z]$", lambda n: "1" * n + "!"),
    (r"^([^@]+)+@example\.com$", lambda n: "x" * n),
    (r"^(([a-z])+.)+[A-Z]([a-z])+$", lambda n: "a" * n + "!"),
    (
        # the generated base64 file pattern of older packages: polynomial and ~60 bytes a character
        r"^(data:([A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*)?(;[^,;]*)*;base64,)?"
        r"([A-Za-z0-9+/_-]{4})*([A-Za-z0-9+/_-]{2}(==)?|[A-Za-z0-9+/_-]{3}=?)?$",
        lambda n: "data:" + ";" * n + "!",
    ),
]


def _seconds(check: Callable[[], object], repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        check()
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize(("pattern", "adversarial"), CATASTROPHIC, ids=[p[:24] for p, _ in CATASTROPHIC])
def test_catastrophic_patterns_validate_in_time_linear_in_the_value(
    pattern: str, adversarial: Callable[[int], str]
) -> None:
    schema = {"type": "object", "properties": {"v": {"type": "string", "pattern": pattern}}}
    validator = ArgumentValidator({"t": schema})

    def validate(n: int) -> Callable[[], object]:
        value = adversarial(n)

        def run() -> object:
            with pytest.raises(InvalidArgumentsError):
                validator.validate("t", {"v": value})
            return None

        return run

    assert compiled_pattern(pattern).engine == "linear"
    # 64 times the value: a linear matcher costs up to 64 times more (plus fixed costs that shrink
    # the ratio); Python's re never got past the short value (2**30 steps for 30 characters).
    short, long = _seconds(validate(1024)), _seconds(validate(64 * 1024))
    assert long / short < 64 * 4


@given(st.sampled_from([p for p, _ in CATASTROPHIC]), st.integers(min_value=1, max_value=40))
@settings(max_examples=60, deadline=None)
def test_catastrophic_keys_of_pattern_properties_match_linearly_too(pattern: str, n: int) -> None:
    # Keys are checked by the same engine: the answer for a short adversarial key comes at once.
    schema = {"type": "object", "patternProperties": {pattern: {"type": "integer"}}, "additionalProperties": False}
    key = "a" * n + "!"
    with pytest.raises(InvalidArgumentsError):
        ArgumentValidator({"t": schema}).validate("t", {key: 1})


# Benign patterns both engines read the same way: ASCII atoms, classes, groups, alternation and
# bounded or unbounded quantifiers; values over the same ASCII alphabet, without line breaks
# (where Python's `$` and ECMA's differ).
_ATOMS = st.sampled_from(
    [
        *("a", "b", "c", "0", "[ab]", "[^a]", "[a-c0-9]", r"\d", r"\w", r"\s", ".", r"\.", "-"),
        # ECMA-262 (Annex B) spellings the Rust engines refuse, respelled by bridge.contract.expressions.patterns
        *("{", "}", "[[]", r"\0", r"[\b]", "[{}]"),
    ]
)
_QUANTIFIERS = st.sampled_from(["", "", "?", "*", "+", "{2}", "{1,3}", "{0,}"])


def _concat(parts: list[str]) -> str:
    return "".join(parts)


_PIECES = st.recursive(
    st.builds(lambda a, q: a + q, _ATOMS, _QUANTIFIERS),
    lambda inner: st.one_of(
        st.builds(lambda a, b, q: f"({a}|{b}){q}", inner, inner, _QUANTIFIERS),
        st.builds(_concat, st.lists(inner, min_size=1, max_size=3)),
    ),
    max_leaves=6,
)
_PATTERNS = st.builds(
    lambda start, body, end: start + body + end, st.sampled_from(["", "^"]), _PIECES, st.sampled_from(["", "$"])
).filter(lambda pattern: re.search(r"\\0\d", pattern) is None)  # \0 then a digit: Python's octal, no ECMA escape
_VALUES = st.text(alphabet="abc019 .-_{}[\x00\x08", max_size=12)


@given(_PATTERNS, _VALUES)
@settings(max_examples=400, deadline=None)
def test_benign_patterns_give_the_same_answer_as_python_re(pattern: str, value: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # Python's "possible nested set" for [[]
        expected = re.search(pattern, value) is not None
    assert compiled_pattern(pattern).search(value) is expected


@pytest.mark.parametrize(
    ("pattern", "value", "matches"),
    [
        (r"^\d+$", "٣", False),  # ECMA \d is [0-9]; Python's matches any Unicode digit
        (r"^\w+$", "é", False),  # ECMA \w is [A-Za-z0-9_]
        (r"^\p{L}+$", "é", True),  # Unicode property escapes: Python's re cannot compile them
        (r"^\p{Lu}$", "a", False),
        (r"^a$", "a\n", False),  # ECMA $ is the very end; Python's also matches before a final \n
        (r"^\s$", "\ufeff", True),  # ECMA \s includes the BOM
        (r"^\u{1F600}$", "😀", True),
        (r"^(?<year>\d{4})$", "2024", True),  # named groups, ECMA spelling
        (r"^(?=a)a$", "a", True),  # lookahead: the budgeted engine
        (r"^(a)\1$", "ab", False),  # backreference: the budgeted engine
        (r"^a{,2}$", "a{,2}", True),  # Annex B: not a quantifier, so literal (Python reads {0,2})
        (r"^{[0-9a-f]{4}}$", "{0a1b}", True),  # literal braces around a quantifier (a real spec's GUID)
        ("^[^]$", "\n", True),  # any character, line breaks included
        (r"^\0$", "\x00", True),
        (r"^[\b]$", "\x08", True),
    ],
)
def test_patterns_have_ecma_262_meaning(pattern: str, value: str, matches: bool) -> None:
    assert compiled_pattern(pattern).search(value) is matches


def test_lookaround_patterns_run_with_a_backtracking_budget_and_pass_when_it_runs_out() -> None:
    pattern = r"^(a|a)*(?!x)\1$"
    compiled = compiled_pattern(pattern)
    assert compiled.engine == "backtracking"
    assert compiled.search("a" * 30 + "!") is None  # over budget: unknown
    schema = {"type": "object", "properties": {"v": {"type": "string", "pattern": pattern}}}
    assert ArgumentValidator({"t": schema}).validate("t", {"v": "a" * 30 + "!"}) == {"v": "a" * 30 + "!"}


@pytest.mark.parametrize("pattern", [r"[\d-z]", "(unclosed", r"\k<missing>"])
def test_patterns_no_engine_reads_are_not_enforced_on_inputs_or_outputs(pattern: str) -> None:
    assert compiled_pattern(pattern).engine == "none"
    schema = {"type": "object", "properties": {"v": {"type": "string", "pattern": pattern}}}
    assert ArgumentValidator({"t": schema}).validate("t", {"v": "anything"}) == {"v": "anything"}
    check_output("t", schema, {"v": "anything"})
