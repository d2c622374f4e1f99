"""Internal APIs: an OpenAPI 3.1 ``mutualTLS`` scheme presents the client certificate, a per-API CA
bundle trusts a private CA, and key material is never shown (issue 18, SECURITY.md P43).

The upstream is a real loopback HTTPS server (tests/security/fault_server.py with an SSL context
that requires a client certificate from the test CA this test makes), so the TLS handshake, not
a mock, decides whether the certificate reached it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types
import pytest
import yaml
from mcp import Client

from bridge.calls.runtime import HttpRuntime
from bridge.contract.catalogue import Catalogue
from bridge.serving.assemble import build_bridge_server, build_registry
from bridge.serving.package import load_catalogue
from bridge.serving.startup import credential_lines
from bridge.tools.errors import ConfigurationError
from generator.generate import generate
from generator.options import GenerateOptions
from tests.security.fault_server import Fault, FaultServer
from tests.tls_certs import CLIENT_CN, Pki, make_pki

SPEC = """
openapi: 3.1.0
info: {title: Internal, version: '1'}
servers: [{url: 'https://internal.example'}]
components:
  securitySchemes:
    mtls: {type: mutualTLS, description: The company's client certificate.}
security: [{mtls: []}]
paths:
  /health:
    get:
      operationId: health
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
"""


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory: pytest.TempPathFactory) -> tuple[Catalogue, Path]:
    folder = tmp_path_factory.mktemp("pkg")
    spec = folder / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    generate(str(spec), folder / "pkg", GenerateOptions())
    return load_catalogue(folder / "pkg"), folder / "pkg"


def _environ(pki: Pki, **extra: str) -> dict[str, str]:
    return {
        "INTERNAL_MTLS_CERT_FILE": str(pki.client_cert),
        "INTERNAL_MTLS_KEY_FILE": str(pki.client_key),
        "INTERNAL_CA_BUNDLE": str(pki.ca),
        **extra,
    }


@asynccontextmanager
async def called(
    catalogue: Catalogue, package: Path, server: FaultServer, environ: dict[str, str]
) -> AsyncIterator[Client]:
    runtime = HttpRuntime.create(catalogue, base_url=server.url, environ=environ)
    async with runtime:
        mcp_server = build_bridge_server(catalogue, build_registry(catalogue, runtime, package))
        async with Client(mcp_server) as client:
            yield client


def _subject_cn(cert: dict[str, Any] | None) -> str | None:
    if not cert:
        return None
    for rdn in cert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return str(value)
    return None


def _text(result: mcp_types.CallToolResult) -> str:
    return json.dumps(result.model_dump(mode="json"))


@pytest.mark.anyio
@pytest.mark.parametrize("key", ["separate", "combined", "encrypted"])
async def test_the_client_certificate_reaches_an_upstream_that_requires_it(
    pki: Pki, catalogue: tuple[Catalogue, Path], key: str
) -> None:
    environ = _environ(pki)
    if key == "combined":
        environ["INTERNAL_MTLS_CERT_FILE"] = str(pki.client_combined)
        del environ["INTERNAL_MTLS_KEY_FILE"]
    elif key == "encrypted":
        environ.update(INTERNAL_MTLS_KEY_FILE=str(pki.client_key_encrypted), INTERNAL_MTLS_KEY_PASSWORD=pki.password)
    async with FaultServer(Fault.ok(b'{"ok": true}'), tls=pki.server_context()) as server:
        async with called(*catalogue, server, environ) as client:
            result = await client.call_tool("health", {})
    assert not result.is_error, _text(result)
    (attempt,) = server.attempts
    assert _subject_cn(attempt.peer_cert) == CLIENT_CN


@pytest.mark.anyio
async def test_without_the_certificate_the_upstream_refuses_and_the_tools_say_what_to_set(
    pki: Pki, catalogue: tuple[Catalogue, Path]
) -> None:
    environ = {"INTERNAL_CA_BUNDLE": str(pki.ca)}
    async with FaultServer(Fault.ok(), tls=pki.server_context()) as server:
        async with called(*catalogue, server, environ) as client:
            result = await client.call_tool("health", {})
    assert result.is_error and "INTERNAL_MTLS_CERT_FILE" in _text(result) and server.attempts == []
    lines = credential_lines(catalogue[0], HttpRuntime.create(catalogue[0], environ=environ).credentials)
    assert any("INTERNAL_MTLS_CERT_FILE" in line and "cannot be called" in line for line in lines), lines


@pytest.mark.anyio
async def test_the_ca_bundle_is_per_api_and_a_server_outside_it_is_refused(
    pki: Pki, catalogue: tuple[Catalogue, Path]
) -> None:
    environ = _environ(pki, INTERNAL_CA_BUNDLE=str(pki.other_ca))
    async with FaultServer(Fault.ok(), tls=pki.server_context()) as server:
        async with called(*catalogue, server, environ) as client:
            result = await client.call_tool("health", {})
    assert result.is_error and server.attempts == []  # the handshake failed: nothing was sent


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"INTERNAL_MTLS_CERT_FILE": "/nonexistent/client.pem"}, "INTERNAL_MTLS_CERT_FILE"),
        ({"INTERNAL_MTLS_KEY_FILE": "ENCRYPTED"}, "INTERNAL_MTLS_CERT_FILE and INTERNAL_MTLS_KEY_FILE"),
        ({"INTERNAL_MTLS_KEY_FILE": "ENCRYPTED", "INTERNAL_MTLS_KEY_PASSWORD": "wrong-password-1"}, "INTERNAL_MTLS"),
        ({"INTERNAL_CA_BUNDLE": "/nonexistent/ca.pem"}, "INTERNAL_CA_BUNDLE"),
        ({"INTERNAL_CA_BUNDLE": "KEY"}, "INTERNAL_CA_BUNDLE"),
    ],
)
def test_unusable_key_material_stops_start_up_in_one_line_that_shows_none_of_it(
    pki: Pki, catalogue: tuple[Catalogue, Path], change: dict[str, str], named: str
) -> None:
    environ = _environ(pki)
    for name, value in change.items():
        environ[name] = {"ENCRYPTED": str(pki.client_key_encrypted), "KEY": str(pki.client_key)}.get(value, value)
    with pytest.raises(ConfigurationError) as failed:
        HttpRuntime.create(catalogue[0], environ=environ)
    message = str(failed.value)
    assert named in message and "\n" not in message
    key_text = pki.client_key.read_text(encoding="ascii")
    assert pki.password not in message and "wrong-password-1" not in message
    assert not any(line in message for line in key_text.splitlines()[1:-1])


@pytest.mark.anyio
async def test_the_key_password_is_a_secret_and_key_bytes_never_reach_a_log(
    pki: Pki, catalogue: tuple[Catalogue, Path], caplog: pytest.LogCaptureFixture
) -> None:
    environ = _environ(
        pki, INTERNAL_MTLS_KEY_FILE=str(pki.client_key_encrypted), INTERNAL_MTLS_KEY_PASSWORD=pki.password
    )
    echo = Fault.ok(json.dumps({"seen": pki.password}).encode())
    with caplog.at_level(logging.DEBUG):
        async with FaultServer(echo, tls=pki.server_context()) as server:
            async with called(*catalogue, server, environ) as client:
                result = await client.call_tool("health", {})
    assert not result.is_error and pki.password not in _text(result)
    assert pki.password not in caplog.text
    key_lines = pki.client_key_encrypted.read_text(encoding="ascii").splitlines()[1:-1]
    assert not any(line in caplog.text for line in key_lines)


def test_the_package_readme_names_the_certificate_variables(catalogue: tuple[Catalogue, Path]) -> None:
    readme = (catalogue[1] / "README.md").read_text(encoding="utf-8")
    for name in (
        "INTERNAL_MTLS_CERT_FILE",
        "INTERNAL_MTLS_KEY_FILE",
        "INTERNAL_MTLS_KEY_PASSWORD",
        "INTERNAL_CA_BUNDLE",
    ):
        assert f"`{name}`" in readme
    assert yaml.safe_load(SPEC)["components"]["securitySchemes"]["mtls"]["type"] == "mutualTLS"
