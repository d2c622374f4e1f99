"""Following and bundling $refs: folder confinement, remote refs, naming, chains and cycles."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from generator.load.reading import SpecError
from generator.load.spec import load_spec
from tests.generator.load.test_load import Reply, serve, write

HEAD = "openapi: 3.0.3\ninfo: {title: t, version: '1'}\n"
PET = "type: object\nproperties:\n  name: {type: string}\n"


def spec_with_schema_ref(ref: str) -> str:
    return (
        HEAD
        + f"""\
paths:
  /pets:
    get:
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                $ref: '{ref}'
"""
    )


SCHEMA_REF_POINTER = "/paths/~1pets/get/responses/200/content/application~1json/schema/$ref"


def response_schema(document: dict[str, Any]) -> Any:
    return document["paths"]["/pets"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]


def all_refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [ref for value in node.values() for ref in all_refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in all_refs(value)]
    return []


def test_local_refs_are_left_as_they_are(tmp_path: Path) -> None:
    text = spec_with_schema_ref("#/components/schemas/Pet") + "components:\n  schemas:\n    Pet: {type: object}\n"
    spec = write(tmp_path / "api.yaml", text)

    document = load_spec(str(spec)).document

    assert response_schema(document) == {"$ref": "#/components/schemas/Pet"}
    assert list(document["components"]["schemas"]) == ["Pet"]


def test_file_ref_within_the_folder_is_bundled_as_a_component_schema(tmp_path: Path) -> None:
    write(tmp_path / "schemas" / "pet.yaml", PET)
    spec = write(tmp_path / "api.yaml", spec_with_schema_ref("./schemas/pet.yaml"))

    document = load_spec(str(spec)).document

    assert response_schema(document) == {"$ref": "#/components/schemas/pet"}
    assert document["components"]["schemas"]["pet"] == {"type": "object", "properties": {"name": {"type": "string"}}}
    assert all(ref.startswith("#/") for ref in all_refs(document))


def test_fragment_names_the_bundled_component(tmp_path: Path) -> None:
    write(tmp_path / "common.json", json.dumps({"Pet": {"type": "object"}, "Tag": {"type": "string"}}))
    spec = write(tmp_path / "api.yaml", spec_with_schema_ref("common.json#/Pet"))

    document = load_spec(str(spec)).document

    assert response_schema(document) == {"$ref": "#/components/schemas/Pet"}
    assert document["components"]["schemas"] == {"Pet": {"type": "object"}}


def test_ref_chain_across_two_files_is_bundled(tmp_path: Path) -> None:
    write(
        tmp_path / "schemas" / "pet.yaml", "type: object\nproperties:\n  owner: {$ref: '../owners/owner.yaml#/Owner'}\n"
    )
    write(
        tmp_path / "owners" / "owner.yaml",
        "Owner:\n  type: object\n  properties:\n    pet: {$ref: '#/Name'}\nName: {type: string}\n",
    )
    spec = write(tmp_path / "api.yaml", spec_with_schema_ref("schemas/pet.yaml"))

    schemas = load_spec(str(spec)).document["components"]["schemas"]

    assert list(schemas) == ["pet", "Owner", "Name"]
    assert schemas["pet"]["properties"]["owner"] == {"$ref": "#/components/schemas/Owner"}
    assert schemas["Owner"]["properties"]["pet"] == {"$ref": "#/components/schemas/Name"}


def test_cycle_across_files_terminates_with_refs_kept(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", "type: object\nproperties:\n  b: {$ref: 'b.yaml'}\n")
    write(tmp_path / "b.yaml", "type: object\nproperties:\n  a: {$ref: 'a.yaml'}\n  self: {$ref: '#'}\n")
    spec = write(tmp_path / "api.yaml", spec_with_schema_ref("a.yaml"))

    schemas = load_spec(str(spec)).document["components"]["schemas"]

    assert schemas["a"]["properties"]["b"] == {"$ref": "#/components/schemas/b"}
    assert schemas["b"]["properties"] == {
        "a": {"$ref": "#/components/schemas/a"},
        "self": {"$ref": "#/components/schemas/b"},
    }


def test_ref_back_into_the_main_file_becomes_local(tmp_path: Path) -> None:
    write(
        tmp_path / "schemas" / "pet.yaml",
        "type: object\nproperties:\n  tag: {$ref: '../api.yaml#/components/schemas/Tag'}\n",
    )
    text = spec_with_schema_ref("schemas/pet.yaml") + "components:\n  schemas:\n    Tag: {type: string}\n"
    spec = write(tmp_path / "api.yaml", text)

    schemas = load_spec(str(spec)).document["components"]["schemas"]

    assert schemas["pet"]["properties"]["tag"] == {"$ref": "#/components/schemas/Tag"}
    assert list(schemas) == ["Tag", "pet"]


def test_name_collision_takes_the_file_stem_then_a_number(tmp_path: Path) -> None:
    write(tmp_path / "one.yaml", "Pet: {type: object, title: one}\n")
    write(tmp_path / "two.yaml", "Pet: {type: object, title: two}\n")
    write(tmp_path / "one" / "one.yaml", "Pet: {type: object, title: three}\n")
    text = HEAD + "paths: {}\ncomponents:\n  schemas:\n    Pet: {type: object}\n"
    text += "    A: {$ref: 'one.yaml#/Pet'}\n    B: {$ref: 'two.yaml#/Pet'}\n    C: {$ref: 'one/one.yaml#/Pet'}\n"
    spec = write(tmp_path / "api.yaml", text)

    schemas = load_spec(str(spec)).document["components"]["schemas"]

    assert [schemas[name]["$ref"] for name in "ABC"] == [
        "#/components/schemas/one_Pet",
        "#/components/schemas/two_Pet",
        "#/components/schemas/Pet_2",
    ]
    assert [schemas[name]["title"] for name in ("one_Pet", "two_Pet", "Pet_2")] == ["one", "two", "three"]


def test_each_kind_is_bundled_into_its_own_section(tmp_path: Path) -> None:
    write(
        tmp_path / "parts.yaml",
        """\
Limit: {name: limit, in: query, schema: {type: integer}}
NotFound: {description: missing}
PetBody: {content: {application/json: {schema: {$ref: '#/Pet'}}}}
Pet: {type: object}
Trace: {schema: {type: string}}
""",
    )
    text = (
        HEAD
        + """\
paths:
  /pets:
    post:
      parameters: [{$ref: 'parts.yaml#/Limit'}]
      requestBody: {$ref: 'parts.yaml#/PetBody'}
      responses:
        '404': {$ref: 'parts.yaml#/NotFound'}
        '200': {description: ok, headers: {X-Trace: {$ref: 'parts.yaml#/Trace'}}}
"""
    )
    spec = write(tmp_path / "api.yaml", text)

    document = load_spec(str(spec)).document

    components = document["components"]
    assert {section: list(entries) for section, entries in components.items()} == {
        "parameters": ["Limit"],
        "requestBodies": ["PetBody"],
        "schemas": ["Pet"],
        "responses": ["NotFound"],
        "headers": ["Trace"],
    }
    assert components["requestBodies"]["PetBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Pet"
    }


def test_path_item_refs_work_local_and_external(tmp_path: Path) -> None:
    write(
        tmp_path / "paths" / "pets.yaml",
        "get:\n  responses:\n    '200':\n      description: ok\n"
        "      content: {application/json: {schema: {$ref: '../pet.yaml'}}}\n",
    )
    write(tmp_path / "pet.yaml", PET)
    text = (
        HEAD
        + """\
paths:
  /pets: {$ref: 'paths/pets.yaml'}
  /animals: {$ref: '#/paths/~1pets'}
"""
    )
    spec = write(tmp_path / "api.yaml", text)

    document = load_spec(str(spec)).document

    assert document["paths"]["/pets"] == {"$ref": "#/components/x-pathItems/pets"}
    assert document["paths"]["/animals"] == {"$ref": "#/paths/~1pets"}
    bundled = document["components"]["x-pathItems"]["pets"]
    assert bundled["get"]["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/pet"
    }


def test_openapi_3_1_path_items_go_to_components_path_items(tmp_path: Path) -> None:
    write(tmp_path / "pets.yaml", "get:\n  responses:\n    '200': {description: ok}\n")
    spec = write(
        tmp_path / "api.yaml", "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /pets: {$ref: pets.yaml}\n"
    )

    document = load_spec(str(spec)).document

    assert document["paths"]["/pets"] == {"$ref": "#/components/pathItems/pets"}
    assert list(document["components"]["pathItems"]) == ["pets"]


def test_swagger2_external_definitions_are_bundled_then_converted(tmp_path: Path) -> None:
    write(
        tmp_path / "defs.yaml",
        "Pet:\n  type: object\n  properties:\n    tag: {$ref: '#/Tag'}\nTag: {type: string, x-nullable: true}\n",
    )
    text = """\
swagger: '2.0'
info: {title: t, version: '1'}
paths:
  /pets:
    get:
      responses:
        200: {description: ok, schema: {$ref: 'defs.yaml#/Pet'}}
"""
    spec = write(tmp_path / "api.yaml", text)

    document = load_spec(str(spec)).document

    assert document["paths"]["/pets"]["get"]["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Pet"
    }
    assert document["components"]["schemas"]["Pet"]["properties"]["tag"] == {"$ref": "#/components/schemas/Tag"}
    assert document["components"]["schemas"]["Tag"] == {"type": "string", "nullable": True}


@pytest.mark.parametrize("ref", ["../secret.yaml", "/etc/passwd", "file:///etc/passwd", "sub/../../secret.yaml"])
def test_ref_escaping_the_spec_folder_is_refused_with_the_referencing_pointer(tmp_path: Path, ref: str) -> None:
    write(tmp_path / "secret.yaml", PET)
    spec = write(tmp_path / "api" / "api.yaml", spec_with_schema_ref(ref))

    with pytest.raises(SpecError) as excinfo:
        load_spec(str(spec))

    [problem] = excinfo.value.problems
    assert problem.startswith(f"{spec}: {SCHEMA_REF_POINTER}: {ref!r} points outside the spec folder ")
    assert problem.endswith("refusing to read it")


def test_symlink_leading_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "secret.yaml", PET)
    (tmp_path / "api").mkdir()
    os.symlink(tmp_path / "secret.yaml", tmp_path / "api" / "pet.yaml")
    spec = write(tmp_path / "api" / "api.yaml", spec_with_schema_ref("pet.yaml"))

    with pytest.raises(SpecError) as excinfo:
        load_spec(str(spec))

    assert "'pet.yaml' points outside the spec folder" in str(excinfo.value)


def test_refs_inside_bundled_files_are_confined_too(tmp_path: Path) -> None:
    write(tmp_path / "secret.yaml", PET)
    write(tmp_path / "api" / "pet.yaml", "type: object\nproperties:\n  x: {$ref: '../secret.yaml'}\n")
    spec = write(tmp_path / "api" / "api.yaml", spec_with_schema_ref("pet.yaml"))

    with pytest.raises(SpecError) as excinfo:
        load_spec(str(spec))

    [problem] = excinfo.value.problems
    assert problem.startswith(f"{tmp_path / 'api' / 'pet.yaml'}: /properties/x/$ref: '../secret.yaml' points outside")


def test_remote_ref_is_refused_by_default_without_any_request(tmp_path: Path) -> None:
    with serve({"/pet.yaml": Reply(PET.encode())}) as server:
        spec = write(tmp_path / "api.yaml", spec_with_schema_ref(f"{server.url}/pet.yaml"))
        with pytest.raises(SpecError) as excinfo:
            load_spec(str(spec), timeout=5)

    assert excinfo.value.problems == [
        f"{spec}: {SCHEMA_REF_POINTER}: '{server.url}/pet.yaml' is a remote reference; "
        "refusing to fetch it (remote refs are not allowed)"
    ]
    assert server.requests == []


def test_remote_ref_is_followed_when_allowed(tmp_path: Path) -> None:
    remote_pet = "type: object\nproperties:\n  tag: {$ref: 'tag.yaml'}\n"
    replies = {"/pet.yaml": Reply(remote_pet.encode()), "/tag.yaml": Reply(b"type: string\n")}
    with serve(replies) as server:
        spec = write(tmp_path / "api.yaml", spec_with_schema_ref(f"{server.url}/pet.yaml"))
        document = load_spec(str(spec), allow_remote_refs=True, timeout=5).document

    assert response_schema(document) == {"$ref": "#/components/schemas/pet"}
    assert document["components"]["schemas"]["tag"] == {"type": "string"}
    assert server.requests == ["/pet.yaml", "/tag.yaml"]


def test_remote_document_cannot_refer_to_local_files(tmp_path: Path) -> None:
    write(tmp_path / "secret.yaml", PET)
    remote_pet = f"type: object\nproperties:\n  x: {{$ref: '{(tmp_path / 'secret.yaml').as_uri()}'}}\n"
    with serve({"/pet.yaml": Reply(remote_pet.encode())}) as server:
        spec = write(tmp_path / "api.yaml", spec_with_schema_ref(f"{server.url}/pet.yaml"))
        with pytest.raises(SpecError) as excinfo:
            load_spec(str(spec), allow_remote_refs=True, timeout=5)

    [problem] = excinfo.value.problems
    assert problem.startswith(f"{server.url}/pet.yaml: /properties/x/$ref: ")
    assert problem.endswith("a remote document cannot refer to local files")


def test_unreadable_and_unresolvable_refs_are_all_reported(tmp_path: Path) -> None:
    write(tmp_path / "pet.yaml", PET)
    write(tmp_path / "bad.yaml", "a: [\n")
    text = HEAD + "paths: {}\ncomponents:\n  schemas:\n"
    text += "    A: {$ref: 'missing.yaml'}\n    B: {$ref: 'pet.yaml#/nothing'}\n"
    text += "    C: {$ref: '#/components/schemas/Nope'}\n"
    text += "    D: {$ref: 'bad.yaml'}\n    E: {$ref: 'ftp://example.com/x.yaml'}\n"
    spec = write(tmp_path / "api.yaml", text)

    with pytest.raises(SpecError) as excinfo:
        load_spec(str(spec))

    problems = [problem.split(": ", 2)[1:] for problem in excinfo.value.problems]
    problems[3][1] = problems[3][1].split("invalid YAML")[0]  # the wording differs between YAML loaders
    assert problems == [
        ["/components/schemas/A/$ref", f"cannot load {tmp_path / 'missing.yaml'}: file not found"],
        ["/components/schemas/B/$ref", f"{tmp_path / 'pet.yaml'} has nothing at /nothing"],
        ["/components/schemas/C/$ref", "'#/components/schemas/Nope' does not resolve"],
        ["/components/schemas/D/$ref", f"cannot load {tmp_path / 'bad.yaml'}: line 2, column 1: "],
        ["/components/schemas/E/$ref", "'ftp://example.com/x.yaml': unsupported reference scheme 'ftp'"],
    ]
    assert all(problem.startswith(f"{spec}: ") for problem in excinfo.value.problems)


def test_dangling_local_ref_is_reported_without_external_refs(tmp_path: Path) -> None:
    spec = write(tmp_path / "api.yaml", spec_with_schema_ref("#/components/schemas/Nope"))

    with pytest.raises(SpecError) as excinfo:
        load_spec(str(spec))

    assert excinfo.value.problems == [f"{spec}: {SCHEMA_REF_POINTER}: '#/components/schemas/Nope' does not resolve"]


def test_refs_in_examples_and_extensions_are_data(tmp_path: Path) -> None:
    text = HEAD + "paths: {}\ncomponents:\n  schemas:\n    Pet:\n      type: object\n"
    text += "      example: {$ref: 'http://example.com/x'}\n      x-meta: {$ref: '../../x.yaml'}\n"
    spec = write(tmp_path / "api.yaml", text)

    pet = load_spec(str(spec)).document["components"]["schemas"]["Pet"]

    assert pet["example"] == {"$ref": "http://example.com/x"}
    assert pet["x-meta"] == {"$ref": "../../x.yaml"}


def test_validation_problems_in_bundled_files_point_into_those_files(tmp_path: Path) -> None:
    write(tmp_path / "pet.yaml", "Pet:\n  type: object\n  properties:\n    id: {type: integer, default: abc}\n")
    spec = write(tmp_path / "api.yaml", spec_with_schema_ref("pet.yaml#/Pet"))

    with pytest.raises(SpecError) as excinfo:
        load_spec(str(spec))

    assert excinfo.value.problems == [
        f"{tmp_path / 'pet.yaml'}: /Pet/properties/id/default: 'abc' is not of type 'integer'"
    ]


def test_bundled_output_does_not_depend_on_hash_seed(tmp_path: Path) -> None:
    for name in ("a", "b", "c", "d"):
        write(
            tmp_path / f"{name}.yaml",
            f"X: {{type: object, properties: {{n: {{$ref: '#/Y'}}}}}}\nY: {{title: {name}}}\n",
        )
    text = (
        HEAD + "paths: {}\ncomponents:\n  schemas:\n" + "".join(f"    {n}: {{$ref: '{n}.yaml#/X'}}\n" for n in "dcba")
    )
    spec = write(tmp_path / "api.yaml", text)
    script = (
        f"import json; from generator.load.spec import load_spec; print(json.dumps(load_spec({str(spec)!r}).document))"
    )

    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
            cwd=Path(__file__).parents[3],
        ).stdout
        for seed in ("1", "2", "3")
    }

    assert len(outputs) == 1
    schemas = json.loads(outputs.pop())["components"]["schemas"]
    assert list(schemas) == ["d", "c", "b", "a", "X", "Y", "c_X", "c_Y", "b_X", "b_Y", "a_X", "a_Y"]


def test_relative_ref_of_a_remote_spec_is_a_remote_ref() -> None:
    replies = {"/api/spec.yaml": Reply(spec_with_schema_ref("pet.yaml").encode()), "/api/pet.yaml": Reply(PET.encode())}
    with serve(replies) as server:
        url = f"{server.url}/api/spec.yaml"
        with pytest.raises(SpecError) as excinfo:
            load_spec(url, timeout=5)
        refused_requests = list(server.requests)
        document = load_spec(url, allow_remote_refs=True, timeout=5).document

    assert excinfo.value.problems == [
        f"{url}: {SCHEMA_REF_POINTER}: 'pet.yaml' is a remote reference; "
        "refusing to fetch it (remote refs are not allowed)"
    ]
    assert refused_requests == ["/api/spec.yaml"]
    assert response_schema(document) == {"$ref": "#/components/schemas/pet"}
