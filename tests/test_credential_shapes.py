"""Every credential a real spec declares reaches the wire: one functional test per shape, each
recording what the upstream received (issue 18).

The shapes come from popular public specs: OR-alternatives whose schemes are also required
parameters (a boards API's ``key`` and ``token``), a required parameter in the slot of a scheme
the operation does not list (an integrations API's app-id header), no security at all (an AI
API: the operator declares a scheme in --config), an OAuth2 scheme with only a client-credentials
flow given a ready token (a video API), body properties carrying credentials (a banking API's
``client_id`` and ``secret``), and operator-set static headers.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import mcp_types
import pytest
import yaml
from click.testing import CliRunner
from mcp import Client

from bridge.calls.runtime import HttpRuntime
from bridge.cli import cli
from bridge.contract.catalogue import Catalogue
from bridge.serving.assemble import build_bridge_server, build_registry
from bridge.serving.package import load_catalogue
from bridge.serving.startup import credential_lines
from generator.generate import generate
from generator.issues import GenerationError, Level
from generator.options import GenerateOptions
from tests.bridge.fake_upstream import FakeUpstream, Recorded, make_reply

UPSTREAM = "http://upstream.test"
KEY = "key-CANARY-7d1e4b90a2"
TOKEN = "tok-CANARY-93af02c7e1"
SECRET = "sec-CANARY-40b6d2e19c"


def _spec(body: str, title: str = "Shapes") -> dict[str, Any]:
    text = f"openapi: 3.0.3\ninfo: {{title: {title}, version: '1'}}\nservers: [{{url: '{UPSTREAM}'}}]\n" + body
    document = yaml.safe_load(text)
    assert isinstance(document, dict)
    return document


@dataclass
class Served:
    client: Client
    fake: FakeUpstream
    catalogue: Catalogue
    package: Path
    issues: list[str]

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> mcp_types.CallToolResult:
        return await self.client.call_tool(tool, arguments or {})

    @property
    def sent(self) -> Recorded:
        assert self.fake.requests, "nothing reached the upstream"
        return self.fake.requests[-1]


@asynccontextmanager
async def served(
    tmp_path: Path,
    document: dict[str, Any],
    environ: dict[str, str],
    options: GenerateOptions | None = None,
    token_transport: httpx.AsyncBaseTransport | None = None,
) -> AsyncIterator[Served]:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(document), encoding="utf-8")
    package = tmp_path / "pkg"
    result = generate(str(spec), package, options or GenerateOptions())
    catalogue = load_catalogue(package)  # what `serve PACKAGE` reads
    fake = FakeUpstream(document)
    fake.reply(200, json_body={"ok": True})
    runtime = HttpRuntime.create(
        catalogue, environ=environ, transport=fake.transport(), token_transport=token_transport
    )
    async with runtime:
        server = build_bridge_server(catalogue, build_registry(catalogue, runtime, package))
        async with Client(server) as client:
            yield Served(client, fake, catalogue, package, [str(i) for i in result.issues])


def _text(result: mcp_types.CallToolResult) -> str:
    return json.dumps(result.model_dump(mode="json"))


def _args(tool: mcp_types.Tool) -> set[str]:
    """The tool's arguments, without the result-selecting `fields` one."""
    return set(tool.input_schema["properties"]) - {"fields"}


def _readme(package: Path) -> str:
    return (package / "README.md").read_text(encoding="utf-8")


# ------------------------------------------------------- 1. OR-alternatives, slots required


BOARDS = """
components:
  securitySchemes:
    api_key: {type: apiKey, in: query, name: key}
    api_token: {type: apiKey, in: query, name: token}
security: [{api_key: []}, {api_token: []}]
paths:
  /boards/{id}:
    get:
      operationId: getBoard
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: key, in: query, required: true, schema: {type: string}}
        - {name: token, in: query, required: true, schema: {type: string}}
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
  /status:
    get:
      operationId: status
      security: []
      parameters:
        - {name: key, in: query, schema: {type: string}}
        - {name: token, in: query, schema: {type: string}}
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
"""
BOARDS_ENV = {"BOARDS_API_KEY": KEY, "BOARDS_API_TOKEN_API_KEY": TOKEN}


@pytest.mark.anyio
async def test_either_alternative_chosen_every_required_slot_parameter_is_sent(tmp_path: Path) -> None:
    async with served(tmp_path, _spec(BOARDS, "Boards"), BOARDS_ENV) as api:
        tools = {tool.name: tool for tool in (await api.client.list_tools()).tools}
        result = await api.call("getBoard", {"id": "b1"})
        board = api.sent
        anonymous = await api.call("status")
        status = api.sent
    assert _args(tools["getBoard"]) == {"id"}
    assert not result.is_error, _text(result)
    assert sorted(board.query_pairs) == [("key", KEY), ("token", TOKEN)]
    # An operation whose security is `[]` still gets its declared (optional) slots filled.
    assert not anonymous.is_error and sorted(status.query_pairs) == [("key", KEY), ("token", TOKEN)]
    assert KEY not in _text(result) and TOKEN not in _text(anonymous)
    assert api.fake.violations == []
    readme = _readme(api.package)
    assert "`BOARDS_API_KEY`" in readme and "`BOARDS_API_TOKEN_API_KEY`" in readme
    assert "`token` (query)" in readme


@pytest.mark.anyio
async def test_a_required_slot_whose_variable_is_unset_fails_before_sending_naming_it(tmp_path: Path) -> None:
    async with served(tmp_path, _spec(BOARDS, "Boards"), {"BOARDS_API_KEY": KEY}) as api:
        result = await api.call("getBoard", {"id": "b1"})
        optional = await api.call("status")
        lines = credential_lines(api.catalogue, _credentials(api))
    assert result.is_error and "BOARDS_API_TOKEN_API_KEY" in _text(result)
    assert len(api.fake.requests) == 1  # only `status`: its slots are optional, the unset one left out
    assert api.fake.requests[0].query_pairs == [("key", KEY)] and not optional.is_error
    assert any("BOARDS_API_TOKEN_API_KEY" in line and "cannot be called" in line for line in lines), lines


def _credentials(api: Served) -> Any:
    runtime = HttpRuntime.create(api.catalogue, environ={"BOARDS_API_KEY": KEY})
    return runtime.credentials


# ------------------------------------------- 2. a slot parameter outside the operation's security


INTEGRATIONS = """
components:
  securitySchemes:
    apiKey: {type: apiKey, in: header, name: Authorization}
    applicationId: {type: apiKey, in: header, name: x-app-id}
security: [{apiKey: [], applicationId: []}]
paths:
  /contacts:
    get:
      operationId: listContacts
      security: [{apiKey: []}]
      parameters:
        - {name: x-app-id, in: header, required: true, schema: {type: string}}
        - {name: limit, in: query, schema: {type: integer}}
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
"""


@pytest.mark.anyio
async def test_a_required_slot_of_a_scheme_the_operation_does_not_list_is_still_sent(tmp_path: Path) -> None:
    environ = {"INTEGRATIONS_API_KEY": KEY, "INTEGRATIONS_APPLICATION_ID_API_KEY": "app-42-abcdef"}
    async with served(tmp_path, _spec(INTEGRATIONS, "Integrations"), environ) as api:
        tools = {tool.name: tool for tool in (await api.client.list_tools()).tools}
        result = await api.call("listContacts", {"limit": 5})
    assert not result.is_error, _text(result)
    assert _args(tools["listContacts"]) == {"limit"}
    assert api.sent.header("x-app-id") == "app-42-abcdef" and api.sent.header("authorization") == KEY
    assert "app-42-abcdef" not in _text(result)
    assert "`INTEGRATIONS_APPLICATION_ID_API_KEY`" in _readme(api.package)  # named in the README
    assert "applicationId" in api.catalogue.security_schemes


# ------------------------------------------------ 3. no security in the spec, a configured scheme


AI = """
paths:
  /completions:
    post:
      operationId: createCompletion
      requestBody:
        required: true
        content: {application/json: {schema: {type: object, properties: {prompt: {type: string}}}}}
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
  /models:
    get:
      operationId: listModels
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
"""


@pytest.mark.anyio
async def test_a_scheme_declared_in_the_config_is_sent_and_redacted_like_a_spec_scheme(tmp_path: Path) -> None:
    options = GenerateOptions(
        security_schemes={"bearer": {"type": "http", "scheme": "bearer"}}, security=[{"bearer": []}]
    )
    async with served(tmp_path, _spec(AI, "AI"), {"AI_BEARER_TOKEN": TOKEN}, options) as api:
        api.fake.handler(lambda r: make_reply(401, json_body={"error": "bad token", "echo": r.header("authorization")}))
        result = await api.call("createCompletion", {"prompt": "hi"})
    assert api.sent.header("authorization") == f"Bearer {TOKEN}"
    assert result.is_error and TOKEN not in _text(result)
    assert not any("security:" in issue for issue in api.issues)  # configured: no "no credential" warning
    assert "`AI_BEARER_TOKEN`" in _readme(api.package)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("scheme", "where"),
    [
        ({"type": "apiKey", "in": "header", "name": "X-Api-Key"}, "header"),
        ({"type": "apiKey", "in": "query", "name": "api_key"}, "query"),
        ({"type": "apiKey", "in": "cookie", "name": "session"}, "cookie"),
        ({"type": "http", "scheme": "basic"}, "basic"),
    ],
)
async def test_a_configured_scheme_of_each_kind_chosen_per_operation(
    tmp_path: Path, scheme: dict[str, Any], where: str
) -> None:
    options = GenerateOptions(
        security_schemes={"cfg": scheme}, overrides={"createCompletion": {"security": [{"cfg": []}]}}
    )
    environ = {"AI_CFG_API_KEY": KEY, "AI_CFG_USERNAME": "user", "AI_CFG_PASSWORD": SECRET}
    async with served(tmp_path, _spec(AI, "AI"), environ, options) as api:
        await api.call("createCompletion", {"prompt": "hi"})
        chosen = api.sent
        await api.call("listModels")
        other = api.sent
    if where == "header":
        assert chosen.header("x-api-key") == KEY
    elif where == "query":
        assert chosen.query_pairs == [("api_key", KEY)]
    elif where == "cookie":
        assert chosen.cookies == {"session": KEY}
    else:
        assert (chosen.header("authorization") or "").startswith("Basic ")
    # Only the chosen operation uses it.
    assert other.header("authorization") is None and other.header("x-api-key") is None and other.query == ""


def test_generate_warns_once_when_nothing_sends_a_credential_and_serve_says_so(tmp_path: Path) -> None:
    spec = tmp_path / "ai.json"
    spec.write_text(json.dumps(_spec(AI, "AI")), encoding="utf-8")
    result = CliRunner().invoke(cli, ["generate", str(spec), "-o", str(tmp_path / "pkg")])
    assert result.exit_code == 0, result.output
    assert result.output.count("warning: security: ") == 1 and "--config" in result.output
    catalogue = load_catalogue(tmp_path / "pkg")
    lines = credential_lines(catalogue, HttpRuntime.create(catalogue, environ={}).credentials)
    assert any("no credential" in line for line in lines), lines


@pytest.mark.parametrize(
    ("config", "where"),
    [
        ({"security_schemes": {"b": {"type": "http"}}}, "config: security_schemes/b"),
        ({"security_schemes": {"b": {"type": "apiKey", "in": "body", "name": "k"}}}, "config: security_schemes/b"),
        ({"security": [{"nope": []}]}, "config: security"),
        ({"operations": {"listModels": {"security": [{"nope": []}]}}}, "config: GET /models: security"),
        ({"headers": {"Host": "evil.example"}}, "config: headers"),
        ({"headers": {"Authorization": "env:T"}}, "config: headers"),
        ({"headers": {"X-Tenant": "a\r\nX-Evil: 1"}}, "config: headers"),
    ],
)
def test_a_credential_config_that_cannot_be_used_is_an_error_not_a_silent_omission(
    tmp_path: Path, config: dict[str, Any], where: str
) -> None:
    spec = tmp_path / "ai.json"
    spec.write_text(json.dumps(_spec(AI, "AI")), encoding="utf-8")
    options = GenerateOptions(
        security_schemes=config.get("security_schemes", {}),
        security=config.get("security"),
        overrides=config.get("operations", {}),
        headers=config.get("headers", {}),
    )
    with pytest.raises(GenerationError) as failed:
        generate(str(spec), tmp_path / "pkg", options)
    assert [i.where for i in failed.value.issues if i.level is Level.ERROR] == [where]
    assert not (tmp_path / "pkg").exists()


def test_the_cli_reads_schemes_security_and_headers_from_the_config(tmp_path: Path) -> None:
    spec = tmp_path / "ai.json"
    spec.write_text(json.dumps(_spec(AI, "AI")), encoding="utf-8")
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "security_schemes": {"bearer": {"type": "http", "scheme": "bearer"}},
                "security": [{"bearer": []}],
                "headers": {"X-Tenant": "acme", "X-Org-Key": "env:ORG_KEY"},
            },
            sort_keys=False,
        ),
        encoding="utf-8",
    )
    out = tmp_path / "pkg"
    result = CliRunner().invoke(cli, ["generate", str(spec), "-o", str(out), "--config", str(config)])
    assert result.exit_code == 0, result.output
    catalogue = load_catalogue(out)
    assert list(catalogue.security_schemes) == ["bearer"]
    assert all(tool.binding.security for tool in catalogue.tools)
    assert [(h.name, h.value.value, h.value.env) for h in catalogue.headers] == [
        ("X-Tenant", "acme", None),
        ("X-Org-Key", None, "ORG_KEY"),
    ]
    readme = _readme(out)
    assert "`PKG_BEARER_TOKEN`" in readme and "`ORG_KEY`" in readme  # named after the -o folder


# ----------------------------------------------- 4. OAuth2, client-credentials flow, ready token


VIDEO = """
components:
  securitySchemes:
    oauth2:
      type: oauth2
      flows: {clientCredentials: {tokenUrl: 'http://auth.test/token', scopes: {public: read}}}
security: [{oauth2: [public]}]
paths:
  /videos:
    get:
      operationId: listVideos
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
"""


@pytest.mark.anyio
async def test_a_ready_token_works_for_a_client_credentials_only_oauth2_scheme(tmp_path: Path) -> None:
    token_requests: list[httpx.Request] = []

    def token_endpoint(request: httpx.Request) -> httpx.Response:
        token_requests.append(request)
        return httpx.Response(200, json={"access_token": "fetched-token-abcdef", "expires_in": 300})

    async with served(
        tmp_path,
        _spec(VIDEO, "Video"),
        {"VIDEO_OAUTH2_TOKEN": TOKEN},
        token_transport=httpx.MockTransport(token_endpoint),
    ) as api:
        result = await api.call("listVideos")
    assert not result.is_error, _text(result)
    assert api.sent.header("authorization") == f"Bearer {TOKEN}" and token_requests == []
    readme = _readme(api.package)
    assert "`VIDEO_OAUTH2_TOKEN`" in readme and "`VIDEO_OAUTH2_CLIENT_ID`" in readme


@pytest.mark.anyio
async def test_without_a_ready_token_the_client_credentials_are_used(tmp_path: Path) -> None:
    def token_endpoint(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"access_token": "fetched-token-abcdef", "expires_in": 300})

    environ = {"VIDEO_OAUTH2_CLIENT_ID": "client", "VIDEO_OAUTH2_CLIENT_SECRET": SECRET}
    async with served(
        tmp_path, _spec(VIDEO, "Video"), environ, token_transport=httpx.MockTransport(token_endpoint)
    ) as api:
        result = await api.call("listVideos")
    assert not result.is_error and api.sent.header("authorization") == "Bearer fetched-token-abcdef"


# ----------------------------------------------------------------- 5. bound body properties


BANKING = """
components:
  securitySchemes:
    clientId: {type: apiKey, in: header, name: PLAID-CLIENT-ID}
paths:
  /accounts/get:
    post:
      operationId: accountsGet
      security: [{clientId: []}]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [access_token, client_id, secret]
              properties:
                client_id: {type: string}
                secret: {type: string}
                access_token: {type: string}
  /items/remove:
    post:
      operationId: itemRemove
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: true
              properties:
                secret: {type: string}
                options: {type: object, additionalProperties: {type: string}}
                items: {type: array, items: {type: string}}
"""
BANK_BIND = {"client_id": "env:BANK_CLIENT_ID", "secret": "env:BANK_SECRET", "access_token": "env:BANK_ACCESS"}


@pytest.mark.anyio
async def test_bound_body_properties_reach_the_body_and_never_the_model(tmp_path: Path) -> None:
    environ = {
        "BANK_CLIENT_ID": "client-1234567",
        "BANK_SECRET": SECRET,
        "BANK_ACCESS": "access-sandbox-1",
        "BANKING_CLIENT_ID_API_KEY": "hdr-1234567",
    }
    options = GenerateOptions(bindings=BANK_BIND)
    async with served(tmp_path, _spec(BANKING, "Banking"), environ, options) as api:
        tools = {tool.name: tool for tool in (await api.client.list_tools()).tools}
        result = await api.call("accountsGet", {})
        flat = json.loads(api.sent.body)
        # A whole-body argument (free keys): the model's own `secret` is replaced.
        await api.call("itemRemove", {"body": {"secret": "model-chosen", "items": ["a"]}})
        whole = json.loads(api.sent.body)
    assert _args(tools["accountsGet"]) == set()
    assert flat == {"access_token": "access-sandbox-1", "client_id": "client-1234567", "secret": SECRET}
    assert whole == {"items": ["a"], "secret": SECRET}
    assert "secret" not in json.dumps(tools["itemRemove"].input_schema)
    assert not result.is_error and SECRET not in _text(result)
    # Bound, none of them is an argument the model is asked for, nor left out.
    assert not [issue for issue in api.issues if "arguments named like secrets" in issue or "left out" in issue]
    assert "`BANK_SECRET`" in _readme(api.package)


@pytest.mark.anyio
async def test_a_required_bound_body_property_whose_variable_is_unset_fails_naming_it(tmp_path: Path) -> None:
    options = GenerateOptions(bindings=BANK_BIND)
    async with served(tmp_path, _spec(BANKING, "Banking"), {"BANK_CLIENT_ID": "c-1234567"}, options) as api:
        result = await api.call("accountsGet", {})
        optional = await api.call("itemRemove", {"body": {"secret": "model-chosen"}})
    assert result.is_error and "BANK_SECRET" in _text(result)
    # The optional one is left out, never replaced by the model's value.
    assert len(api.fake.requests) == 1 and json.loads(api.sent.body) == {} and not optional.is_error


def test_generate_warns_once_naming_the_credential_properties_it_left_out(tmp_path: Path) -> None:
    spec = tmp_path / "bank.json"
    spec.write_text(json.dumps(_spec(BANKING, "Banking")), encoding="utf-8")
    result = generate(str(spec), tmp_path / "pkg", GenerateOptions())
    (note,) = [i for i in result.issues if i.where == "credentials"]
    assert note.level is Level.WARNING and "secret (body) in 2 operations" in note.detail
    assert "access_token (body) in 1 operation" in note.detail and "bind: {" in note.detail
    assert [i for i in result.issues if i.where == "arguments"] == []  # none is left for the model


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("secret", True),
        ("clientSecret", True),
        ("CLIENT-SECRET", True),
        ("api_key", True),
        ("apiKey", True),
        ("Access.Token", True),
        ("private_key", True),
        ("password", True),
        ("token", True),
        ("next_page_token", False),
        ("tokenizer", False),
        ("secretary", False),
        ("key", False),
        ("password_hint", False),
    ],
)
def test_secret_like_names_in_any_case_or_separator_style(name: str, secret: bool) -> None:
    from generator.parse.credential_notes import secret_like

    assert secret_like(name) is secret


# ------------------------------------------------------------------------- 6. static headers


TENANT = """
paths:
  /things:
    get:
      operationId: listThings
      parameters:
        - {name: X-Tenant, in: header, schema: {type: string}}
        - {name: q, in: query, schema: {type: string}}
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
"""


@pytest.mark.anyio
async def test_static_headers_go_on_every_request_and_no_argument_overrides_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    options = GenerateOptions(headers={"X-Tenant": "acme", "X-Org-Key": "env:ORG_KEY"})
    with caplog.at_level(logging.DEBUG):
        async with served(tmp_path, _spec(TENANT, "Tenant"), {"ORG_KEY": SECRET}, options) as api:
            tools = {tool.name: tool for tool in (await api.client.list_tools()).tools}
            refused = await api.call("listThings", {"X-Tenant": "evil"})
            result = await api.call("listThings", {"q": "x"})
    assert _args(tools["listThings"]) == {"q"}
    assert refused.is_error and len(api.fake.requests) == 1
    assert api.sent.header_all("x-tenant") == ["acme"] and api.sent.header("x-org-key") == SECRET
    assert not result.is_error and SECRET not in _text(result)
    assert SECRET not in caplog.text


# ------------------------------------------------------ requirements no request can carry


@pytest.mark.anyio
async def test_a_requirement_needing_two_authorization_credentials_is_refused_and_another_chosen() -> None:
    from bridge.contract.catalogue import EnvVar, SchemeUse, SecurityScheme
    from bridge.secrets.credentials import Credentials
    from bridge.tools.errors import CredentialsError

    schemes = {
        "basic": SecurityScheme(
            type="http",
            http_scheme="basic",
            env=(EnvVar(role="username", name="U"), EnvVar(role="password", name="P")),
        ),
        "oauth": SecurityScheme(type="oauth2", env=(EnvVar(role="token", name="T"),)),
        "key": SecurityScheme(
            type="apiKey", location="header", param_name="X-Key", env=(EnvVar(role="value", name="K"),)
        ),
    }
    credentials = Credentials(schemes, {"U": "user", "P": SECRET, "T": TOKEN, "K": KEY})
    both = (SchemeUse(scheme="basic"), SchemeUse(scheme="oauth"))
    with pytest.raises(CredentialsError) as refused:
        await credentials.for_operation((both,))
    assert "basic + oauth" in str(refused.value) and "Authorization" in str(refused.value)
    assert SECRET not in str(refused.value) and TOKEN not in str(refused.value)
    parts = await credentials.for_operation((both, (SchemeUse(scheme="key"),)))
    assert parts.headers == (("X-Key", KEY),)


@pytest.mark.anyio
async def test_bearer_schemes_required_together_are_one_token_on_the_wire() -> None:
    from bridge.contract.catalogue import EnvVar, SchemeUse, SecurityScheme
    from bridge.secrets.credentials import Credentials
    from bridge.tools.errors import CredentialsError

    # Google's specs pair two OAuth2 schemes (one per flow) in every requirement.
    schemes = {
        "Oauth2": SecurityScheme(type="oauth2", env=(EnvVar(role="token", name="G_OAUTH2_TOKEN"),)),
        "Oauth2c": SecurityScheme(type="oauth2", env=(EnvVar(role="token", name="G_OAUTH2C_TOKEN"),)),
    }
    both = ((SchemeUse(scheme="Oauth2"), SchemeUse(scheme="Oauth2c")),)
    parts = await Credentials(schemes, {"G_OAUTH2C_TOKEN": TOKEN}).for_operation(both)
    assert parts.headers == (("Authorization", f"Bearer {TOKEN}"),) and parts.schemes == ("Oauth2c",)
    with pytest.raises(CredentialsError) as missing:
        await Credentials(schemes, {}).for_operation(both)
    assert "G_OAUTH2_TOKEN" in str(missing.value) and "G_OAUTH2C_TOKEN" in str(missing.value)
