"""The GitHub data the task suite's upstream serves: an organisation, its repositories, issues,
pull requests, labels and users, shaped exactly like GitHub's answers.

Every object starts from the spec's own example of its kind (``issue-items``,
``pull-request-simple-items``, ``minimal-repository-items``, ``public-user-default-response``,
``label-items``), deep-copied with its URLs, ids, names, dates and labels rewritten for the
object it becomes; required nullable members the example leaves out are added as ``null``
(:func:`bench.github_repo._complete`), and every object built is checked against its response
schema (OpenAPI 3.0 semantics), so a result the bridge returns is one GitHub could have sent.
The data is fixed (a seeded ``random.Random``): the same world on every run.
"""

from __future__ import annotations

import copy
import functools
import json
import random
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.github_repo import _complete

SEED = 20261201
ORG = "octo-org"
PAGED_REPO, PAGED_ISSUES = "docs", 230
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

USERS = {
    "octocat": "The Octocat",
    "hubot": "Hubot",
    "monalisa": "Mona Lisa Octocat",
    "mojombo": "Tom Preston-Werner",
    "defunkt": "Chris Wanstrath",
    "pjhyett": "PJ Hyett",
    "wycats": "Yehuda Katz",
    "ezmobius": "Ezra Zygmuntowicz",
}
REPOS = [
    ("hello-world", "My first repository on GitHub.", "Python"),
    ("octo-api", "The public REST API of Octo.", "Go"),
    ("docs", "Documentation site, built with Docusaurus.", "MDX"),
    ("infra", "Terraform for every environment.", "HCL"),
    ("website", "octo.example: the marketing site.", "TypeScript"),
    ("cli", "The octo command-line tool.", "Rust"),
    ("sdk-python", "Python client for the Octo API.", "Python"),
    ("sdk-js", "JavaScript client for the Octo API.", "TypeScript"),
    ("design-system", "Shared UI components and tokens.", "TypeScript"),
    ("mobile-app", "iOS and Android app.", "Kotlin"),
    ("data-pipeline", "Nightly ETL jobs.", "Python"),
    ("security-policies", "SECURITY.md and shared policies.", None),
]
LABELS = {
    "bug": ("d73a4a", "Something isn't working"),
    "enhancement": ("a2eeef", "New feature or request"),
    "documentation": ("0075ca", "Improvements or additions to documentation"),
    "good first issue": ("7057ff", "Good for newcomers"),
    "help wanted": ("008672", "Extra attention is needed"),
    "question": ("d876e3", "Further information is requested"),
    "triage": ("fbca04", "Needs a first look"),
}
ISSUE_TITLES = [
    "Crash when the config file is empty",
    "Support pagination in the search endpoint",
    "Typo in the README's install section",
    "Add a --json flag to the list command",
    "Timeout errors behind a corporate proxy",
    "Document the rate limits",
    "Login fails with SSO enabled",
    "Dark mode for the settings page",
    "Memory leak in the websocket client",
    "Upgrade to Python 3.13",
    "Flaky test: test_upload_resume",
    "Wrong timezone in exported CSV",
    "Deprecate the v1 endpoints",
    "Add retries with backoff",
    "Broken link in CONTRIBUTING.md",
    "Windows paths are not normalised",
    "Expose the request id in errors",
    "Add type hints to the public API",
    "Cache the token between runs",
    "The progress bar overflows on narrow terminals",
    "Support proxies from the environment",
    "Better error when the API key is missing",
    "Large uploads fail at 2 GB",
    "Allow filtering by label",
    "Race condition when two jobs start together",
    "Localise the date format",
    "The changelog misses 2.3.1",
    "Add an example for webhooks",
    "HTTP/2 support",
    "Sort order of the list command is unstable",
]
PR_TITLES = [
    "Fix the retry loop",
    "Bump dependencies",
    "Add CONTRIBUTING guide",
    "Refactor the config loader",
    "Speed up the test suite",
    "Support ARM64 builds",
    "Handle empty responses",
    "Add the status command",
]


def _num(*parts: object) -> int:
    """A stable number for an object (``hash`` of a string changes between processes)."""
    return zlib.crc32("/".join(map(str, parts)).encode())


def _ts(hours_ago: float) -> str:
    return (NOW - timedelta(hours=hours_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


@functools.cache
def load_spec(path: str) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return parsed


def _example(spec: dict[str, Any], name: str) -> Any:
    return copy.deepcopy(spec["components"]["examples"][name]["value"])


def _rewrite(value: Any, replacements: list[tuple[str, str]]) -> Any:
    text = json.dumps(value)
    for old, new in replacements:
        text = text.replace(old, new)
    return json.loads(text)


def schema_errors(spec: dict[str, Any], schema_name: str, value: Any) -> list[str]:
    """Where ``value`` breaks ``components/schemas/<schema_name>`` (null-completed first, in place)."""
    from openapi_schema_validator import OAS30Validator

    schema = {"$ref": f"#/components/schemas/{schema_name}"}
    _complete(spec, schema, value)
    validator = OAS30Validator({**schema, "components": spec["components"]})
    found = validator.iter_errors(value)
    return sorted(f"{schema_name} /" + "/".join(str(p) for p in e.absolute_path) + ": " + e.message for e in found)


@dataclass
class GitHubWorld:
    """What the upstream serves; mutable (``issues/add-labels`` adds labels)."""

    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    repos: list[dict[str, Any]] = field(default_factory=list)  # the org's, minimal-repository
    issues: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # full_name -> issues
    pulls: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # full_name -> pulls
    label_template: dict[str, Any] = field(default_factory=dict)
    simple_user_template: dict[str, Any] = field(default_factory=dict)

    def label(self, full_name: str, name: str) -> dict[str, Any]:
        color, description = LABELS.get(name, ("ededed", None))
        label = copy.deepcopy(self.label_template)
        label.update(
            id=_num(full_name, name) % 10**9,
            node_id=f"LA_{name.replace(' ', '_')}",
            url=f"https://api.github.com/repos/{full_name}/labels/{name.replace(' ', '%20')}",
            name=name,
            color=color,
            description=description,
            default=name in ("bug", "enhancement", "documentation"),
        )
        return label

    def simple_user(self, login: str) -> dict[str, Any]:
        user = _rewrite(self.simple_user_template, [("octocat", login)])
        user["id"] = self.users[login]["id"]
        user["node_id"] = self.users[login]["node_id"]
        return dict(user)


def _users(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    template = _example(spec, "public-user-default-response")
    users = {}
    for i, (login, name) in enumerate(USERS.items()):
        user = _rewrite(template, [("octocat", login)])
        user.update(
            id=583231 + i * 7919,
            node_id=f"MDQ6VXNlcj{i:05d}",
            name=name,
            company="@octo-org" if i % 2 else "GitHub",
            email=f"{login}@example.com",
            bio=None,
            twitter_username=None,
            public_repos=3 + i * 4,
            followers=20 + i * 137,
            following=i * 3,
            created_at=_ts(24 * 365 * (10 - i)),
            updated_at=_ts(24 * (30 - i)),
        )
        users[login] = user
    return users


def _repo(spec: dict[str, Any], world: GitHubWorld, i: int, rng: random.Random) -> dict[str, Any]:
    name, description, language = REPOS[i]
    template = _example(spec, "minimal-repository-items")[0]
    org_user = world.simple_user("octocat")
    repo = _rewrite(template, [("octocat/Hello-World", f"{ORG}/{name}"), ("Hello-World", name)])
    created = 24 * (900 - 60 * i)
    repo.update(
        id=7_000_000 + i * 1031,
        node_id=f"R_kgDO{i:06d}",
        name=name,
        full_name=f"{ORG}/{name}",
        description=description,
        language=language,
        owner={**_rewrite(org_user, [("octocat", ORG)]), "type": "Organization", "id": 9919, "login": ORG},
        stargazers_count=rng.randint(3, 4000),
        watchers_count=rng.randint(3, 300),
        forks_count=rng.randint(0, 400),
        open_issues_count=0,
        created_at=_ts(created),
        updated_at=_ts(rng.uniform(1, 500)),
        pushed_at=_ts(rng.uniform(1, 500)),
        default_branch="main",
        topics=["octo"],
    )
    return dict(repo)


def _issue(spec: dict[str, Any], world: GitHubWorld, full_name: str, number: int, rng: random.Random) -> dict[str, Any]:
    template = _example(spec, "issue-items")[0]
    issue = _rewrite(
        template,
        [("octocat/Hello-World", full_name), ("/issues/1347", f"/issues/{number}"), ("/pull/1347", f"/pull/{number}")],
    )
    author = rng.choice(list(USERS))
    state = "open" if rng.random() < 0.7 else "closed"
    labels = rng.sample(sorted(set(LABELS) - {"triage"}), rng.choice([0, 0, 1, 1, 2, 3]))
    created = rng.uniform(200, 4000)
    issue.update(
        id=2_000_000_000 + _num(full_name, number) % 10**8,
        node_id=f"I_kwDO{number:08d}",
        number=number,
        title=ISSUE_TITLES[(number - 1) % len(ISSUE_TITLES)],
        body=f"Steps to reproduce and details for #{number}.",
        state=state,
        user=world.simple_user(author),
        labels=[world.label(full_name, name) for name in labels],
        assignee=None,
        assignees=[],
        milestone=None,
        comments=rng.randint(0, 25),
        created_at=_ts(created),
        updated_at=_ts(rng.uniform(1, created)),
        closed_at=_ts(rng.uniform(1, 100)) if state == "closed" else None,
        closed_by=world.simple_user("hubot") if state == "closed" else None,
        state_reason="completed" if state == "closed" else None,
        author_association="MEMBER",
    )
    issue.pop("pull_request", None)
    if issue["state_reason"] is None:
        del issue["state_reason"]  # nullable, but its enum lacks null: the 3.0 validator refuses null
    return dict(issue)


def _pull(spec: dict[str, Any], world: GitHubWorld, full_name: str, number: int, rng: random.Random) -> dict[str, Any]:
    template = _example(spec, "pull-request-simple-items")[0]
    pull = _rewrite(
        template,
        [
            ("octocat/Hello-World", full_name),
            ("/pulls/1347", f"/pulls/{number}"),
            ("/pull/1347", f"/pull/{number}"),
            ("/issues/1347", f"/issues/{number}"),
        ],
    )
    author = rng.choice(list(USERS))
    state = "open" if rng.random() < 0.65 else "closed"
    created = rng.uniform(10, 2000)
    pull.update(
        id=1_500_000_000 + _num(full_name, number) % 10**8,
        node_id=f"PR_kwDO{number:08d}",
        number=number,
        state=state,
        locked=False,
        title=PR_TITLES[number % len(PR_TITLES)],
        user=world.simple_user(author),
        body="This pull request changes a few things; see the commits.",
        labels=[],
        milestone=None,
        created_at=_ts(created),
        updated_at=_ts(rng.uniform(1, created)),
        closed_at=_ts(1) if state == "closed" else None,
        merged_at=None,
        assignee=None,
        assignees=[],
        requested_reviewers=[world.simple_user(rng.choice(list(USERS)))],
        requested_teams=[],
        draft=rng.random() < 0.2,
        author_association="CONTRIBUTOR",
    )
    return dict(pull)


def build(spec_path: Path) -> GitHubWorld:
    """The world, every object checked against its schema (raises ``ValueError`` otherwise)."""
    spec = load_spec(str(spec_path))
    rng = random.Random(SEED)
    world = GitHubWorld()
    world.label_template = _example(spec, "label-items")[0]
    world.simple_user_template = _example(spec, "issue-items")[0]["user"]
    world.users = _users(spec)
    world.repos = [_repo(spec, world, i, rng) for i in range(len(REPOS))]
    number = 0
    for repo in world.repos:
        full_name = repo["full_name"]
        count = 36 if repo["name"] == "hello-world" else rng.randint(0, 4)
        world.issues[full_name] = [_issue(spec, world, full_name, n, rng) for n in range(1, count + 1)]
        number = count
        pulls = [_pull(spec, world, full_name, number + k, rng) for k in range(1, rng.randint(0, 6) + 1)]
        world.pulls[full_name] = pulls
        repo["open_issues_count"] = sum(i["state"] == "open" for i in world.issues[full_name]) + sum(
            p["state"] == "open" for p in pulls
        )
    # A repository with more open issues than one page holds (the paging task), drawn apart so the
    # rest of the world is what it was before it.
    paged, more = random.Random(SEED + 1), f"{ORG}/{PAGED_REPO}"
    world.issues[more] += [_issue(spec, world, more, 1000 + n, paged) for n in range(PAGED_ISSUES)]
    docs = next(r for r in world.repos if r["full_name"] == more)
    docs["open_issues_count"] = sum(i["state"] == "open" for i in world.issues[more]) + sum(
        p["state"] == "open" for p in world.pulls[more]
    )
    errors = [e for u in world.users.values() for e in schema_errors(spec, "public-user", u)]
    errors += [e for r in world.repos for e in schema_errors(spec, "minimal-repository", r)]
    errors += [e for items in world.issues.values() for i in items for e in schema_errors(spec, "issue", i)]
    errors += [
        e for items in world.pulls.values() for p in items for e in schema_errors(spec, "pull-request-simple", p)
    ]
    errors += schema_errors(spec, "label", world.label(f"{ORG}/hello-world", "triage"))
    if errors:
        raise ValueError(f"the GitHub world breaks the spec's schemas: {errors[:8]}")
    return world
