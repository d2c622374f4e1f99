"""A loopback jobs API with long-running operations (``specs/jobs.yaml``), served by uvicorn on 127.0.0.1.

``POST /v1/jobs`` answers 202 and a status URL; the status answers ``running`` until it has been
polled ``steps`` times, then what the job's ``kind`` says: a report to fetch (``report``), the
result inline (``inline``), a failure (``fail``), a 303 to the report (``redirect``), never
(``hang``), a status over the response cap (``huge``), the API key echoed (``echo``), or a
hostile status URL (``foreign``, ``outside``, ``dotdot``, ``encoded``, ``userinfo``), or the API key
after ``n`` characters of its status word (``n:state``, running for ever) or of its failure (``n:failure``). Every
request is recorded; :meth:`JobStore.polled` waits (bounded by the caller) for the n-th poll.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bridge.cli.demo_upstream import free_port

API_KEY = "JOBS-canary-5be1f0"
HUGE_BYTES = 3 * 1024 * 1024
ENV = {"JOBS_API_KEY": API_KEY}

HOSTILE = {
    "foreign": "http://127.0.0.2:{port}/v1/jobs/{id}/status",
    "outside": "/admin/jobs/{id}/status",
    "dotdot": "/v1/jobs/../../admin/{id}",
    "encoded": "/v1/%2e%2e/admin/{id}",
    "userinfo": "http://user:pw@127.0.0.1:{port}/v1/jobs/{id}/status",
}


@dataclass
class Job:
    id: str
    kind: str
    steps: int
    polls: int = 0
    status: str = "queued"


@dataclass
class JobStore:
    jobs: dict[str, Job] = field(default_factory=dict)
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)  # method, path, X-API-Key
    cancelled: list[str] = field(default_factory=list)
    port: int = 0
    retry_after: str = "0"  # the Retry-After of the start and of a running status (sent as latin-1 bytes)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _changed: anyio.Event = field(default_factory=anyio.Event)

    def changed(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def polled(self, job_id: str, times: int) -> None:
        """Return once ``job_id`` has been polled ``times`` times (the caller bounds the wait)."""
        while job_id not in self.jobs or self.jobs[job_id].polls < times:
            await self._changed.wait()

    def release(self, job_id: str) -> None:
        """Let ``job_id`` finish at its next status check."""
        self.jobs[job_id].steps = 0
        if self.jobs[job_id].kind == "hang":
            self.jobs[job_id].kind = "report"

    def polls(self) -> list[str]:
        return [path for method, path, _ in self.requests if method == "GET" and path.endswith("/status")]


def create_app(store: JobStore) -> Starlette:
    def denied(request: Request) -> Response | None:
        store.requests.append((request.method, request.url.path, request.headers.get("x-api-key")))
        store.changed()
        if request.headers.get("x-api-key") != API_KEY:
            return JSONResponse({"message": "bad key"}, status_code=401)
        return None

    async def start(request: Request) -> Response:
        if (refused := denied(request)) is not None:
            return refused
        body = json.loads(await request.body() or b"{}")
        job = Job(id=f"job-{next(store._ids)}", kind=str(body.get("kind", "report")), steps=int(body.get("steps", 2)))
        store.jobs[job.id] = job
        location = HOSTILE.get(job.kind, "/v1/jobs/{id}/status").format(id=job.id, port=store.port)
        header = "Operation-Location" if job.kind == "operation-location" else "Location"
        headers = {header: location, "Retry-After": store.retry_after}
        return JSONResponse({"id": job.id, "kind": job.kind, "status": "queued"}, status_code=202, headers=headers)

    async def status(request: Request) -> Response:
        if (refused := denied(request)) is not None:
            return refused
        job = store.jobs.get(request.path_params["job_id"])
        if job is None:
            return JSONResponse({"message": "no such job"}, status_code=404)
        job.polls += 1
        store.changed()
        if job.status == "cancelled":
            return JSONResponse({"id": job.id, "status": "cancelled"})
        pad, _, echoed = job.kind.partition(":")  # "<n>:state" / "<n>:failure": the key after n characters
        if echoed == "state":
            text = "r" * int(pad) + API_KEY + " and on"
            return JSONResponse({"id": job.id, "status": text}, status_code=202, headers={"Retry-After": "0"})
        if echoed == "failure" and job.polls >= job.steps:
            return JSONResponse({"id": job.id, "status": "failed", "error": "e" * int(pad) + API_KEY + " and on"})
        if job.kind == "hang" or job.polls < job.steps:
            job.status = "running"
            return JSONResponse({"id": job.id, "status": "running"}, headers={"Retry-After": store.retry_after})
        report = f"/v1/reports/{job.id.removeprefix('job-')}"
        if job.kind == "fail":
            job.status = "failed"
            return JSONResponse({"id": job.id, "status": "failed", "error": "disk full"})
        job.status = "succeeded"
        if job.kind == "redirect":
            return Response(status_code=303, headers={"Location": report})
        if job.kind == "echo":
            return JSONResponse({"id": job.id, "status": "succeeded", "seen_key": request.headers.get("x-api-key")})
        if job.kind == "huge":
            return JSONResponse({"id": job.id, "status": "succeeded", "blob": "x" * HUGE_BYTES})
        if job.kind in ("inline", "operation-location"):
            return JSONResponse({"id": job.id, "kind": job.kind, "status": "succeeded"})
        return JSONResponse({"id": job.id, "status": "succeeded", "resourceLocation": report})

    async def report(request: Request) -> Response:
        if (refused := denied(request)) is not None:
            return refused
        number = int(request.path_params["report_id"])
        lines = [f"job-{number} line {i} " + "." * 40 for i in range(1, min(number, 5000))] or [f"job-{number} done"]
        return JSONResponse({"id": number, "lines": lines, "seen_key": request.headers.get("x-api-key")})

    async def job(request: Request) -> Response:
        if (refused := denied(request)) is not None:
            return refused
        found = store.jobs.get(request.path_params["job_id"])
        if found is None:
            return JSONResponse({"message": "no such job"}, status_code=404)
        if request.method == "DELETE":
            found.status = "cancelled"
            store.cancelled.append(found.id)
            store.changed()
            return Response(status_code=204)
        return JSONResponse({"id": found.id, "kind": found.kind, "status": found.status, "polls": found.polls})

    async def jobs(request: Request) -> Response:
        if (refused := denied(request)) is not None:
            return refused
        listed: list[dict[str, Any]] = [{"id": j.id, "kind": j.kind, "status": j.status} for j in store.jobs.values()]
        return JSONResponse(listed[::-1])

    async def export(request: Request) -> Response:
        if (refused := denied(request)) is not None:
            return refused
        return JSONResponse({"progress": {"phase": "queued"}}, status_code=202, headers={"Location": "/v1/exports/1"})

    exports_polled = itertools.count(1)

    async def export_status(request: Request) -> Response:
        if (refused := denied(request)) is not None:
            return refused
        if next(exports_polled) < 2:
            return JSONResponse({"progress": {"phase": "writing"}}, headers={"Retry-After": "0"})
        return JSONResponse({"progress": {"phase": "written"}, "file": {"name": "export.csv", "rows": 3}})

    return Starlette(
        routes=[
            Route("/v1/jobs", jobs, methods=["GET"]),
            Route("/v1/jobs", start, methods=["POST"]),
            Route("/v1/jobs/{job_id}/status", status, methods=["GET"]),
            Route("/v1/jobs/{job_id}", job, methods=["GET", "DELETE"]),
            Route("/v1/reports/{report_id:int}", report, methods=["GET"]),
            Route("/v1/exports", export, methods=["POST"]),
            Route("/v1/exports/1", export_status, methods=["GET"]),
        ]
    )


@asynccontextmanager
async def serve_jobs() -> AsyncIterator[JobStore]:
    """The jobs API under uvicorn on 127.0.0.1 in this event loop; ``store.port`` is its port."""
    import uvicorn

    store = JobStore(port=free_port())
    config = uvicorn.Config(create_app(store), host="127.0.0.1", port=store.port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        try:
            with anyio.fail_after(15):
                while not server.started:
                    await anyio.sleep(0.01)
            yield store
        finally:
            server.should_exit = True
