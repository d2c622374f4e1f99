"""One reference that cannot be followed costs the operations that need it, not the whole spec.

Missing file, bad pointer, unparseable file, refused remote ref or a ref out of the spec folder:
the operations that depend on it are skipped with a warning naming ``METHOD /path`` and the
reference, the load reports where the reference is written and why, the rest generate; with
``--strict`` the spec is refused as before, naming every broken reference.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bridge.cli import cli
from generator.generate import build_api
from generator.issues import Level
from generator.load.reading import SpecError
from generator.options import GenerateOptions

OTHER = """
Thing: {type: object, properties: {name: {type: string}}}
Param: {name: q, in: query, schema: {type: string}}
Body: {content: {application/json: {schema: {type: object, properties: {name: {type: string}}}}}}
"""

# kind of breakage -> (the reference as written in api.yaml, text the warnings must contain)
BROKEN = {
    "missing file": ("missing.yaml#/Thing", "missing.yaml"),
    "bad pointer in a file": ("other.yaml#/Nope", "Nope"),
    "pointer that is no pointer": ("other.yaml#Nope", "Nope"),
    "unparseable file": ("garbage.yaml#/Thing", "garbage.yaml"),
    "refused remote ref": ("https://example.invalid/api.yaml#/Thing", "example.invalid"),
    "file outside the spec folder": ("../outside.yaml#/Thing", "outside.yaml"),
    "bad local pointer": ("#/components/schemas/Nope", "Nope"),
}

# where the broken reference sits in GET or POST /broken
POSITIONS = {
    "response schema": """
  /broken:
    get:
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "REF"}}}}
""",
    "parameter": """
  /broken:
    get:
      parameters: [{$ref: "REF"}]
      responses: {"204": {description: ok}}
""",
    "request body": """
  /broken:
    post:
      requestBody: {$ref: "REF"}
      responses: {"204": {description: ok}}
""",
    "nested property schema": """
  /broken:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object, properties: {deep: {type: array, items: {$ref: "REF"}}}}
""",
}

HEAD = """
openapi: 3.0.3
info: {title: Broken refs, version: "1"}
paths:
  /fine:
    get:
      operationId: fine
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "other.yaml#/Thing"}}}}
"""
TAIL = """
components:
  schemas:
    Local: {type: string}
"""


def _write(folder: Path, api: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "other.yaml").write_text(OTHER, encoding="utf-8")
    (folder / "garbage.yaml").write_text("Thing: [unclosed\n", encoding="utf-8")
    (folder.parent / "outside.yaml").write_text(OTHER, encoding="utf-8")
    path = folder / "api.yaml"
    path.write_text(api, encoding="utf-8")
    return path


def _labels(issues: tuple[object, ...] | list[object]) -> list[str]:
    return [str(issue) for issue in issues]


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("kind", BROKEN)
def test_an_operation_with_a_broken_ref_is_skipped_and_the_others_generate(
    tmp_path: Path, kind: str, position: str
) -> None:
    ref, needle = BROKEN[kind]
    method = "POST" if "post:" in POSITIONS[position] else "GET"
    spec = _write(tmp_path / "spec", HEAD + POSITIONS[position].replace("REF", ref) + TAIL)

    _, api = build_api(str(spec), GenerateOptions())

    assert [op.label for op in api.operations] == ["GET /fine"]
    assert all(issue.level is Level.WARNING for issue in api.issues)
    skipped = [i for i in api.issues if i.where == f"{method} /broken"]
    assert len(skipped) == 1 and "skipped" in skipped[0].detail and needle in skipped[0].detail
    # the load says where the reference is written and why it cannot be followed
    written = [i for i in api.issues if i.where.startswith(str(spec) + ": /paths/~1broken/")]
    assert written and needle in written[0].where + written[0].detail


@pytest.mark.parametrize("kind", BROKEN)
def test_strict_refuses_a_spec_with_a_broken_ref_naming_it(tmp_path: Path, kind: str) -> None:
    ref, needle = BROKEN[kind]
    spec = _write(tmp_path / "spec", HEAD + POSITIONS["response schema"].replace("REF", ref) + TAIL)

    with pytest.raises(SpecError) as raised:
        build_api(str(spec), GenerateOptions(strict=True))

    assert len(raised.value.problems) == 1
    assert raised.value.problems[0].startswith(f"{spec}: /paths/~1broken/get/responses/200/")
    assert needle in raised.value.problems[0]


MULTI_FILE = """
openapi: 3.0.3
info: {title: Zoo, version: "1"}
paths:
  /animals:
    get:
      operationId: listAnimals
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Animal"}}}}
  /animals/{id}:
    get:
      operationId: getAnimal
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "gone.yaml#/Animal"}}}}
  /keepers:
    get:
      operationId: listKeepers
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "keepers.yaml#/Nobody"}}}}
  /keepers/{id}:
    get:
      operationId: getKeeper
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "keepers.yaml#/Keeper"}}}}
components:
  schemas:
    Animal:
      oneOf: [{$ref: "keepers.yaml#/Keeper"}]
      discriminator:
        propertyName: kind
        mapping: {cat: "cats.yaml#/Cat", dog: "dogs/dog.yaml#/Dog", bird: "./birds.yaml"}
"""
KEEPERS = "Keeper: {type: object, properties: {kind: {type: string}, name: {type: string}}}\n"


def _zoo(tmp_path: Path) -> Path:
    (tmp_path / "keepers.yaml").write_text(KEEPERS, encoding="utf-8")
    spec = tmp_path / "zoo.yaml"
    spec.write_text(MULTI_FILE, encoding="utf-8")
    return spec


def test_missing_discriminator_files_and_broken_refs_skip_only_the_operations_that_need_them(tmp_path: Path) -> None:
    _, api = build_api(str(_zoo(tmp_path)), GenerateOptions())

    # discriminator mappings only document a union: the operation using Animal still generates
    assert [op.label for op in api.operations] == ["GET /animals", "GET /keepers/{id}"]
    text = "\n".join(_labels(api.issues))
    assert "warning: GET /animals/{id}: skipped:" in text and "gone.yaml#/Animal" in text
    assert "warning: GET /keepers: skipped:" in text and "keepers.yaml#/Nobody" in text
    for key, name in (("cat", "cats.yaml"), ("dog", "dogs/dog.yaml"), ("bird", "birds.yaml")):
        assert any(
            i.where.endswith(f"zoo.yaml: /components/schemas/Animal/discriminator/mapping/{key}") and name in i.detail
            for i in api.issues
        ), key
    assert {issue.level for issue in api.issues} == {Level.WARNING}


def test_include_operations_generates_an_unaffected_operation_and_strict_fails_naming_every_ref(
    tmp_path: Path,
) -> None:
    spec = _zoo(tmp_path)
    relaxed = CliRunner().invoke(
        cli, ["generate", str(spec), "-o", str(tmp_path / "a"), "--include-operations", "getKeeper"]
    )
    assert relaxed.exit_code == 0, relaxed.output
    assert "(1 tools from" in relaxed.output and "cats.yaml" in relaxed.output

    strict = CliRunner().invoke(cli, ["generate", str(spec), "-o", str(tmp_path / "b"), "--strict"])
    assert strict.exit_code == 1
    errors = [line for line in strict.output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 5
    for name in ("gone.yaml", "keepers.yaml has nothing at /Nobody", "cats.yaml", "dog.yaml", "birds.yaml"):
        assert any(name in line for line in errors), name
    assert not (tmp_path / "b").exists()


def test_swagger2_operation_with_a_missing_file_is_skipped(tmp_path: Path) -> None:
    spec = tmp_path / "api.yaml"
    spec.write_text(
        """
swagger: "2.0"
info: {title: Old, version: "1"}
paths:
  /fine:
    get:
      responses: {"200": {description: ok, schema: {type: string}}}
  /broken:
    get:
      parameters: [{$ref: "params.yaml#/Q"}]
      responses: {"200": {description: ok, schema: {$ref: "missing.yaml#/Thing"}}}
""",
        encoding="utf-8",
    )
    _, api = build_api(str(spec), GenerateOptions())
    assert [op.label for op in api.operations] == ["GET /fine"]
    assert any(i.where == "GET /broken" and "params.yaml" in i.detail for i in api.issues)
