"""Validation problems: every error, each with the JSON pointer of the spot in the user's file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.load.reading import parse_document
from generator.load.validate import Problem, find_problems, validate_document
from tests.generator.load.test_load import Reply, serve

PETSTORE2 = Path(__file__).parent / "data" / "petstore2.yaml"


def document(text: str) -> dict[str, Any]:
    parsed = parse_document(text.encode())
    assert isinstance(parsed, dict)
    return parsed


VALID_30 = """\
openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /pets/{id}:
    get:
      parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
      responses:
        200: {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/Pet'}}}}
components:
  schemas:
    Pet: {type: object, properties: {id: {type: integer}}}
"""


def test_valid_documents_of_each_version_have_no_problems() -> None:
    valid_31 = VALID_30.replace("3.0.3", "3.1.0")

    assert find_problems(document(VALID_30)) == []
    assert find_problems(document(valid_31)) == []
    assert find_problems(parse_document(PETSTORE2.read_bytes())) == []


def test_every_error_is_listed_with_file_and_pointer() -> None:
    text = """\
openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /pets:
    get:
      operationId: pets
      responses: {}
    post:
      operationId: pets
      responses:
        '201': {description: ok, content: {application/json: {schema: {type: strin}}}}
  /pets/{id}:
    get:
      responses: {'200': {descriptio: ok}}
"""

    problems = validate_document(document(text), source="pets.yaml")

    assert problems == [
        "pets.yaml: /paths/~1pets/get/responses: {} should be non-empty",
        "pets.yaml: /paths/~1pets/post/responses/201/content/application~1json/schema/type: "
        "'strin' is not one of ['array', 'boolean', 'integer', 'number', 'object', 'string']",
        "pets.yaml: /paths/~1pets~1{id}/get/responses/200: 'description' is a required property",
        "pets.yaml: /paths/~1pets/post: Operation ID 'pets' for 'post' in '/pets' is not unique",
        "pets.yaml: /paths/~1pets~1{id}/get: Path parameter 'id' for 'get' operation in '/pets/{id}' was not resolved",
    ]


def test_schema_problems_point_at_the_referenced_schema_not_the_path_through_the_ref() -> None:
    text = VALID_30.replace(
        "properties: {id: {type: integer}}",
        "required: [name], allOf: [{}], properties: {id: {type: integer, default: x}}",
    )

    problems = find_problems(document(text))

    assert problems == [
        Problem(("components", "schemas", "Pet", "properties", "id", "default"), "'x' is not of type 'integer'"),
        Problem(("components", "schemas", "Pet"), "Required list has not defined properties: ['name']"),
    ]


def test_problem_at_the_top_level_has_no_pointer() -> None:
    assert validate_document({"openapi": "3.0.3", "paths": {}}, source="a.yaml") == [
        "a.yaml: 'info' is a required property"
    ]


def test_swagger2_is_validated_as_written() -> None:
    text = """\
swagger: '2.0'
info: {title: t, version: '1'}
paths:
  /pets:
    get:
      parameters: [{name: n, in: query, type: integer, default: abc}]
      responses:
        200: {descriptio: ok}
"""

    assert validate_document(document(text), source="s.yaml") == [
        "s.yaml: /paths/~1pets/get/responses/200: 'description' is a required property",
        "s.yaml: /paths/~1pets/get/parameters/0/default: 'abc' is not of type 'integer'",
    ]


def test_long_values_are_cut_in_messages() -> None:
    names = ", ".join(f"name{i}" for i in range(100))
    text = VALID_30.replace("Pet: {type: object,", f"Pet: {{type: string, default: 7, enum: [{names}],")

    problems = validate_document(document(text), source="a.yaml")

    assert problems == [
        "a.yaml: /components/schemas/Pet/default: 7 is not of type 'string'",
        "a.yaml: /components/schemas/Pet/default: 7 is not one of "
        "['name0', 'name1', 'name2', 'name3', 'name4', 'name5', 'name6', 'name7', 'name8', 'name9', 'name10',…",
    ]


def test_validation_never_fetches_a_ref() -> None:
    with serve({"/pet.yaml": Reply(b"type: object\n")}) as server:
        text = VALID_30.replace("'#/components/schemas/Pet'", f"'{server.url}/pet.yaml'")
        problems = find_problems(document(text))

    assert server.requests == []
    assert len(problems) == 1
    assert problems[0].message.startswith("validation stopped: ")
