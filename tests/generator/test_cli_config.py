"""``generate --config`` checked like code: unknown keys, wrong types and unknown operations are one-line errors."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bridge.cli import cli
from generator.load.config import config_problems, config_schema

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "specs" / "petstore.yaml"
# The configuration reference: its `--config FILE` row and its YAML examples are checked against the schema.
CONFIGURATION_PAGE = ROOT / "docs" / "configuration.md"

# (config text, exit code, the one line of stderr after "error: <file>")
BAD = [
    (
        "security_scheme: {b: {type: http, scheme: bearer}}",
        2,
        ": /security_scheme: unknown key 'security_scheme'; did you mean security_schemes?",
    ),
    ("operation: {listPets: {name: x}}", 2, ": /operation: unknown key 'operation'; did you mean operations?"),
    ("operations: {listPets: {nmae: all}}", 2, ": /operations/listPets/nmae: unknown key 'nmae'; did you mean name?"),
    ("operations: [listPets]", 2, ": /operations: expected a mapping, got a list"),
    ("operations: {listPets: [x]}", 2, ": /operations/listPets: expected a mapping, got a list"),
    (
        "operations: {listPets: {exclude: yes please}}",
        2,
        ": /operations/listPets/exclude: expected true or false, got a string",
    ),
    (
        "operations: {listPets: {annotations: {readOnly: true}}}",
        2,
        ": /operations/listPets/annotations/readOnly: unknown key 'readOnly'; did you mean readOnlyHint?",
    ),
    (
        "operations: {listPets: {output: {max_items: many}}}",
        2,
        ": /operations/listPets/output/max_items: expected an integer, got a string",
    ),
    (
        "operations: {listPets: {async: {runing: [a]}}}",
        2,
        ": /operations/listPets/async/runing: unknown key 'runing'; did you mean running?",
    ),
    ("bind: {token: }", 2, ": /bind/token: expected a string or a number or true or false, got nothing"),
    ("bind: [token]", 2, ": /bind: expected a mapping, got a list"),
    (
        "headers: {X-Org: {env: ORG}}",
        2,
        ": /headers/X-Org: expected a string or a number or true or false, got a mapping",
    ),
    ("security: {bearer: []}", 2, ": /security: expected a list, got a mapping"),
    (
        "security_schemes: {b: {type: htp}}",
        2,
        ": /security_schemes/b/type: 'htp' is not one of apiKey, http, oauth2, openIdConnect, mutualTLS; "
        "did you mean http?",
    ),
    (
        "security_schemes: {b: {type: http, shceme: bearer}}",
        2,
        ": /security_schemes/b/shceme: unknown key 'shceme'; did you mean scheme?",
    ),
    (
        "server: {instruction: Be brief.}",
        2,
        ": /server/instruction: unknown key 'instruction'; did you mean instructions?",
    ),
    ("overlays: 3", 2, ": /overlays: expected a string or a list of strings, got an integer"),
    ("[1, 2]", 2, ": /: expected a mapping, got a list"),
    (
        "operations: {listPet: {name: all}}",
        1,
        "/operations/listPet: no operation has this operationId or `METHOD /path`; did you mean listPets",
    ),
    (
        "operations: {'GET /pet': {exclude: true}}",
        1,
        "/operations/GET ~1pet: no operation has this operationId or `METHOD /path`; did you mean GET /pets",
    ),
]


@pytest.mark.parametrize(("text", "code", "line"), BAD, ids=[t for t, _, _ in BAD])
def test_a_bad_config_is_one_line_naming_the_place_and_the_fix(tmp_path: Path, text: str, code: int, line: str) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(text + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["generate", str(SPEC), "-o", str(tmp_path / "out"), "--config", str(config)])
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
    (error,) = [row for row in result.output.splitlines() if row.startswith("error:")]
    assert line in error
    assert (str(config) in error) if code == 2 else error.startswith("error: config: ")
    assert not (tmp_path / "out").exists()


def test_a_config_that_is_not_yaml_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("operations: [\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["generate", str(SPEC), "-o", str(tmp_path / "out"), "--config", str(config)])
    assert result.exit_code == 2
    assert result.output.strip().startswith(f"error: {config}: not YAML (line 2")


def test_a_good_config_with_every_operation_key_generates(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        """x-notes: {anything: goes}
bind: {limit: 10}
headers: {X-Org: env:ORG_ID}
server: {instructions: Be brief., title: Pets, icons: []}
security_schemes: {bearer: {type: http, scheme: bearer, x-vendor: 1}}
security: [{bearer: []}]
operations:
  listPets:
    name: all_pets
    annotations: {readOnlyHint: true, openWorldHint: false}
    output: {fields: [id, name], max_items: 5}
    scopes: [[read], [admin]]
    async: false
  GET /pets/{petId}: {output: [name], security: []}
  deletePet: {exclude: true}
""",
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["generate", str(SPEC), "-o", str(tmp_path / "out"), "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert "all_pets" in (tmp_path / "out" / "catalogue.json").read_text(encoding="utf-8")


def _documented_configs() -> list[dict[str, Any]]:
    page = CONFIGURATION_PAGE.read_text(encoding="utf-8")
    blocks = [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", page, re.S)]
    keys = set(config_schema()["properties"])
    return [b for b in blocks if isinstance(b, dict) and set(b) <= keys]


def test_every_config_example_in_the_docs_is_accepted() -> None:
    configs = _documented_configs()
    assert len(configs) >= 2  # the bind and the credentials examples
    for config in configs:
        assert config_problems(config, "docs/configuration.md") == []


def test_every_key_the_docs_document_for_the_config_is_in_the_schema() -> None:
    page = CONFIGURATION_PAGE.read_text(encoding="utf-8")
    (row,) = [line for line in page.splitlines() if line.startswith("| `--config FILE`")]
    per_operation = re.search(r"\{name, [^}]*\}", row)
    assert per_operation is not None
    schema = config_schema()
    operation_keys = set(schema["$defs"]["operation"]["properties"])
    assert {k.strip() for k in per_operation.group(0).strip("{}").split(",")} <= operation_keys
    top = set(re.findall(r"`(\w+):`", row))
    assert top and top <= set(schema["properties"]), top - set(schema["properties"])


def _documented_keys() -> tuple[set[str], set[str]]:
    """The keys of the configuration page's two tables: the top level, then under each operation."""
    page = CONFIGURATION_PAGE.read_text(encoding="utf-8")
    section = page.split("## The `--config` file", 1)[1].split("### Bound parameters", 1)[0]
    top, per_operation = section.split("Under each `operations:` entry", 1)
    keys = [
        {key for row in re.findall(r"^\| (.*?) \|", part, re.M) for key in re.findall(r"`(\w+):`", row)}
        for part in (top, per_operation)
    ]
    return keys[0], keys[1]


def test_the_configuration_page_has_a_row_for_every_key_of_the_schema_and_no_other() -> None:
    top, per_operation = _documented_keys()
    schema = config_schema()
    assert top == set(schema["properties"])
    assert per_operation == set(schema["$defs"]["operation"]["properties"])


@pytest.mark.parametrize("command", ["generate", "serve"])
def test_the_configuration_page_names_every_option_of_the_command(command: str) -> None:
    page = CONFIGURATION_PAGE.read_text(encoding="utf-8")
    found = cli.get_command(click.Context(cli), command)
    assert found is not None
    options = [o for p in found.params if not getattr(p, "hidden", False) for o in p.opts if o.startswith("--")]
    assert options
    missing = [o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", page)]
    assert missing == [], f"docs/configuration.md does not name {missing}"


KEY = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=20)


@given(key=KEY, where=st.sampled_from(["top", "operation", "server", "annotations"]))
@settings(max_examples=200, deadline=None)
def test_any_key_the_schema_does_not_know_is_one_error_at_its_pointer(key: str, where: str) -> None:
    schema = config_schema()
    known = {
        "top": set(schema["properties"]),
        "operation": set(schema["$defs"]["operation"]["properties"]),
        "server": set(schema["properties"]["server"]["properties"]),
        "annotations": set(schema["$defs"]["operation"]["properties"]["annotations"]["properties"]),
    }[where]
    assume(key not in known and not key.startswith("x-"))
    config: dict[str, Any] = {
        "top": {key: 1},
        "operation": {"operations": {"op": {key: 1}}},
        "server": {"server": {key: 1}},
        "annotations": {"operations": {"op": {"annotations": {key: True}}}},
    }[where]
    (line,) = config_problems(config, "c.yaml")
    assert line.endswith(tuple(f"did you mean {k}?" for k in known)) or "valid keys: " in line
    assert f"/{key}: unknown key {key!r}" in line
