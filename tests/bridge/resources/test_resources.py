"""GET operations as resources (``serve --resources``): the official client, the bridge, the loopback jobs API."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import mcp_types
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import MCPError
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from bridge.contract.catalogue import Catalogue
from bridge.resources import PAGE
from bridge.resources.uris import scheme_for, template_for
from bridge.results.trim import TrimSettings
from bridge.serving.assemble import ServeOptions
from tests.bridge.calls.longrunning.harness import SPEC, jobs_catalogue, jobs_client
from tests.bridge.calls.longrunning.jobs_upstream import API_KEY, JobStore, serve_jobs

pytestmark = pytest.mark.anyio
MODES = ["auto", "legacy"]
WITH_RESOURCES = ServeOptions(resources=True)


@pytest.fixture
async def store(anyio_backend: str) -> Any:
    async with serve_jobs() as running:
        yield running


@pytest.mark.parametrize("mode", MODES)
async def test_get_operations_are_resources_and_templates(store: JobStore, mode: str) -> None:
    async with jobs_client(store, mode=mode, options=WITH_RESOURCES) as client:
        assert client.server_capabilities.resources is not None
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
    assert [(r.uri, r.name, r.mime_type) for r in resources] == [("jobs:///jobs", "listJobs", "application/json")]
    assert [(t.uri_template, t.name) for t in templates] == [
        ("jobs:///jobs/{jobId}", "getJob"),
        ("jobs:///reports/{reportId}", "getReport"),
    ]  # not the POSTs, not the DELETE, not the long-running export


async def test_without_the_option_there_are_no_resources(store: JobStore) -> None:
    async with jobs_client(store) as client:
        assert client.server_capabilities.resources is None


@pytest.mark.parametrize("mode", MODES)
async def test_reading_goes_through_the_call_core_with_credentials_and_redaction(store: JobStore, mode: str) -> None:
    async with jobs_client(store, mode=mode, options=WITH_RESOURCES) as client:
        read = await client.read_resource("jobs:///reports/3")
    (content,) = read.contents
    assert isinstance(content, mcp_types.TextResourceContents)
    assert content.uri == "jobs:///reports/3" and content.mime_type == "application/json"
    body = json.loads(content.text)
    assert body["id"] == 3 and len(body["lines"]) == 2  # reportId typed as the schema's integer
    assert API_KEY not in content.text  # the upstream echoed the key: redacted like any result
    assert store.requests == [("GET", "/v1/reports/3", API_KEY)]


async def test_reading_is_trimmed_like_a_tool_result(store: JobStore) -> None:
    options = ServeOptions(resources=True, trim=TrimSettings(max_bytes=2048, max_items=20))
    async with jobs_client(store, options=options) as client:
        read = await client.read_resource("jobs:///reports/4000")
    text = read.contents[0].text  # type: ignore[union-attr]
    assert len(text.encode()) <= 4096 and "_truncated" in text


@pytest.mark.parametrize(
    ("uri", "code"),
    [
        ("jobs:///reports/abc", mcp_types.INVALID_PARAMS),  # not an integer: the argument check says so
        ("jobs:///jobs/%2e%2e", mcp_types.INVALID_PARAMS),  # a dot segment: refused before sending
        ("jobs:///jobs/a/b", mcp_types.INVALID_PARAMS),  # a slot holds one segment
        ("jobs:///nothing", mcp_types.INVALID_PARAMS),
        ("other:///jobs", mcp_types.INVALID_PARAMS),
        ("jobs:///jobs?limit=1", mcp_types.INVALID_PARAMS),  # no query: a resource's arguments are its path
    ],
)
async def test_bad_uris_are_refused_and_nothing_is_sent(store: JobStore, uri: str, code: int) -> None:
    async with jobs_client(store, options=WITH_RESOURCES) as client:
        with pytest.raises(MCPError) as refused:
            await client.read_resource(uri)
    assert refused.value.error.code == code
    assert store.requests == []


async def test_a_missing_upstream_resource_is_not_found(store: JobStore) -> None:
    async with jobs_client(store, options=WITH_RESOURCES) as client:
        with pytest.raises(MCPError) as missing:
            await client.read_resource("jobs:///jobs/job-404")
    assert missing.value.error.code == mcp_types.INVALID_PARAMS and missing.value.error.message == "Resource not found"


def scoped_catalogue() -> Catalogue:
    from generator.generate import build_catalogue
    from generator.options import GenerateOptions

    overrides = {"getReport": {"scopes": ["reports:read"]}, "listJobs": {"scopes": ["jobs:admin"]}}
    catalogue, _ = build_catalogue(str(SPEC), GenerateOptions(name="jobs", overrides=overrides))
    return catalogue


async def test_a_resource_outside_the_callers_scopes_is_neither_listed_nor_readable(store: JobStore) -> None:
    token = AccessToken(token="t", client_id="c", scopes=["reports:read"], subject="alice")
    reset = auth_context_var.set(AuthenticatedUser(token))
    try:
        async with jobs_client(store, options=WITH_RESOURCES, catalogue=scoped_catalogue()) as client:
            resources = (await client.list_resources()).resources
            templates = [t.name for t in (await client.list_resource_templates()).resource_templates]
            with pytest.raises(MCPError) as hidden:
                await client.read_resource("jobs:///jobs")
            allowed = await client.read_resource("jobs:///reports/1")
    finally:
        auth_context_var.reset(reset)
    assert resources == [] and templates == ["getJob", "getReport"]
    assert hidden.value.error.message == "Resource not found"  # the same answer as a URI that does not exist
    assert allowed.contents and store.requests == [("GET", "/v1/reports/1", API_KEY)]


def many_gets(count: int) -> Catalogue:
    from tests.security.harness import catalogue_of

    ok = {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "Many", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9/v1"}],
        "paths": {f"/things{i:03d}": {"get": {"operationId": f"get{i:03d}", "responses": ok}} for i in range(count)},
    }
    return catalogue_of(spec, "many")


async def test_resources_list_is_paginated_on_big_apis(store: JobStore) -> None:
    count = PAGE * 2 + 17
    async with jobs_client(store, options=WITH_RESOURCES, catalogue=many_gets(count)) as client:
        seen: list[str] = []
        cursor: str | None = None
        for _ in range(10):
            page = await client.list_resources(cursor=cursor) if cursor else await client.list_resources()
            assert len(page.resources) <= PAGE
            seen.extend(r.uri for r in page.resources)
            cursor = page.next_cursor
            if cursor is None:
                break
        with pytest.raises(MCPError) as bad:
            await client.list_resources(cursor="not-a-cursor")
    assert len(seen) == count == len(set(seen))
    assert bad.value.error.code == mcp_types.INVALID_PARAMS


@given(st.text(min_size=1, max_size=40))
def test_a_template_slot_round_trips_any_value_as_one_segment(value: str) -> None:
    entry = next(e for e in jobs_catalogue().tools if e.name == "getJob")
    template = template_for(entry, "jobs")
    assert template is not None
    assert template.match("jobs:///jobs/" + quote(value, safe="")) == {"jobId": value}
    assert template.match("jobs:///jobs/" + quote(value, safe="") + "/more") is None


@pytest.mark.parametrize(
    ("package", "scheme"), [("jobs", "jobs"), ("parameter_styles", "parameter-styles"), ("9lives", "api-9lives")]
)
def test_the_uri_scheme_is_named_for_the_package(package: str, scheme: str) -> None:
    assert scheme_for(package) == scheme
