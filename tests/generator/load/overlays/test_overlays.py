"""Overlays: the Overlay specification's compliant sets and schema tests, generate/serve options, hostile overlays."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.cli import cli
from bridge.contract.expressions import json_pointer as pointer
from bridge.contract.expressions.json_path import QueryBudgetError, compile_query
from bridge.serving.assemble import load_target
from generator.generate import build_catalogue
from generator.issues import GenerationError
from generator.load.overlays.apply import apply_overlays
from generator.load.overlays.document import Overlay, load_overlay
from generator.load.reading import SpecError
from generator.load.spec import load_spec
from generator.options import GenerateOptions
from tests.golden import spec_path

DATA = Path(__file__).parent / "data"
COMPLIANT = sorted(p.name for p in (DATA / "compliant").iterdir())


@pytest.mark.parametrize("name", COMPLIANT)
def test_each_compliant_set_gives_its_expected_output(name: str) -> None:
    folder = DATA / "compliant" / name
    document = yaml.safe_load((folder / "openapi.yaml").read_text())
    result, issues = apply_overlays(document, [load_overlay(str(folder / "overlay.yaml"))])
    assert result == yaml.safe_load((folder / "output.yaml").read_text())
    assert issues == []


@pytest.mark.parametrize("name", sorted(p.name for p in (DATA / "schema-pass").iterdir()))
def test_the_schema_suites_valid_overlays_load(name: str) -> None:
    load_overlay(str(DATA / "schema-pass" / name))


@pytest.mark.parametrize("name", sorted(p.name for p in (DATA / "schema-fail").iterdir()))
def test_the_schema_suites_invalid_overlays_are_refused_naming_the_file(name: str) -> None:
    with pytest.raises(SpecError) as caught:
        load_overlay(str(DATA / "schema-fail" / name))
    assert all(line.startswith(str(DATA / "schema-fail" / name)) for line in caught.value.problems)


def _overlay(tmp_path: Path, *actions: dict[str, Any], name: str = "tailor.yaml", version: str = "1.0.0") -> Path:
    path = tmp_path / name
    path.write_text(
        yaml.safe_dump({"overlay": version, "info": {"title": "t", "version": "1"}, "actions": list(actions)})
    )
    return path


def _overlaid(document: dict[str, Any], tmp_path: Path, *actions: dict[str, Any]) -> tuple[Any, list[str]]:
    result, issues = apply_overlays(document, [load_overlay(str(_overlay(tmp_path, *actions)))])
    return result, [str(i) for i in issues]


def test_actions_apply_in_order_and_merge_as_overlay_1_1_spells_out(tmp_path: Path) -> None:
    document = {"info": {"title": "a", "tags": ["x"]}, "paths": {"/p": {"get": {"parameters": [{"name": "a"}]}}}}
    result, said = _overlaid(
        document,
        tmp_path,
        {"target": "$.info", "update": {"title": "b", "tags": ["y"], "contact": {"name": "n"}}},
        {"target": "$.paths.*.get.parameters", "update": {"name": "b"}},
        {"target": "$.paths.*.get.parameters[?@.name == 'a']", "remove": True},
        {"target": "$.info", "update": {"contact": {"email": "e@x"}}},
    )
    assert result == {
        "info": {"title": "b", "tags": ["x", "y"], "contact": {"name": "n", "email": "e@x"}},
        "paths": {"/p": {"get": {"parameters": [{"name": "b"}]}}},
    }
    assert said == []


def test_a_target_matching_nothing_warns_and_says_when_a_ref_is_in_the_way(tmp_path: Path) -> None:
    document = {
        "paths": {"/p": {"get": {"responses": {"200": {"$ref": "#/components/responses/Ok"}}}}},
        "components": {"responses": {"Ok": {"description": "fine", "content": {}}}},
    }
    _, said = _overlaid(
        document,
        tmp_path,
        {"target": "$.paths['/p'].get.responses['200'].content", "update": {"x": 1}},
        {"target": "$.nowhere", "remove": True},
    )
    assert said[0].startswith("warning: tailor.yaml: /actions/0/target:")
    assert "through $ref" in said[0] and "/paths/~1p/get/responses/200/content" in said[0]
    assert said[1] == "warning: tailor.yaml: /actions/1/target: '$.nowhere' matches nothing"


def test_an_update_of_a_ref_object_or_a_primitive_is_a_warning(tmp_path: Path) -> None:
    document = {"a": {"$ref": "#/b"}, "b": {}, "c": "text"}
    result, said = _overlaid(document, tmp_path, {"target": "$.a", "update": {"d": 1}}, {"target": "$.c", "update": 2})
    assert result["a"] == {"$ref": "#/b", "d": 1}
    assert "/a is a $ref object" in said[0] and "/c is a string" in said[1]


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("paths", "does not match"),  # the Overlay schema's own pattern
        ("$.paths[", "unexpected end of query"),
        ("$" + ".a" * 3000, "longer than"),
    ],
)
def test_a_target_that_is_not_a_query_is_an_error_naming_the_action(tmp_path: Path, target: str, words: str) -> None:
    with pytest.raises(SpecError) as caught:
        _overlaid({"paths": {}}, tmp_path, {"target": target, "remove": True})
    (line,) = caught.value.problems
    assert "tailor.yaml: /actions/0/target: " in line and words in line


def _big_document(paths: int) -> dict[str, Any]:
    operation = {"parameters": [{"name": "q", "in": "query", "schema": {"type": "string"}}], "responses": {}}
    return {"openapi": "3.0.3", "paths": {f"/p{i}": {"get": json.loads(json.dumps(operation))} for i in range(paths)}}


def test_a_hostile_overlay_is_bounded_in_time_and_size(tmp_path: Path) -> None:
    document = _big_document(3000)
    started = time.monotonic()
    with pytest.raises(SpecError) as costly:  # nested descendant filters: far more than a linear walk
        _overlaid(document, tmp_path, {"target": "$..[?@..[?@..*]]", "update": {"x": 1}})
    assert "touches more than" in costly.value.problems[0]
    big_update = {f"k{i}": {"v": list(range(50))} for i in range(100)}
    with pytest.raises(SpecError) as huge:  # a big update copied into every node
        _overlaid(document, tmp_path, {"target": "$..*", "update": big_update})
    assert "/actions/0/update" in huge.value.problems[0] and "at most" in huge.value.problems[0]
    result, _ = _overlaid(document, tmp_path, {"target": "$..[?match(@.name, '(q+)+$')]", "update": {"x": 1}})
    assert result["paths"]["/p0"]["get"]["parameters"][0]["x"] == 1  # a backtracking pattern, run in linear time
    assert time.monotonic() - started < 30


def _nested(depth: int, leaf: Any) -> dict[str, Any]:
    top: dict[str, Any] = {}
    node = top
    for _ in range(depth - 1):
        node["a"] = {}
        node = node["a"]
    node["a"] = leaf
    return top


def test_a_deep_update_merges_without_recursion_and_a_deep_file_is_refused_clearly(tmp_path: Path) -> None:
    actions = [{"target": "$", "update": _nested(5000, 2)}]
    overlay = Overlay("deep.yaml", "0" * 64, {"overlay": "1.0.0", "info": {}, "actions": actions})
    result, _ = apply_overlays({"a": _nested(4999, {"b": 1})}, [overlay])
    node = result
    for _ in range(5000):
        node = node["a"]
    assert node == 2
    deep_file = tmp_path / "deep.json"
    head = '{"overlay": "1.0.0", "info": {"title": "t", "version": "1"}, "actions": [{"target": "$", "update": '
    deep_file.write_text(head + '{"a": ' * 5000 + "1" + "}" * 5000 + "}]}")
    with pytest.raises(SpecError) as caught:
        load_overlay(str(deep_file))
    assert caught.value.problems == [f"{deep_file}: nested too deeply"]


def test_generate_applies_overlays_from_the_config_then_the_command_line_and_records_their_digests(
    tmp_path: Path,
) -> None:
    first = _overlay(tmp_path, {"target": "$.info", "update": {"title": "Tailored"}}, name="first.yaml")
    second = _overlay(tmp_path, {"target": "$.info", "update": {"title": "Tailored twice"}}, name="second.yaml")
    config = tmp_path / "conf" / "bridge.yaml"
    config.parent.mkdir()
    config.write_text("overlays: [../first.yaml]\n")
    out = tmp_path / "pkg"
    result = CliRunner().invoke(
        cli, ["generate", str(spec_path("petstore")), "-o", str(out), "--config", str(config), "--overlay", str(second)]
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["overlays"] == [
        {"source": "first.yaml", "sha256": hashlib.sha256(first.read_bytes()).hexdigest()},
        {"source": "second.yaml", "sha256": hashlib.sha256(second.read_bytes()).hexdigest()},
    ]
    assert manifest["spec"]["sha256"] == hashlib.sha256(spec_path("petstore").read_bytes()).hexdigest()
    assert json.loads((out / "catalogue.json").read_text())["title"] == "Tailored twice"


def test_strict_turns_a_target_matching_nothing_into_an_error(tmp_path: Path) -> None:
    overlay = _overlay(tmp_path, {"target": "$.paths['/gone']", "remove": True})
    options = GenerateOptions(overlays=(str(overlay),))
    _, issues = build_catalogue(str(spec_path("petstore")), options)
    assert any("/actions/0/target" in issue.where for issue in issues)
    with pytest.raises(GenerationError):
        build_catalogue(str(spec_path("petstore")), GenerateOptions(overlays=(str(overlay),), strict=True))


def test_serve_applies_overlays_to_a_spec_in_memory(tmp_path: Path) -> None:
    first = load_spec(str(spec_path("petstore"))).document
    operation = next(iter(first["paths"].values()))["get"]["operationId"]
    overlay = _overlay(tmp_path, {"target": f"$.paths.*[?@.operationId == '{operation}']", "remove": True})
    plain, _ = load_target(str(spec_path("petstore")))
    tailored, _ = load_target(str(spec_path("petstore")), overlays=(str(overlay),))
    assert len(tailored.tools) == len(plain.tools) - 1


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text("ab", max_size=3),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text("abc", max_size=2), children, max_size=3),
    max_leaves=25,
)


@settings(max_examples=150, deadline=None)
@given(_json)
def test_every_location_a_descendant_query_gives_points_at_its_value(document: Any) -> None:
    found = compile_query("$..*").nodes(document)
    for location, value in found:
        assert pointer.resolve(document, pointer.join(*location)) == value
    containers = [v for v in [document] + [v for _, v in found] if isinstance(v, dict | list)]
    assert len(found) == sum(len(c) for c in containers)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(st.text("abc", max_size=2), _json, max_size=4),
    st.dictionaries(st.text("abc", max_size=2), _json, max_size=4),
)
def test_an_update_keeps_every_member_the_update_does_not_touch(
    document: dict[str, Any], update: dict[str, Any]
) -> None:
    before = json.loads(json.dumps(document))
    overlay = Overlay(
        "p.yaml", "0" * 64, {"overlay": "1.0.0", "info": {}, "actions": [{"target": "$", "update": update}]}
    )
    result, _ = apply_overlays(document, [overlay])
    for key, value in before.items():
        if key not in update:
            assert result[key] == value
    for key, value in update.items():
        if key not in before or not isinstance(value, dict | list) or value is None:
            continue
        assert key in result


def test_the_budget_counts_nodes_inside_filters_too() -> None:
    deep = {"k": [{"k": [{"v": i} for i in range(30)]} for _ in range(30)]}
    with pytest.raises(QueryBudgetError):
        compile_query("$..[?@..[?@..*]]").nodes(deep, max_visits=10_000)
