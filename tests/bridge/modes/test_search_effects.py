"""Search never puts a write first for a read, nor a destructive operation first unless asked.

The catalogues are generated (so search sees the annotations the generator decided) from an EC2
excerpt (AWS query protocol: writes as GET) and small specs shaped like Google Drive, Azure and
Microsoft Graph.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bridge.contract.catalogue import Catalogue, ToolEntry
from bridge.modes.search import SearchIndex
from generator.generate import build_catalogue
from generator.options import GenerateOptions

EC2 = Path(__file__).parents[2] / "generator" / "parse" / "data" / "ec2_excerpt.yaml"
OK = {"200": {"description": "ok"}}


def _op(operation_id: str, summary: str = "", description: str = "") -> dict[str, Any]:
    return {"operationId": operation_id, "summary": summary, "description": description, "responses": OK}


DRIVE = {
    "/files": {"get": _op("drive.files.list", description="Lists the user's files.")},
    "/files/{fileId}": {
        "parameters": [{"name": "fileId", "in": "path", "required": True, "schema": {"type": "string"}}],
        "get": _op("drive.files.get", description="Gets a file's metadata or content by ID."),
        "delete": _op("drive.files.delete", description="Permanently deletes a file owned by the user."),
    },
    "/files/{fileId}/permissions": {
        "parameters": [{"name": "fileId", "in": "path", "required": True, "schema": {"type": "string"}}],
        "get": _op("drive.permissions.list", description="Lists a file's or shared drive's permissions."),
        "post": _op("drive.permissions.create", description="Creates a permission for a file or shared drive."),
    },
    "/files/{fileId}/permissions/{permissionId}": {
        "parameters": [
            {"name": "fileId", "in": "path", "required": True, "schema": {"type": "string"}},
            {"name": "permissionId", "in": "path", "required": True, "schema": {"type": "string"}},
        ],
        "delete": _op("drive.permissions.delete", description="Deletes a permission."),
    },
}
VM = "/subscriptions/{s}/providers/Microsoft.Compute/virtualMachines"
AZURE = {
    VM: {"get": _op("VirtualMachines_ListAll", description="Lists all of the virtual machines in a subscription.")},
    VM + "/{vmName}": {
        "get": _op("VirtualMachines_Get", description="Retrieves information about a virtual machine."),
        "delete": _op("VirtualMachines_Delete", description="The operation to delete a virtual machine."),
    },
    VM + "/{vmName}/start": {
        "post": _op("VirtualMachines_Start", description="The operation to start a virtual machine.")
    },
    VM + "/{vmName}/powerOff": {
        "post": _op("VirtualMachines_PowerOff", description="The operation to power off (stop) a virtual machine.")
    },
}
GRAPH = {
    "/users": {
        "get": _op("users.user.ListUser", "List users"),
        "post": _op("users.user.CreateUser", "Create User"),
    },
    "/users/{user-id}": {
        "get": _op("users.user.GetUser", "Get user"),
        "delete": _op("users.user.DeleteUser", "Delete user"),
    },
    "/users/{user-id}/revokeSignInSessions": {
        "post": _op("users.user.revokeSignInSessions", "Invoke action revokeSignInSessions")
    },
    "/me/sendMail": {"post": _op("me.sendMail", "Invoke action sendMail")},
    "/me/messages": {"get": _op("me.ListMessages", "List messages")},
}


def _catalogue(tmp_path: Path, paths: dict[str, Any] | Path) -> Catalogue:
    if isinstance(paths, Path):
        source = paths
    else:
        source = tmp_path / "spec.json"
        source.write_text(json.dumps({"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": paths}))
    built, _ = build_catalogue(str(source), GenerateOptions())
    return built


# (API, query, what the first result must be). Read queries share their nouns with writes.
CASES = [
    ("ec2", "list my running instances", "GET_DescribeInstances"),
    ("ec2", "show the status of my instances", "GET_DescribeInstanceStatus"),
    ("ec2", "allow inbound port 22", "*AuthorizeSecurityGroupIngress"),
    ("ec2", "which security groups do I have", "GET_DescribeSecurityGroups"),
    ("ec2", "terminate an instance", "*TerminateInstances"),
    ("ec2", "stop my instances", "*StopInstances"),
    ("ec2", "revoke an inbound rule", "*RevokeSecurityGroupIngress"),
    ("drive", "share a file with a user", "drive.permissions.create"),
    ("drive", "list files", "drive.files.list"),
    ("drive", "list the permissions of a file", "drive.permissions.list"),
    ("drive", "delete a file", "drive.files.delete"),
    ("azure", "list my virtual machines", "VirtualMachines_ListAll"),
    ("azure", "get a virtual machine", "VirtualMachines_Get"),
    ("azure", "power off a virtual machine", "VirtualMachines_PowerOff"),
    ("azure", "delete a virtual machine", "VirtualMachines_Delete"),
    ("graph", "which users are there", "users.user.ListUser"),
    ("graph", "get a user", "users.user.GetUser"),
    ("graph", "revoke a user's sign-in sessions", "users.user.revokeSignInSessions"),
    ("graph", "remove a user", "users.user.DeleteUser"),
    ("graph", "send an email", "me.sendMail"),
]
_DESTROYING_WORDS = ("delete", "remove", "revoke", "terminate", "purge")


@pytest.fixture(scope="module")
def catalogues(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[SearchIndex, dict[str, ToolEntry]]]:
    out = {}
    for api, paths in (("ec2", EC2), ("drive", DRIVE), ("azure", AZURE), ("graph", GRAPH)):
        built = _catalogue(tmp_path_factory.mktemp(api), paths)
        out[api] = (SearchIndex(built.tools), {tool.name: tool for tool in built.tools})
    return out


@pytest.mark.parametrize(("api", "query", "meant"), CASES)
def test_the_first_result_does_what_the_query_asks(
    catalogues: dict[str, tuple[SearchIndex, dict[str, ToolEntry]]], api: str, query: str, meant: str
) -> None:
    index, tools = catalogues[api]
    ranked = index.rank(query, 5)
    first = tools[ranked[0]]
    if meant.startswith("*"):
        assert first.name.endswith(meant[1:]), ranked
    else:
        assert first.name == meant, ranked
    if first.annotations.destructiveHint and not query.startswith(_DESTROYING_WORDS):
        assert first.binding.method in ("PUT", "PATCH"), ranked  # overwriting, not destroying


READS = [query for _, query, _ in CASES if query.startswith(("list", "show", "which", "who", "find", "get"))]


@pytest.mark.parametrize("api", ["ec2", "drive", "azure", "graph"])
@pytest.mark.parametrize("query", READS)
def test_a_read_query_never_gets_a_write_first_on_any_api(
    catalogues: dict[str, tuple[SearchIndex, dict[str, ToolEntry]]], api: str, query: str
) -> None:
    index, tools = catalogues[api]
    ranked = index.rank(query, 5)
    if ranked and any(tools[name].annotations.readOnlyHint for name in ranked):
        assert tools[ranked[0]].annotations.readOnlyHint, ranked


@pytest.mark.parametrize("api", ["ec2", "drive", "azure", "graph"])
@pytest.mark.parametrize("query", ["instances", "a file", "user sessions", "inbound rules", "virtual machine"])
def test_a_destructive_operation_is_first_only_when_the_query_names_a_destructive_verb(
    catalogues: dict[str, tuple[SearchIndex, dict[str, ToolEntry]]], api: str, query: str
) -> None:
    index, tools = catalogues[api]
    ranked = index.rank(query, 10)
    if ranked and not all(tools[name].annotations.destructiveHint for name in ranked):
        first = tools[ranked[0]]
        assert not first.annotations.destructiveHint or first.binding.method in ("PUT", "PATCH"), ranked
