"""The Arazzo specification's examples end to end: a loopback upstream implementing their OpenAPI
descriptions (uvicorn on 127.0.0.1), the bridge serving the generated workflows, the official MCP client.

Every request the upstream saw is checked: method, path, query, body and the credential it carried.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import anyio
import pytest
import yaml
from mcp import Client

from bridge.calls.runtime import HttpRuntime
from bridge.cli.demo_upstream import free_port
from bridge.serving.assemble import build_bridge_server, build_registry
from generator.generate import build_catalogue
from generator.options import GenerateOptions

pytestmark = pytest.mark.anyio

DATA = Path(__file__).parent / "data"
STARTUP_TIMEOUT = 15.0
OPERATOR_TOKEN = "operator-oauth-token-5b1f"
SESSION = "logged in user session:6f1c2d"
Scope = MutableMapping[str, Any]


@dataclass
class Seen:
    method: str
    path: str
    query: list[tuple[str, str]]
    authorization: str | None
    body: Any


@dataclass
class PetShop:
    """A raw ASGI app answering the operations the examples call, as their descriptions say."""

    seen: list[Seen] = field(default_factory=list)

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        seen = Seen(
            scope["method"],
            scope["path"],
            parse_qsl(scope["query_string"].decode()),
            headers.get("authorization"),
            json.loads(raw) if raw else None,
        )
        self.seen.append(seen)
        status, body, extra = self.answer(seen)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), *extra],
            }
        )
        await send({"type": "http.response.body", "body": json.dumps(body).encode()})

    def answer(self, seen: Seen) -> tuple[int, Any, list[tuple[bytes, bytes]]]:
        pet = {"id": 10, "name": "doggie", "photoUrls": [], "price": 100, "status": "available"}
        if seen.path == "/user/login":
            return 200, SESSION, [(b"x-rate-limit", b"5000"), (b"x-expires-after", b"2026-12-02T00:00:00Z")]
        if seen.path in ("/pet/findByStatus", "/pet/findByTags"):
            return 200, [pet, {**pet, "id": 11, "name": "kitty"}], []
        if seen.path == "/pet/10/coupons":
            return 200, {"id": 3, "description": "Summer Sale", "couponCode": "SUMMERSALE"}, []
        if seen.path == "/store/order" and seen.method == "POST":
            return 200, {"id": 501, **(seen.body or {})}, []
        return 404, {"message": "not found"}, []


@asynccontextmanager
async def loopback(app: PetShop) -> AsyncIterator[int]:
    import uvicorn

    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        try:
            with anyio.fail_after(STARTUP_TIMEOUT):
                while not server.started:
                    await anyio.sleep(0.01)
            yield port
        finally:
            server.should_exit = True


@asynccontextmanager
async def bridge(
    spec: Path, flows: Path, port: int, bind: dict[str, str] | None = None, environ: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    catalogue, _ = build_catalogue(str(spec), GenerateOptions(workflows=(str(flows),), bindings=bind or {}))
    token_vars = {
        var.name: OPERATOR_TOKEN for s in catalogue.security_schemes.values() for var in s.env if var.role == "token"
    }
    environ = token_vars | (environ or {})
    runtime = HttpRuntime.create(catalogue, base_url=f"http://127.0.0.1:{port}", environ=environ)
    async with runtime:
        server = build_bridge_server(catalogue, build_registry(catalogue, runtime, None), runtime=runtime)
        async with Client(server) as client:
            yield client


def corrected_pet_coupons(tmp_path: Path) -> Path:
    """pet-coupons with its two parameter names spelt as the operations spell them (pet_tags, pet_id)."""
    document = yaml.safe_load((DATA / "pet-coupons.arazzo.yaml").read_text())
    steps = document["workflows"][0]["steps"]
    steps[0]["parameters"][0]["name"] = "tags"
    steps[1]["parameters"][0]["name"] = "petId"
    path = tmp_path / "pet-coupons.arazzo.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    (tmp_path / "pet-coupons.openapi.yaml").write_text((DATA / "pet-coupons.openapi.yaml").read_text())
    return path


async def test_pet_coupons_runs_end_to_end_through_the_mcp_client(tmp_path: Path) -> None:
    shop = PetShop()
    flows = corrected_pet_coupons(tmp_path)
    async with loopback(shop) as port, bridge(tmp_path / "pet-coupons.openapi.yaml", flows, port) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"apply-coupon", "buy-available-pet", "place-order"} <= names
        applied = await client.call_tool("apply-coupon", {"my_pet_tags": ["puppy", "dalmatian"]})
        bought = await client.call_tool("buy-available-pet", {"store_id": "pets.example.com"})
    assert not applied.is_error and applied.structured_content == {"apply_coupon_pet_order_id": 501}
    assert not bought.is_error and bought.structured_content == {"buy_pet_order_id": 501}
    bearer = f"Bearer {OPERATOR_TOKEN}"
    assert [(s.method, s.path, s.query, s.authorization, s.body) for s in shop.seen] == [
        ("GET", "/pet/findByTags", [("tags", "puppy"), ("tags", "dalmatian")], bearer, None),
        ("GET", "/pet/10/coupons", [], bearer, None),
        (
            "POST",
            "/store/order",
            [],
            None,
            {"petId": 10, "couponCode": "SUMMERSALE", "status": "placed", "complete": False},
        ),
        ("GET", "/pet/findByStatus", [("status", "available"), ("page", "1"), ("pageSize", "10")], bearer, None),
        ("POST", "/store/order", [], None, {"petId": 10, "status": "placed", "complete": False}),
    ]


async def test_login_and_retrieve_pets_runs_end_to_end_with_the_session_the_login_returned(tmp_path: Path) -> None:
    # The example with its password bound by the operator (P11: never the model's), not a workflow input.
    document = yaml.safe_load((DATA / "LoginAndRetrievePets.arazzo.yaml").read_text())
    workflow = document["workflows"][0]
    del workflow["inputs"]["properties"]["password"]
    login = workflow["steps"][0]
    login["parameters"] = [p for p in login["parameters"] if p["name"] != "password"]
    flows = tmp_path / "LoginAndRetrievePets.arazzo.yaml"
    flows.write_text(yaml.safe_dump(document, sort_keys=False))
    spec = tmp_path / "swagger-petstore.openapi.yaml"
    spec.write_text((DATA / "swagger-petstore.openapi.yaml").read_text())
    shop = PetShop()
    bind, environ = {"password": "env:PETSTORE_PASSWORD"}, {"PETSTORE_PASSWORD": "wonderland-7"}
    async with loopback(shop) as port, bridge(spec, flows, port, bind, environ) as client:
        result = await client.call_tool("loginUserRetrievePet", {"username": "alice"})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert [pet["name"] for pet in result.structured_content["available"]] == ["doggie", "kitty"]
    assert [(s.method, s.path, s.query, s.authorization) for s in shop.seen] == [
        ("GET", "/user/login", [("username", "alice"), ("password", "wonderland-7")], None),
        ("GET", "/pet/findByStatus", [("status", "available")], SESSION),  # the session, not the operator's token
    ]
    assert "wonderland-7" not in json.dumps(result.model_dump(mode="json"))


async def test_login_and_retrieve_pets_asks_the_model_for_no_password_so_it_is_not_served(tmp_path: Path) -> None:
    # The Arazzo example feeds a password from the workflow's inputs into GET /user/login?password=:
    # a credential as a model's argument (P11), so the login tool has no `password` and the
    # workflow that needs one is not served; nothing reaches the upstream.
    shop = PetShop()
    spec, flows = DATA / "swagger-petstore.openapi.yaml", DATA / "LoginAndRetrievePets.arazzo.yaml"
    async with loopback(shop) as port, bridge(spec, flows, port) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        refused = await client.call_tool("loginUser", {"username": "alice", "password": "wonderland-7"})
    assert "loginUserRetrievePet" not in tools and refused.is_error
    assert "password" not in tools["loginUser"].input_schema["properties"]
    assert shop.seen == []
