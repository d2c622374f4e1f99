"""The loopback upstream of the task suite: GitHub's and the petstore's routes the tasks use, over
the worlds of :mod:`bench.tasks.github_world` and :mod:`bench.tasks.petstore_world`.

A plain ASGI app, served by uvicorn on 127.0.0.1 (an ephemeral port) in a thread of the bench
process (:func:`serving`). GitHub's routes are at the root, the petstore's under ``/v2`` (its
spec's server path). Filters, sorting and paging follow GitHub's documented defaults (issues and
pulls: ``state=open``, newest ``created`` first, 30 a page; an organisation's repositories:
``created``, newest first). Each request's busy interval (``time.monotonic``, system-wide on
Linux, so comparable with another process's) is kept in :attr:`Upstream.intervals`: the bench
subtracts it from a program's time to get the program's own overhead.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, unquote

from bench.tasks import asana_world
from bench.tasks.asana_world import AsanaWorld
from bench.tasks.github_world import GitHubWorld
from bench.tasks.petstore_world import PetstoreWorld

Handler = Callable[..., tuple[int, Any]]
NOT_FOUND = {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}


def _page(items: list[Any], query: dict[str, list[str]], default: int = 30) -> list[Any]:
    per_page = min(int(_one(query, "per_page", str(default))), 100)
    page = max(int(_one(query, "page", "1")), 1)
    return items[(page - 1) * per_page : page * per_page]


def _one(query: dict[str, list[str]], name: str, default: str) -> str:
    values = query.get(name)
    return values[0] if values else default


def _many(query: dict[str, list[str]], name: str) -> list[str]:
    return [part for value in query.get(name, []) for part in value.split(",") if part]


def _sorted(items: list[dict[str, Any]], query: dict[str, list[str]], keys: dict[str, str]) -> list[dict[str, Any]]:
    sort = _one(query, "sort", "created")
    direction = _one(query, "direction", "asc" if sort == "full_name" else "desc")
    key = keys.get(sort, "created_at")
    return sorted(items, key=lambda item: item.get(key) or 0, reverse=direction == "desc")


def union_seconds(intervals: list[tuple[float, float]], start: float, end: float) -> float:
    """How long, between ``start`` and ``end``, at least one interval was open."""
    clipped = sorted((max(a, start), min(b, end)) for a, b in intervals if b > start and a < end)
    total, cursor = 0.0, start
    for a, b in clipped:
        a = max(a, cursor)
        if b > a:
            total += b - a
            cursor = b
    return total


class Upstream:
    """The ASGI app; its worlds are replaced by :meth:`reset` between runs."""

    def __init__(
        self,
        github: Callable[[], GitHubWorld] | None,
        petstore: Callable[[], PetstoreWorld] | None,
        asana: Callable[[], AsanaWorld] | None = None,
    ) -> None:
        self._make_github, self._make_petstore, self._make_asana = github, petstore, asana
        self.github = github() if github else GitHubWorld()
        self.petstore = petstore() if petstore else PetstoreWorld()
        self.asana = asana() if asana else AsanaWorld()
        self.intervals: list[tuple[float, float]] = []
        self.requests: list[str] = []
        self._lock = threading.Lock()

    def reset(self) -> None:
        if self._make_github:
            self.github = self._make_github()
        if self._make_petstore:
            self.petstore = self._make_petstore()
        if self._make_asana:
            self.asana = self._make_asana()
        with self._lock:
            self.intervals.clear()
            self.requests.clear()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        started = time.monotonic()
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        method, path = scope["method"], unquote(scope["path"])
        query = parse_qs(scope.get("query_string", b"").decode(), keep_blank_values=True)
        try:
            status, payload = self.handle(method, path, query, body, dict(scope["headers"]))
        except (ValueError, KeyError) as exc:
            status, payload = 422, {"message": f"Validation Failed: {exc}"}
        data = b"" if payload is None else json.dumps(payload, separators=(",", ":")).encode()
        headers = [(b"content-type", b"application/json; charset=utf-8")] if data else []
        with self._lock:  # before the answer leaves: the client may read it before this thread resumes
            self.intervals.append((started, time.monotonic()))
            self.requests.append(f"{method} {path}")
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": data})

    def handle(
        self, method: str, path: str, query: dict[str, list[str]], body: bytes, headers: dict[bytes, bytes]
    ) -> tuple[int, Any]:
        parts = [p for p in path.split("/") if p]
        if parts[:1] == ["v2"]:
            return self._petstore(method, parts[1:], query, body, headers)
        if parts[:1] == ["asana"]:
            return self._asana(method, parts[1:], query, body)
        return self._github(method, parts, query, body)

    # ---------------------------------------------------------------------------- GitHub

    def _github(self, method: str, parts: list[str], query: dict[str, list[str]], body: bytes) -> tuple[int, Any]:
        world = self.github
        match method, parts:
            case "GET", ["orgs", org, "repos"]:
                repos = [r for r in world.repos if r["owner"]["login"] == org]
                keys = {
                    "created": "created_at",
                    "updated": "updated_at",
                    "pushed": "pushed_at",
                    "full_name": "full_name",
                }
                return 200, _page(_sorted(repos, query, keys), query)
            case "GET", ["users", login] if login in world.users:
                return 200, world.users[login]
            case "GET", ["repos", owner, repo, "issues"] if f"{owner}/{repo}" in world.issues:
                return 200, self._issues(world.issues[f"{owner}/{repo}"], query)
            case "GET", ["repos", owner, repo, "pulls"] if f"{owner}/{repo}" in world.pulls:
                pulls = world.pulls[f"{owner}/{repo}"]
                state = _one(query, "state", "open")
                chosen = [p for p in pulls if state == "all" or p["state"] == state]
                keys = {"created": "created_at", "updated": "updated_at"}
                return 200, _page(_sorted(chosen, query, keys), query)
            case "POST", ["repos", owner, repo, "issues", number, "labels"] if f"{owner}/{repo}" in world.issues:
                issue = next((i for i in world.issues[f"{owner}/{repo}"] if str(i["number"]) == number), None)
                if issue is None:
                    return 404, NOT_FOUND
                given = json.loads(body or b"[]")
                names = given.get("labels", []) if isinstance(given, dict) else given
                names = [n if isinstance(n, str) else n["name"] for n in names]
                have = [label["name"] for label in issue["labels"]]
                issue["labels"] += [world.label(f"{owner}/{repo}", n) for n in names if n not in have]
                issue["updated_at"] = "2026-11-30T12:00:00Z"
                return 200, issue["labels"]
        return 404, NOT_FOUND

    @staticmethod
    def _issues(issues: list[dict[str, Any]], query: dict[str, list[str]]) -> list[dict[str, Any]]:
        state = _one(query, "state", "open")
        chosen = [i for i in issues if state == "all" or i["state"] == state]
        wanted = set(_many(query, "labels"))
        if wanted:
            chosen = [i for i in chosen if wanted <= {label["name"] for label in i["labels"]}]
        if creator := _one(query, "creator", ""):
            chosen = [i for i in chosen if i["user"]["login"] == creator]
        if since := _one(query, "since", ""):
            chosen = [i for i in chosen if i["updated_at"] >= since]
        keys = {"created": "created_at", "updated": "updated_at", "comments": "comments"}
        return _page(_sorted(chosen, query, keys), query)

    # ---------------------------------------------------------------------------- Asana

    def _asana(self, method: str, parts: list[str], query: dict[str, list[str]], body: bytes) -> tuple[int, Any]:
        world = self.asana
        path = "/" + "/".join(parts)
        opt = [f for value in query.get("opt_fields", []) for f in value.split(",") if f]
        ws = asana_world.WORKSPACE["gid"]
        match method, parts:
            case "GET", ["workspaces"]:
                return asana_world.page([asana_world.WORKSPACE], query, path)
            case "GET", ["workspaces", gid, "projects"] if gid == ws:
                projects = list(world.projects.values())
                if archived := _one(query, "archived", ""):
                    projects = [p for p in projects if str(p["archived"]).lower() == archived]
                return asana_world.page(projects, query, path)
            case "GET", ["workspaces", gid, "teams"] if gid == ws:
                return asana_world.page(list(world.teams.values()), query, path)
            case "GET", ["teams", gid, "users"] if gid in world.teams:
                users = sorted((world.users[u] for u in world.teams[gid]["members"]), key=lambda u: u["name"])
                return asana_world.page(users, query, path)
            case "GET", ["projects", gid, "tasks"] if gid in world.projects:
                tasks = world.project_tasks(gid)
                if since := _one(query, "completed_since", ""):
                    tasks = [t for t in tasks if not t["completed"] or (since != "now" and t["completed_at"] >= since)]
                return asana_world.page(tasks, query, path)
            case "GET", ["projects", gid, "sections"] if gid in world.projects:
                return asana_world.page([s for s in world.sections.values() if s["project"]["gid"] == gid], query, path)
            case "GET", ["sections", gid, "tasks"] if gid in world.sections:
                return asana_world.page(world.section_tasks(gid), query, path)
            case "GET", ["tasks", gid, "stories"] if gid in world.tasks:
                return asana_world.page(world.stories[gid], query, path)
            case "GET", ["tasks", gid] if gid in world.tasks:
                return 200, {"data": asana_world.select(world.tasks[gid], opt or list(world.tasks[gid]))}
            case "PUT", ["tasks", gid] if gid in world.tasks:
                changes = json.loads(body or b"{}").get("data") or {}
                task = world.tasks[gid]
                for key in ("name", "completed", "due_on", "notes"):
                    if key in changes:
                        task[key] = changes[key]
                if changes.get("completed"):
                    task["completed_at"] = "2026-12-01T12:00:00.000Z"
                task["modified_at"] = "2026-12-01T12:00:00.000Z"
                return 200, {"data": asana_world.select(task, opt or list(task))}
            case "POST", ["tasks", gid, "stories"] if gid in world.tasks:
                given = json.loads(body or b"{}").get("data") or {}
                if not isinstance(given.get("text"), str):
                    return 400, {"errors": [{"message": "text: Missing input"}]}
                story = {"gid": world.gid(), "resource_type": "story", "resource_subtype": "comment_added",
                         "type": "comment", "text": given["text"], "created_at": "2026-12-01T12:00:00.000Z",
                         "created_by": asana_world.compact(world.user_by_login("mona"))}  # fmt: skip
                world.stories[gid].append(story)
                return 201, {"data": story}
        return 404, {"errors": [{"message": f"{path}: Not a recognized ID or route."}]}

    # ---------------------------------------------------------------------------- petstore

    def _petstore(
        self, method: str, parts: list[str], query: dict[str, list[str]], body: bytes, headers: dict[bytes, bytes]
    ) -> tuple[int, Any]:
        world = self.petstore
        match method, parts:
            case "GET", ["pet", "findByStatus"]:
                statuses = set(_many(query, "status")) or {"available"}
                return 200, [p for p in world.pets.values() if p["status"] in statuses]
            case "GET", ["pet", "findByTags"]:
                tags = set(_many(query, "tags"))
                return 200, [p for p in world.pets.values() if tags & {t["name"] for t in p["tags"]}]
            case "GET", ["pet", pet_id] if pet_id.isdigit():
                pet = world.pets.get(int(pet_id))
                return (200, pet) if pet else (404, None)
            case "POST", ["pet", pet_id] if pet_id.isdigit():
                pet = world.pets.get(int(pet_id))
                if pet is None:
                    return 404, None
                form = parse_qs(body.decode())
                if b"json" in headers.get(b"content-type", b""):
                    form = {k: [v] for k, v in json.loads(body or b"{}").items()}
                for key in ("name", "status"):
                    if key in form:
                        pet[key] = form[key][0]
                return 200, pet
            case "PUT", ["pet"]:
                given = json.loads(body)
                if int(given.get("id", 0)) not in world.pets:
                    return 404, None
                world.pets[int(given["id"])].update(given)
                return 200, world.pets[int(given["id"])]
            case "GET", ["store", "order", order_id] if order_id.isdigit():
                order = world.orders.get(int(order_id))
                return (200, order) if order else (404, None)
            case "GET", ["store", "inventory"]:
                counts: dict[str, int] = {}
                for pet in world.pets.values():
                    counts[pet["status"]] = counts.get(pet["status"], 0) + 1
                return 200, counts
        return 404, None


@contextlib.contextmanager
def serving(app: Upstream, timeout: float = 10) -> Iterator[str]:
    """``app`` under uvicorn on 127.0.0.1 (an ephemeral port), in a thread; yields its base URL."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    # Keep-alive far beyond uvicorn's 5 s: a client whose pooled connection the server closed while
    # idle gets a ReadError on reuse (FastMCP's programs on GitHub pause that long between calls).
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False, timeout_keep_alive=600)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="tasks-upstream")
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the task suite's upstream did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout)
        sock.close()
