"""Compaction stays linear in the schema, and its one-pass $defs inlining keeps the old meaning.

Scaling is asserted on ratios, never absolute seconds: a schema 4 times bigger may cost at most 8
times more. Work on one schema is counted in Python function calls (deterministic, whatever the
machine is doing); work on a whole API is timed, best of a few runs with the collector off.
"""

from __future__ import annotations

import gc
import sys
import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from types import FrameType
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.synthetic_spec import synthetic_spec
from generator.options import GenerateOptions
from generator.parse.api import parse_api
from generator.parse.schemas.keywords import unresolved_refs
from generator.shape.compact import CompactSettings, compact_api
from generator.shape.compact_defs import (
    DEFS,
    Fingerprints,
    _def_name,
    _merge_ref,
    _rebuild,
    _refs,
    count_constraints,
    inline_single_use,
    share_defs,
)

RUNS = 3


def _calls(work: Callable[[], object]) -> float:
    count = 0

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal count
        count += event == "call"

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return count


def _best_time(work: Callable[[], object]) -> float:
    gc.collect()
    gc.disable()
    try:
        best = float("inf")
        for _ in range(RUNS):
            start = time.perf_counter()
            work()
            best = min(best, time.perf_counter() - start)
        return best
    finally:
        gc.enable()


def _ratio(
    build: Callable[[int], Callable[[], object]], small: int, factor: int = 4, measure: Callable[..., float] = _calls
) -> float:
    small_work, big_work = build(small), build(small * factor)
    return measure(big_work) / max(measure(small_work), 1e-4)


# ------------------------------------------------------------------------------------ scaling


def _ring(size: int) -> dict[str, Any]:
    """One tool schema whose $defs are a ring of ``size`` definitions; every tenth is also used from
    the root, the others are used once (and inlined, in chains of nine)."""
    defs = {
        f"D{i}": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": i % 5},
                "next": {"$ref": f"#/$defs/D{(i + 1) % size}"},
            },
        }
        for i in range(size)
    }
    heads = {f"h{i}": {"$ref": f"#/$defs/D{i}"} for i in range(0, size, 10)}
    return {"type": "object", "properties": heads, DEFS: defs}


def test_inlining_single_use_definitions_is_linear_in_their_number() -> None:
    # The old loop inlined one definition per pass over the whole schema: 16 times longer here.
    assert _ratio(lambda n: partial(inline_single_use, _ring(n)), 150) < 8


def _chain(depth: int) -> dict[str, Any]:
    """A schema where each level uses the one below twice: 2**depth paths, ``depth`` distinct nodes."""
    node: dict[str, Any] = {"type": "object", "properties": {"v": {"type": "string", "description": "x" * 200}}}
    for level in range(depth):
        node = {"type": "object", "properties": {"a": node, "b": node}, "description": f"level {level}"}
    return node


def test_sharing_repeated_sub_schemas_does_not_walk_every_path() -> None:
    # The old census walked the expanded tree: doubling the depth squared the time (2**20 vs 2**10 here).
    assert _ratio(lambda n: partial(share_defs, _chain(n), min_chars=100), 10, factor=2) < 8


def test_compaction_time_per_operation_is_flat_as_operations_grow() -> None:
    options = GenerateOptions()

    def build(operations: int) -> Callable[[], object]:
        api = parse_api(synthetic_spec(operations, 600), options=options, source_name="synthetic")
        return lambda: compact_api(api, CompactSettings())

    assert _ratio(build, 40, measure=_best_time) < 8


# ------------------------------------------------------------------------- same meaning as before


def _quadratic_inline(schema: dict[str, Any]) -> dict[str, Any]:
    """The loop inline_single_use replaced: one definition inlined per pass (the reference)."""
    defs: dict[str, Any] = dict(schema.get(DEFS) or {})
    if not defs:
        return schema
    body = {k: v for k, v in schema.items() if k != DEFS}
    while True:
        reachable: set[str] = set()
        pending = [n for n in _refs(body) if n in defs]
        while pending:
            name = pending.pop()
            if name not in reachable:
                reachable.add(name)
                pending.extend(n for n in _refs(defs[name]) if n in defs and n not in reachable)
        defs = {name: value for name, value in defs.items() if name in reachable}
        uses: Counter[str] = Counter(_refs(body))
        for value in defs.values():
            uses.update(_refs(value))
        target = next((n for n in defs if uses[n] == 1 and n not in set(_refs(defs[n]))), None)
        if target is None:
            break
        definition = defs.pop(target)

        def change(node: Any, target: str = target, definition: Any = definition) -> Any | None:
            if isinstance(node, dict) and _def_name(node.get("$ref")) == target:
                return _merge_ref(node, definition)
            return None

        body = _rebuild(body, change, {})
        defs = {name: _rebuild(value, change, {}) for name, value in defs.items()}
    return {**body, DEFS: dict(sorted(defs.items()))} if defs else body


NAMES = [f"D{i}" for i in range(5)]


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.builds(lambda n: {"type": "integer", "minimum": n}, st.integers(0, 3)),
        st.just({"type": "string", "enum": ["a", "b"]}),
        st.sampled_from(NAMES).map(lambda n: {"$ref": f"#/$defs/{n}"}),
        st.tuples(st.sampled_from(NAMES), st.sampled_from(["description", "minProperties"])).map(
            lambda t: {"$ref": f"#/$defs/{t[0]}", t[1]: 1 if t[1] == "minProperties" else "note"}
        ),
    )


def _schema(leaf: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.dictionaries(st.sampled_from("abcd"), inner, min_size=1, max_size=3).map(
                lambda props: {"type": "object", "properties": props, "required": sorted(props)[:1]}
            ),
            st.builds(lambda item: {"type": "array", "items": item}, inner),
            st.lists(inner, min_size=1, max_size=3).map(lambda members: {"anyOf": members}),
        ),
        max_leaves=5,
    )


@st.composite
def _tool_schemas(draw: st.DrawFn) -> dict[str, Any]:
    # definitions whose whole body is a reference are fine for the new code, not for the old one
    def_body = _schema(_leaf()).filter(lambda s: "$ref" not in s)
    defs = {name: draw(def_body) for name in draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=5))}
    properties = draw(st.dictionaries(st.sampled_from("wxyz"), _schema(_leaf()), min_size=1, max_size=3))
    return {"type": "object", "properties": properties, DEFS: defs}


def _closed(schema: dict[str, Any]) -> bool:
    """Every reference names a definition of the schema (the converter's output always does)."""
    defs = schema.get(DEFS) or {}
    return all(name in defs for node in [schema, *defs.values()] for name in _refs(node))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(_tool_schemas())
def test_one_pass_inlining_gives_what_the_one_definition_per_pass_loop_gave(schema: dict[str, Any]) -> None:
    if not _closed(schema):
        return
    inlined = inline_single_use(schema)
    assert inlined == _quadratic_inline(schema)
    assert unresolved_refs(inlined) == []
    assert count_constraints(inlined) == count_constraints(schema)
    remaining = inlined.get(DEFS) or {}
    uses = Counter(_refs({k: v for k, v in inlined.items() if k != DEFS}))
    for value in remaining.values():
        uses.update(_refs(value))
    assert all(uses[name] >= 2 or name in set(_refs(remaining[name])) for name in remaining)


def _stack_census(schema: dict[str, Any], min_chars: int) -> tuple[dict[str, int], dict[str, str]]:
    """The walk share_defs used to count repeated sub-schemas with: every path of the tree."""
    prints = Fingerprints()
    counts: Counter[str] = Counter()
    hints: dict[str, str] = {}
    roots = [(schema, "schema"), *((value, name) for name, value in (schema.get(DEFS) or {}).items())]
    for root, hint in roots:
        stack = [(root, hint)]
        while stack:
            current, name = stack.pop()
            for key, value in current.items():
                if key == DEFS:
                    continue
                if key in ("properties", "patternProperties", "dependentSchemas") and isinstance(value, dict):
                    items = [(item, str(prop)) for prop, item in value.items()]
                elif key in ("allOf", "anyOf", "oneOf", "prefixItems") and isinstance(value, list):
                    items = [(item, name) for item in value]
                elif key in ("items", "additionalProperties", "not"):
                    items = [(value, f"{name}_item" if key == "items" else name)]
                else:
                    continue
                for item, item_hint in items:
                    if isinstance(item, dict):
                        digest, size = prints(item)
                        if size >= min_chars:
                            counts[digest] += 1
                            hints.setdefault(digest, item_hint)
                        stack.append((item, item_hint))
    return {d: min(n, 2) for d, n in counts.items()}, hints


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(_tool_schemas(), st.sampled_from([20, 60, 200]))
def test_the_memoised_census_counts_what_the_walk_of_every_path_counted(schema: dict[str, Any], min_chars: int) -> None:
    # the same sub-dict object in several places, as the converter and the compactor share them
    shared = next(iter(schema["properties"].values()))
    schema["properties"]["again"] = shared
    census = Fingerprints().census(min_chars, {})
    counts: dict[str, int] = {}
    hints: dict[str, str] = {}
    roots = [({k: v for k, v in schema.items() if k != DEFS}, "schema"), *(schema.get(DEFS) or {}).items()]
    for root, hint in [(r, h) if isinstance(h, str) else (h, r) for r, h in roots]:
        for digest, (n, found) in census(root, hint).items():
            counts[digest] = min(counts.get(digest, 0) + n, 2)
            hints.setdefault(digest, found)
    assert (counts, hints) == _stack_census(schema, min_chars)
    if _closed(schema):
        assert unresolved_refs(share_defs(schema, min_chars=min_chars)) == []


def test_a_definition_that_is_only_a_reference_to_a_single_use_one_is_inlined_not_left_dangling() -> None:
    # The old loop replaced references below a definition's root, never the root itself.
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/Alias"}, "b": {"$ref": "#/$defs/Alias"}},
        DEFS: {"Alias": {"$ref": "#/$defs/Real", "description": "an alias"}, "Real": {"type": "string"}},
    }
    inlined = inline_single_use(schema)
    assert inlined[DEFS] == {"Alias": {"type": "string", "description": "an alias"}}
    assert unresolved_refs(inlined) == []
