"""The GitHub tasks (``@octokit/openapi``'s api.github.com.json, 1,223 operations).

Each plan is what a capable agent does with the operations' own tools: the fewest turns, GitHub's
filters and sorting where they exist, and the ``fields`` argument to keep only what the task
needs (as the server's instructions suggest; without it a page of pull requests is cut at the
result budget). Answers are plain JSON values, compared with ``==``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from bench.tasks.github_world import PAGED_REPO
from bench.tasks.task import Caller, Search, Task
from bench.tasks.upstream import Upstream

OWNER, REPO = "octo-org", "hello-world"
FULL = f"{OWNER}/{REPO}"
STALE_REPO = "infra"
STALE_BEFORE = "2026-11-23T12:00:00Z"

ISSUES = Search("list repository issues", "issues_list-for-repo")
ORG_REPOS = Search(
    "list organization repositories", "repos_list-for-org", 1, "lists repositories for the specified organization", 6
)
PULLS = Search("list pull requests", "pulls_list", 1, "lists pull requests in a specified repository", 15)
USER = Search(
    "get a user by username",
    "users_get-by-username",
    1,
    "provides publicly available information about someone with a GitHub account",
    1,
)
ADD_LABELS = Search("add labels to an issue", "issues_add-labels", 1, None, 2)


def _labels(issue: dict[str, Any]) -> list[str]:
    return sorted(label["name"] if isinstance(label, dict) else label for label in issue.get("labels") or [])


def items(value: Any) -> list[Any]:
    """A listing's items as the model reads them. With ``fields``, an empty listing comes back as
    ``{"_truncated": ["fields: nothing matched; ..."]}`` rather than ``[]`` (see bench/TASKS.md)."""
    if isinstance(value, list):
        return value
    return list(value.get("result", [])) if isinstance(value, dict) else []


def _open_issues(up: Upstream) -> list[dict[str, Any]]:
    return [i for i in up.github.issues[FULL] if i["state"] == "open"]


def _org_repos(up: Upstream) -> list[dict[str, Any]]:
    return sorted(up.github.repos, key=lambda r: r["created_at"], reverse=True)


# ---------------------------------------------------------------------------------- recent issues


def recent_expected(up: Upstream) -> Any:
    issues = sorted(_open_issues(up), key=lambda i: i["updated_at"], reverse=True)[:5]
    return [{"title": i["title"], "labels": _labels(i)} for i in issues]


async def recent_plan(call: Caller) -> Any:
    args = {"owner": OWNER, "repo": REPO, "sort": "updated", "direction": "desc", "per_page": 5}
    issues = items(await call.call("issues_list-for-repo", {**args, "fields": "title,labels.name"}))
    return [{"title": i["title"], "labels": _labels(i)} for i in issues]


RECENT = Task(
    "recent-issues",
    "github",
    f"Titles and labels of the 5 most recently updated open issues of {FULL}.",
    recent_expected,
    recent_plan,
    (ISSUES,),
    f"""issues = await issues_list_for_repo(owner='{OWNER}', repo='{REPO}', state='open', sort='updated',
                                   direction='desc', per_page=5)
[{{'title': i['title'], 'labels': sorted(l if isinstance(l, str) else l['name'] for l in i['labels'])}}
 for i in issues]
""",
    f"""r = await call_tool('{{issues_list-for-repo}}', {{'owner': '{OWNER}', 'repo': '{REPO}', 'state': 'open',
    'sort': 'updated', 'direction': 'desc', 'per_page': 5}})
return [{{'title': i['title'], 'labels': sorted(l if isinstance(l, str) else l['name'] for l in i['labels'])}}
        for i in r['result']]
""",
    read_answer=lambda answer: [{"title": i["title"], "labels": i.get("labels", [])} for i in answer],
)

# ------------------------------------------------------------------------------- org open PRs


def org_prs_expected(up: Upstream) -> Any:
    names = [r["name"] for r in _org_repos(up)[:10]]
    return {n: sum(p["state"] == "open" for p in up.github.pulls[f"{OWNER}/{n}"]) for n in names}


async def org_prs_plan(call: Caller) -> Any:
    repos = items(await call.call("repos_list-for-org", {"org": OWNER, "per_page": 10, "fields": "name"}))
    names = [r["name"] for r in repos]
    args = {"owner": OWNER, "state": "open", "per_page": 100, "fields": "number"}
    pulls = await call.turn(*(("pulls_list", {**args, "repo": n}) for n in names))
    return {n: len(items(p)) for n, p in zip(names, pulls, strict=True)}


ORG_PRS = Task(
    "org-open-prs",
    "github",
    f"For each of {OWNER}'s first 10 repositories, its open pull-request count.",
    org_prs_expected,
    org_prs_plan,
    (ORG_REPOS, PULLS),
    f"""import asyncio
repos = await repos_list_for_org(org='{OWNER}', per_page=10)
pulls = await asyncio.gather(*[pulls_list(owner='{OWNER}', repo=r['name'], state='open', per_page=100)
                               for r in repos])
{{r['name']: len(p) for r, p in zip(repos, pulls)}}
""",
    f"""import asyncio
repos = (await call_tool('{{repos_list-for-org}}', {{'org': '{OWNER}', 'per_page': 10}}))['result']
pulls = await asyncio.gather(*[call_tool('{{pulls_list}}', {{'owner': '{OWNER}', 'repo': r['name'],
                                                          'state': 'open', 'per_page': 100}}) for r in repos])
return {{r['name']: len(p['result']) for r, p in zip(repos, pulls)}}
""",
)

# ------------------------------------------------------------------------------- top author


def top_author_expected(up: Upstream) -> Any:
    counts = Counter(i["user"]["login"] for i in _open_issues(up))
    login, n = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return {"login": login, "open_issues": n}


async def top_author_plan(call: Caller) -> Any:
    args = {"owner": OWNER, "repo": REPO, "state": "open", "per_page": 100, "fields": "user.login"}
    issues = items(await call.call("issues_list-for-repo", args))
    counts = Counter(i["user"]["login"] for i in issues)
    login, n = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return {"login": login, "open_issues": n}


TOP_AUTHOR = Task(
    "top-issue-author",
    "github",
    f"Who opened the most open issues of {FULL}, and how many (ties: the first login alphabetically)?",
    top_author_expected,
    top_author_plan,
    (ISSUES,),
    f"""issues = await issues_list_for_repo(owner='{OWNER}', repo='{REPO}', state='open', per_page=100)
counts = {{}}
for i in issues:
    login = i['user']['login'] if i['user'] else ''
    counts[login] = counts.get(login, 0) + 1
best = min(counts, key=lambda k: (-counts[k], k))
{{'login': best, 'open_issues': counts[best]}}
""",
    f"""r = await call_tool('{{issues_list-for-repo}}', {{'owner': '{OWNER}', 'repo': '{REPO}', 'state': 'open',
                                                 'per_page': 100}})
counts = {{}}
for i in r['result']:
    counts[i['user']['login']] = counts.get(i['user']['login'], 0) + 1
best = min(counts, key=lambda k: (-counts[k], k))
return {{'login': best, 'open_issues': counts[best]}}
""",
)

# ------------------------------------------------------------------------------- author names


def names_expected(up: Upstream) -> Any:
    issues = sorted(_open_issues(up), key=lambda i: i["created_at"])[:3]
    return [{"number": i["number"], "author": up.github.users[i["user"]["login"]]["name"]} for i in issues]


async def names_plan(call: Caller) -> Any:
    args = {"owner": OWNER, "repo": REPO, "sort": "created", "direction": "asc", "per_page": 3}
    issues = items(await call.call("issues_list-for-repo", {**args, "fields": "number,user.login"}))
    logins = list(dict.fromkeys(i["user"]["login"] for i in issues))
    users = await call.turn(*(("users_get-by-username", {"username": u, "fields": "name"}) for u in logins))
    name = {login: user["name"] for login, user in zip(logins, users, strict=True)}
    return [{"number": i["number"], "author": name[i["user"]["login"]]} for i in issues]


NAMES = Task(
    "oldest-issue-authors",
    "github",
    f"The full names of the people who opened the 3 oldest open issues of {FULL}.",
    names_expected,
    names_plan,
    (ISSUES, USER),
    f"""import asyncio
issues = await issues_list_for_repo(owner='{OWNER}', repo='{REPO}', sort='created', direction='asc', per_page=3)
logins = [i['user']['login'] for i in issues if i['user']]
users = await asyncio.gather(*[users_get_by_username(username=u) for u in logins])
[{{'number': i['number'], 'author': u['name']}} for i, u in zip(issues, users)]
""",
    f"""import asyncio
r = await call_tool('{{issues_list-for-repo}}', {{'owner': '{OWNER}', 'repo': '{REPO}', 'sort': 'created',
                                             'direction': 'asc', 'per_page': 3}})
users = await asyncio.gather(*[call_tool('{{users_get-by-username}}', {{'username': i['user']['login']}})
                               for i in r['result']])
return [{{'number': i['number'], 'author': u['result']['name']}} for i, u in zip(r['result'], users)]
""",
)

# ------------------------------------------------------------------------------- label unlabelled


def label_expected(up: Upstream) -> Any:
    return sorted(i["number"] for i in _open_issues(up) if not i["labels"])


def label_verify(up: Upstream) -> list[str]:
    return [f"#{i['number']} has no label" for i in _open_issues(up) if not i["labels"]]


async def label_plan(call: Caller) -> Any:
    args = {"owner": OWNER, "repo": REPO, "state": "open", "per_page": 100, "fields": "number,labels.name"}
    bare = sorted(i["number"] for i in items(await call.call("issues_list-for-repo", args)) if not i.get("labels"))
    body = {"labels": ["triage"]}
    adds = [("issues_add-labels", {"owner": OWNER, "repo": REPO, "issue_number": n, "body": body}) for n in bare]
    await call.turn(*adds)
    return bare


LABEL = Task(
    "triage-unlabelled",
    "github",
    f"Add the label 'triage' to every open issue of {FULL} that has no label; which issues were they?",
    label_expected,
    label_plan,
    (ISSUES, ADD_LABELS),
    f"""import asyncio
issues = await issues_list_for_repo(owner='{OWNER}', repo='{REPO}', state='open', per_page=100)
bare = sorted(i['number'] for i in issues if not i['labels'])
await asyncio.gather(*[issues_add_labels(owner='{OWNER}', repo='{REPO}', issue_number=n,
                                         body={{'labels': ['triage']}}) for n in bare])
bare
""",
    f"""import asyncio
r = await call_tool('{{issues_list-for-repo}}', {{'owner': '{OWNER}', 'repo': '{REPO}', 'state': 'open',
                                             'per_page': 100}})
bare = sorted(i['number'] for i in r['result'] if not i['labels'])
await asyncio.gather(*[call_tool('{{issues_add-labels}}', {{'owner': '{OWNER}', 'repo': '{REPO}', 'issue_number': n,
                                                        'body': {{'labels': ['triage']}}}}) for n in bare])
return bare
""",
    write=True,
    verify=label_verify,
)

# ------------------------------------------------------------------------------- stale PRs


def stale_expected(up: Upstream) -> Any:
    pulls = [p for p in up.github.pulls[f"{OWNER}/{STALE_REPO}"] if p["state"] == "open"]
    stale = sorted((p for p in pulls if p["updated_at"] < STALE_BEFORE), key=lambda p: p["updated_at"])
    return [{"number": p["number"], "title": p["title"]} for p in stale]


async def stale_plan(call: Caller) -> Any:
    args = {"owner": OWNER, "repo": STALE_REPO, "state": "open", "sort": "updated", "direction": "asc"}
    pulls = items(await call.call("pulls_list", {**args, "per_page": 100, "fields": "number,title,updated_at"}))
    return [{"number": p["number"], "title": p["title"]} for p in pulls if p["updated_at"] < STALE_BEFORE]


STALE = Task(
    "stale-pulls",
    "github",
    f"The open pull requests of {OWNER}/{STALE_REPO} not updated since {STALE_BEFORE}, least recently updated first.",
    stale_expected,
    stale_plan,
    (PULLS,),
    f"""pulls = await pulls_list(owner='{OWNER}', repo='{STALE_REPO}', state='open', sort='updated', direction='asc',
                   per_page=100)
[{{'number': p['number'], 'title': p['title']}} for p in pulls if p['updated_at'] < '{STALE_BEFORE}']
""",
    f"""r = await call_tool('{{pulls_list}}', {{'owner': '{OWNER}', 'repo': '{STALE_REPO}', 'state': 'open',
                                   'sort': 'updated', 'direction': 'asc', 'per_page': 100}})
return [{{'number': p['number'], 'title': p['title']}} for p in r['result'] if p['updated_at'] < '{STALE_BEFORE}']
""",
)

# ------------------------------------------------------------------------------- most starred


def starred_expected(up: Upstream) -> Any:
    top = sorted(up.github.repos, key=lambda r: r["stargazers_count"], reverse=True)[:3]
    return [{"name": r["name"], "stars": r["stargazers_count"]} for r in top]


async def starred_plan(call: Caller) -> Any:
    fields = "name,stargazers_count"
    repos = items(await call.call("repos_list-for-org", {"org": OWNER, "per_page": 100, "fields": fields}))
    top = sorted(repos, key=lambda r: r["stargazers_count"], reverse=True)[:3]
    return [{"name": r["name"], "stars": r["stargazers_count"]} for r in top]


STARRED = Task(
    "most-starred",
    "github",
    f"The 3 most-starred repositories of {OWNER}, with their star counts.",
    starred_expected,
    starred_plan,
    (ORG_REPOS,),
    f"""repos = await repos_list_for_org(org='{OWNER}', per_page=100)
top = sorted(repos, key=lambda r: r.get('stargazers_count') or 0, reverse=True)[:3]
[{{'name': r['name'], 'stars': r.get('stargazers_count')}} for r in top]
""",
    f"""r = await call_tool('{{repos_list-for-org}}', {{'org': '{OWNER}', 'per_page': 100}})
top = sorted(r['result'], key=lambda r: r['stargazers_count'], reverse=True)[:3]
return [{{'name': r['name'], 'stars': r['stargazers_count']}} for r in top]
""",
)

# ------------------------------------------------------------------------------- labels (pages)


def labels_expected(up: Upstream) -> Any:
    issues = [i for i in up.github.issues[f"{OWNER}/{PAGED_REPO}"] if i["state"] == "open"]
    return dict(sorted(Counter(name for i in issues for name in _labels(i)).items()))


async def labels_plan(call: Caller) -> Any:
    args = {"owner": OWNER, "repo": PAGED_REPO, "state": "open", "per_page": 100, "fields": "labels.name"}
    issues: list[Any] = []
    page = 1
    while True:
        batch = items(await call.call("issues_list-for-repo", {**args, "page": page}))
        issues += batch
        if len(batch) < 100:
            break
        page += 1
    return dict(sorted(Counter(name for i in issues for name in _labels(i)).items()))


LABEL_COUNTS = Task(
    "open-issue-labels",
    "github",
    f"For the open issues of {OWNER}/{PAGED_REPO}, how many carry each label (labels no open issue has left out)?",
    labels_expected,
    labels_plan,
    (ISSUES,),
    f"""issues, page = [], 1
while True:
    batch = await issues_list_for_repo(owner='{OWNER}', repo='{PAGED_REPO}', state='open', per_page=100, page=page)
    issues += batch
    if len(batch) < 100:
        break
    page += 1
counts = {{}}
for i in issues:
    for label in i['labels']:
        name = label if isinstance(label, str) else label['name']
        counts[name] = counts.get(name, 0) + 1
dict(sorted(counts.items()))
""",
    f"""issues, page = [], 1
while True:
    r = await call_tool('{{issues_list-for-repo}}', {{'owner': '{OWNER}', 'repo': '{PAGED_REPO}', 'state': 'open',
                                                 'per_page': 100, 'page': page}})
    issues += r['result']
    if len(r['result']) < 100:
        break
    page += 1
counts = {{}}
for i in issues:
    for label in i['labels']:
        name = label if isinstance(label, str) else label['name']
        counts[name] = counts.get(name, 0) + 1
return dict(sorted(counts.items()))
""",
)

TASKS = (RECENT, ORG_PRS, TOP_AUTHOR, NAMES, LABEL, STALE, STARRED, LABEL_COUNTS)
OPERATIONS = sorted({s.tool for task in TASKS for s in task.searches})
