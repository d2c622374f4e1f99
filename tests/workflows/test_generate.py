"""Generate-time checks of Arazzo documents: the specification's own examples, bad and hostile documents."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from bridge.cli import cli
from bridge.contract.catalogue import stub_entries
from generator.generate import build_catalogue, generate
from generator.issues import GenerationError
from generator.load.reading import SpecError
from generator.options import GenerateOptions
from tests.workflows.harness import arazzo, write

DATA = Path(__file__).parent / "data"

# (Arazzo document, the OpenAPI description it runs on, workflows that generate, warnings expected)
EXAMPLES = [
    (
        "pet-coupons.arazzo.yaml",
        "pet-coupons.openapi.yaml",
        {"buy-available-pet", "place-order"},
        # The example names parameters the operations do not have (pet_tags for tags, pet_id for petId).
        ["/workflows/0/steps/0/parameters/0/name", "/workflows/0/steps/1/parameters/0/name"],
    ),
    (
        "LoginAndRetrievePets.arazzo.yaml",
        "swagger-petstore.openapi.yaml",
        set(),
        [
            "/workflows/0/steps/1/operationPath",  # it points to a path item; its one operation is used
            "/workflows/0/steps/0/parameters/1/name",  # password: a credential is never an argument (P11)
        ],
    ),
    (
        "bnpl-arazzo.yaml",
        "bnpl-openapi.yaml",
        set(),
        [
            "/workflows/0/steps/4/parameters/0/name",  # redirectAuthToken: the operation's is AuthorizationToken
            "/workflows/0/steps/5/parameters/0/value",  # an output the step does not declare
            "/workflows/0/steps/6/requestBody/payload",  # loanStatus: the body's member is status
            "/workflows/0/outputs/finalizedPaymentPlan",  # $steps.x.y without .outputs
        ],
    ),
    (
        "oauth.arazzo.yaml",
        "oauth.openapi.yaml",
        set(),  # each passes a client_secret from its inputs: a credential is never an argument (P11)
        ["/workflows/0/steps/1/requestBody/payload", "/workflows/1/steps/0/requestBody/payload"],
    ),
    ("FAPI-PAR.arazzo.yaml", "FAPI-PAR.openapi.yaml", set(), ["/workflows/0/steps/0/operationId"]),
]


@pytest.mark.parametrize(("flows", "spec", "made", "pointers"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_the_specifications_examples_generate_with_their_problems_pointed_at(
    flows: str, spec: str, made: set[str], pointers: list[str]
) -> None:
    catalogue, issues = build_catalogue(str(DATA / spec), GenerateOptions(workflows=(str(DATA / flows),)))
    assert {w.workflow_id for w in catalogue.workflows} == made
    said = [str(issue) for issue in issues if flows in issue.where]
    for where in pointers:
        assert any(f"{flows}: {where}:" in line for line in said), (where, said)


def test_strict_refuses_a_workflow_that_cannot_run(tmp_path: Path) -> None:
    with pytest.raises(GenerationError) as caught:
        build_catalogue(
            str(DATA / "pet-coupons.openapi.yaml"),
            GenerateOptions(strict=True, workflows=(str(DATA / "pet-coupons.arazzo.yaml"),)),
        )
    assert any("/workflows/0/steps/0/parameters/0/name" in issue.where for issue in caught.value.issues)


def test_a_document_that_breaks_the_arazzo_schema_is_refused_with_pointers(tmp_path: Path) -> None:
    document = arazzo({"workflowId": "w", "steps": [{"stepId": "s"}]})
    del document["info"]["version"]
    spec, flows = write(tmp_path, document)
    with pytest.raises(SpecError) as caught:
        build_catalogue(str(spec), GenerateOptions(workflows=(str(flows),)))
    lines = caught.value.problems
    assert any(line.endswith("/info: 'version' is a required property") for line in lines), lines
    assert any("/workflows/0/steps/0" in line for line in lines), lines


def _one_step(**step: Any) -> dict[str, Any]:
    return {"workflowId": "w", "steps": [{"stepId": "s", **step}]}


def _problems(tmp_path: Path, document: dict[str, Any]) -> list[str]:
    spec, flows = write(tmp_path, document)
    catalogue, issues = build_catalogue(str(spec), GenerateOptions(workflows=(str(flows),)))
    assert catalogue.workflows == ()
    return [str(issue) for issue in issues]


@pytest.mark.parametrize(
    ("step", "pointer", "words"),
    [
        ({"operationId": "nope"}, "/steps/0/operationId", "no operation of this package has operationId 'nope'"),
        ({"operationId": "$sourceDescriptions.other.listItems"}, "/steps/0/operationId", "source 'other'"),
        ({"operationPath": "{$sourceDescriptions.shop.url}#/paths/~1nowhere/get"}, "/steps/0/operationPath", "GET"),
        ({"workflowId": "missing"}, "/steps/0/workflowId", "no workflow 'missing'"),
        (
            {"operationId": "getItem", "parameters": [{"name": "ID", "in": "path", "value": 1}]},
            "/steps/0/parameters/0/name",
            "no path parameter 'ID' (its path parameters: id)",
        ),
        (
            {"operationId": "getItem", "parameters": [{"name": "id", "in": "path", "value": "$steps.x.outputs.y"}]},
            "/steps/0/parameters/0/value",
            "no step 'x'",
        ),
        (
            {"operationId": "getItem", "parameters": [{"name": "id", "in": "path", "value": "$response.body"}]},
            "/steps/0/parameters/0/value",
            "$response cannot be used here",
        ),
        ({"operationId": "getItem", "successCriteria": [{"condition": "$statusCode =="}]}, "/successCriteria/0", "end"),
        (
            {
                "operationId": "getItem",
                "successCriteria": [{"context": "$response.body", "condition": "$[", "type": "jsonpath"}],
            },
            "/successCriteria/0/condition",
            "",
        ),
        (
            {
                "operationId": "getItem",
                "successCriteria": [{"context": "$response.body", "condition": "/a", "type": "xpath"}],
            },
            "/successCriteria/0/type",
            "xpath criteria are not supported",
        ),
        ({"operationId": "listItems", "requestBody": {"payload": {"a": 1}}}, "/steps/0/requestBody", "no request body"),
        (
            {"operationId": "createOrder", "requestBody": {"payload": {"itemId": 1, "price": 2}}},
            "/steps/0/requestBody/payload",
            "no member 'price'",
        ),
        (
            {"operationId": "getItem", "onSuccess": [{"name": "g", "type": "goto", "stepId": "elsewhere"}]},
            "/steps/0/onSuccess/0/stepId",
            "no step 'elsewhere'",
        ),
        (
            {"operationId": "getItem", "outputs": {"x": "$inputs." + "a" * 5000}},
            "/steps/0/outputs/x",
            "longer than",
        ),
    ],
)
def test_a_workflow_that_cannot_run_is_skipped_with_each_problem_at_its_pointer(
    tmp_path: Path, step: dict[str, Any], pointer: str, words: str
) -> None:
    said = _problems(tmp_path, arazzo(_one_step(**step)))
    matching = [line for line in said if "shop.arazzo.yaml: /workflows/0/" in line and pointer in line]
    assert matching and any(words in line for line in matching), said
    assert any("workflow 'w' cannot run" in line for line in said)


def test_a_source_that_is_not_the_packages_spec_is_refused(tmp_path: Path) -> None:
    document = arazzo(
        _one_step(operationId="$sourceDescriptions.billing.charge"),
        sources=[
            {"name": "shop", "url": "./shop.json", "type": "openapi"},
            {"name": "billing", "url": "https://billing.example/openapi.yaml", "type": "openapi"},
        ],
    )
    said = _problems(tmp_path, document)
    assert any("source 'billing'" in line and "not the spec this package is generated from" in line for line in said)


def test_a_workflow_of_another_arazzo_document_given_too_can_be_a_step(tmp_path: Path) -> None:
    spec, main = write(tmp_path, arazzo(
        _one_step(workflowId="$sourceDescriptions.lib.get-seven"),
        sources=[{"name": "shop", "url": "./shop.json"}, {"name": "lib", "url": "./lib.arazzo.yaml", "type": "arazzo"}],
    ))  # fmt: skip
    lib = tmp_path / "lib.arazzo.yaml"
    lib.write_text(yaml.safe_dump(arazzo(
        {"workflowId": "get-seven", "steps": [
            {"stepId": "g", "operationId": "getItem", "parameters": [{"name": "id", "in": "path", "value": 7}]}
        ]}
    )))  # fmt: skip
    catalogue, _ = build_catalogue(str(spec), GenerateOptions(workflows=(str(main), str(lib))))
    assert {w.workflow_id for w in catalogue.workflows} == {"w", "get-seven"}
    alone, issues = build_catalogue(str(spec), GenerateOptions(workflows=(str(main),)))
    assert [w.workflow_id for w in alone.workflows] == []
    assert any("not given with --workflows" in str(issue) for issue in issues)


def test_a_workflow_whose_steps_run_it_again_is_refused(tmp_path: Path) -> None:
    document = arazzo(
        {"workflowId": "a", "steps": [{"stepId": "s", "workflowId": "b"}]},
        {"workflowId": "b", "steps": [{"stepId": "s", "workflowId": "a"}]},
    )
    said = _problems(tmp_path, document)
    assert any("recursion" in line for line in said)


def test_huge_and_deep_hostile_documents_are_refused_quickly(tmp_path: Path) -> None:
    deep: Any = "$inputs.x"
    for _ in range(200):
        deep = {"a": deep}
    huge = {f"k{i}": "$inputs.x" for i in range(20_000)}
    document = arazzo(
        _one_step(operationId="createOrder", requestBody={"payload": {"itemId": 1, "note": deep}}),
        {"workflowId": "w2", "steps": [{"stepId": "s", "operationId": "createOrder",
                                        "requestBody": {"payload": huge}}]},
        {"workflowId": "w3", "steps": [{"stepId": "s", "operationId": "getItem",
                                        "successCriteria": [{"condition": "(" * 5000 + "1" + ")" * 5000}]}]},
    )  # fmt: skip
    started = time.monotonic()
    said = _problems(tmp_path, document)
    assert time.monotonic() - started < 20
    assert any("w2" in line or "more than" in line for line in said)
    assert any("/workflows/2/steps/0/successCriteria/0" in line for line in said)


def test_a_workflow_tool_is_typed_named_and_annotated_from_its_steps(tmp_path: Path) -> None:
    document = arazzo(
        {
            "workflowId": "listItems",  # the operation's tool has this name: the workflow's gets another
            "summary": "Look an item up.",
            "inputs": {"$ref": "#/components/inputs/lookup"},
            "steps": [
                {
                    "stepId": "get",
                    "operationId": "getItem",
                    "parameters": [{"name": "id", "in": "path", "value": "$inputs.id"}],
                    "outputs": {"price": "$response.body#/price", "whole": "$response.body"},
                }
            ],
            "outputs": {"price": "$steps.get.outputs.price", "item": "$steps.get.outputs.whole"},
        },
        components={"inputs": {"lookup": {"type": "object", "properties": {"id": {"$ref": "#/components/inputs/id"}}},
                               "id": {"type": "integer", "description": "The item."}}},
    )  # fmt: skip
    spec, flows = write(tmp_path, document)
    catalogue, issues = build_catalogue(str(spec), GenerateOptions(workflows=(str(flows),), mode="code"))
    (flow,) = catalogue.workflows
    assert flow.name == "listItems_workflow" and any("listItems_workflow" in str(i) for i in issues)
    assert flow.input_schema == {
        "type": "object",
        "properties": {"id": {"type": "integer", "description": "The item."}},
    }
    assert flow.output_schema is not None and flow.output_schema["properties"]["price"] == {"type": "number"}
    assert flow.annotations.readOnlyHint and not flow.annotations.destructiveHint
    assert flow.title == "Look an item up." and flow.description.startswith("Workflow: Look an item up.")
    assert stub_entries(catalogue)[-1].name == "listItems_workflow"


def test_generate_writes_workflows_into_the_catalogue_manifest_and_stubs(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    result = CliRunner().invoke(
        cli,
        [
            "generate",
            str(DATA / "pet-coupons.openapi.yaml"),
            "-o",
            str(out),
            "--workflows",
            str(DATA / "pet-coupons.arazzo.yaml"),
        ],
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert [w["source"] for w in manifest["workflows"]] == ["pet-coupons.arazzo.yaml"]
    assert len(manifest["workflows"][0]["sha256"]) == 64
    assert manifest["tools"]["buy-available-pet"] == "workflow buy-available-pet"
    catalogue = json.loads((out / "catalogue.json").read_text())
    assert [w["workflow_id"] for w in catalogue["workflows"]] == ["buy-available-pet", "place-order"]
    stubs = (out / "api.pyi").read_text()
    assert "async def buy_available_pet(" in stubs and "async def place_order(" in stubs
    assert "Workflow" in (out / "README.md").read_text()


def test_a_package_without_workflows_has_no_workflow_key_in_its_files(tmp_path: Path) -> None:
    generate(str(DATA / "pet-coupons.openapi.yaml"), tmp_path / "pkg", GenerateOptions())
    assert "workflows" not in json.loads((tmp_path / "pkg" / "catalogue.json").read_text())
    assert "workflows" not in json.loads((tmp_path / "pkg" / "manifest.json").read_text())


def test_a_step_that_feeds_a_credential_parameter_says_to_bind_it() -> None:
    flows = "LoginAndRetrievePets.arazzo.yaml"
    _, issues = build_catalogue(
        str(DATA / "swagger-petstore.openapi.yaml"), GenerateOptions(workflows=(str(DATA / flows),))
    )
    (line,) = [str(i) for i in issues if "/steps/0/parameters/1/name" in i.where]
    assert "'password'" in line and "carries a credential" in line and "bind:" in line
