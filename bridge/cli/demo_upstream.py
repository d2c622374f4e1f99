"""A small in-memory REST API implementing ``specs/petstore.yaml``, for the demo and the tests.

It checks the ``X-API-Key`` header like a real API would, and its long-poll endpoint records
when a client gives up, so the demo can show that cancelling a tool call closes the request.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

DEMO_API_KEY = "demo-key-123"
STARTUP_TIMEOUT = 15.0
STATUSES = ("available", "pending", "sold")


@dataclass
class PetStore:
    api_key: str = DEMO_API_KEY
    pets: dict[int, dict[str, Any]] = field(default_factory=dict)
    next_id: int = 1
    requests: list[tuple[str, str]] = field(default_factory=list)
    waiting_aborted: anyio.Event = field(default_factory=anyio.Event)
    waiting_started: anyio.Event = field(default_factory=anyio.Event)

    def add(self, name: str, tag: str | None = None, status: str = "available") -> dict[str, Any]:
        pet = {"id": self.next_id, "name": name, "tag": tag, "status": status}
        self.pets[self.next_id] = pet
        self.next_id += 1
        return pet


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"code": status, "message": message}, status_code=status)


def create_app(store: PetStore | None = None) -> Starlette:
    store = store or PetStore()
    if not store.pets:
        store.add("Rex", "dog")
        store.add("Tom", "cat", "pending")
        store.add("Nemo", "fish", "sold")

    def authorised(request: Request) -> bool:
        store.requests.append((request.method, request.url.path))
        return request.headers.get("x-api-key") == store.api_key

    async def list_pets(request: Request) -> Response:
        if not authorised(request):
            return _error(401, "missing or wrong X-API-Key")
        status = request.query_params.get("status")
        tags = [t for t in request.query_params.get("tags", "").split(",") if t]
        limit = int(request.query_params.get("limit", "20"))
        pets = [p for p in store.pets.values() if (status is None or p["status"] == status)]
        pets = [p for p in pets if not tags or p["tag"] in tags]
        return JSONResponse(pets[:limit])

    async def create_pet(request: Request) -> Response:
        if not authorised(request):
            return _error(401, "missing or wrong X-API-Key")
        body = await request.json()
        if not isinstance(body, dict) or not isinstance(body.get("name"), str) or not body["name"]:
            return _error(422, "name: required")
        status = body.get("status", "available")
        if status not in STATUSES:
            return _error(422, f"status: must be one of {', '.join(STATUSES)}")
        return JSONResponse(store.add(body["name"], body.get("tag"), status), status_code=201)

    def find(request: Request) -> dict[str, Any] | None:
        return store.pets.get(int(request.path_params["pet_id"]))

    async def get_pet(request: Request) -> Response:
        if not authorised(request):
            return _error(401, "missing or wrong X-API-Key")
        pet = find(request)
        return JSONResponse(pet) if pet else _error(404, f"no pet with id {request.path_params['pet_id']}")

    async def delete_pet(request: Request) -> Response:
        if not authorised(request):
            return _error(401, "missing or wrong X-API-Key")
        if store.pets.pop(int(request.path_params["pet_id"]), None) is None:
            return _error(404, f"no pet with id {request.path_params['pet_id']}")
        return Response(status_code=204)

    async def wait_for_adoption(request: Request) -> Response:
        if not authorised(request):
            return _error(401, "missing or wrong X-API-Key")
        store.waiting_started.set()
        with anyio.move_on_after(30):
            while True:
                message = await request.receive()
                if message["type"] == "http.disconnect":
                    store.waiting_aborted.set()
                    return Response(status_code=499)
        pet = find(request)
        return JSONResponse(pet) if pet else _error(404, "no such pet")

    async def inventory(request: Request) -> Response:
        store.requests.append((request.method, request.url.path))
        counts = dict.fromkeys(STATUSES, 0)
        for pet in store.pets.values():
            counts[pet["status"]] += 1
        return JSONResponse(counts)

    routes = [
        Route("/v1/pets", list_pets, methods=["GET"]),
        Route("/v1/pets", create_pet, methods=["POST"]),
        Route("/v1/pets/{pet_id:int}", get_pet, methods=["GET"]),
        Route("/v1/pets/{pet_id:int}", delete_pet, methods=["DELETE"]),
        Route("/v1/pets/{pet_id:int}/wait", wait_for_adoption, methods=["GET"]),
        Route("/v1/store/inventory", inventory, methods=["GET"]),
    ]
    app = Starlette(routes=routes)
    app.state.store = store
    return app


def free_port() -> int:
    """A port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@asynccontextmanager
async def serve_pet_store(store: PetStore | None = None) -> AsyncIterator[tuple[int, PetStore]]:
    """The pet store under uvicorn on 127.0.0.1 in this event loop: ``(port, store)`` once it listens."""
    import uvicorn

    store = store or PetStore()
    port = free_port()
    config = uvicorn.Config(create_app(store), host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        try:
            with anyio.fail_after(STARTUP_TIMEOUT):
                while not server.started:
                    await anyio.sleep(0.01)
            yield port, store
        finally:
            server.should_exit = True
