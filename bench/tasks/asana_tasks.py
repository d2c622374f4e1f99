"""The Asana tasks: the second suite, on an API no earlier task or search tuning used.

Written for issue 20 before any of them ran: the prompts first, then each search query phrased
from its prompt as a model would type it (none tried against search while writing), then the
plans and programs. Every search asks for one result (limit 1); a search that misses is asked
again with a larger limit, and that miss is counted (bench/tasks/task.py). Each plan is what a
capable agent does with Asana's own means: ``opt_fields`` for the fields it needs,
``completed_since=now`` for incomplete tasks, ``limit`` and ``next_page.offset`` to page.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from bench.tasks.asana_world import TODAY, WORKSPACE
from bench.tasks.task import Caller, Search, Task
from bench.tasks.upstream import Upstream

WS = WORKSPACE["name"]
RELAUNCH, MOBILE, BACKLOG = "Website relaunch", "Mobile app", "Backlog"
COMMENTED = "Update pricing page"
TEAM = "Design"
OWNER = "Hubot Jones"

WORKSPACES = Search("list workspaces", "getWorkspaces")
PROJECTS = Search("projects in a workspace", "getProjectsForWorkspace")
TASKS = Search("get the tasks of a project", "getTasksForProject")
TEAMS = Search("teams in a workspace", "getTeamsForWorkspace")
MEMBERS = Search("members of a team", "getUsersForTeam")
COMMENTS = Search("comments on a task", "getStoriesForTask")
SECTIONS = Search("sections of a project", "getSectionsForProject")
SECTION_TASKS = Search("tasks in a section", "getTasksForSection")
COMPLETE = Search("mark a task completed", "updateTask")

# The two lookups every task starts with, in a program of each code mode.
FIND = f"""ws = next(w['gid'] for w in (await getWorkspaces())['data'] if w['name'] == '{WS}')
projects = (await getProjectsForWorkspace(workspace_gid=ws))['data']
"""
FAST_FIND = f"""ws = [w['gid'] for w in (await call_tool('{{getWorkspaces}}', {{}}))['data'] if w['name'] == '{WS}'][0]
projects = (await call_tool('{{getProjectsForWorkspace}}', {{'workspace_gid': ws}}))['data']
"""


def _project_gid(projects: Any, name: str) -> str:
    return str(next(p["gid"] for p in projects["data"] if p["name"] == name))


async def _project(call: Caller, name: str) -> str:
    workspaces = await call.call("getWorkspaces", {})
    ws = next(w["gid"] for w in workspaces["data"] if w["name"] == WS)
    return _project_gid(await call.call("getProjectsForWorkspace", {"workspace_gid": ws}), name)


def _tasks(up: Upstream, project: str) -> list[dict[str, Any]]:
    return up.asana.project_tasks(up.asana.project(project)["gid"])


def _overdue(task: dict[str, Any]) -> bool:
    # .get: the bridge's results leave out empty fields (a null assignee, a task without a due date)
    return not task.get("completed") and task.get("due_on") is not None and task["due_on"] < TODAY


# ------------------------------------------------------------------------- overdue by assignee


def overdue_expected(up: Upstream) -> Any:
    late = [t for t in _tasks(up, RELAUNCH) if _overdue(t)]
    return dict(sorted(Counter((t["assignee"] or {}).get("name", "unassigned") for t in late).items()))


async def overdue_plan(call: Caller) -> Any:
    project = await _project(call, RELAUNCH)
    fields = ["completed", "due_on", "assignee.name"]
    tasks = (await call.call("getTasksForProject", {"project_gid": project, "opt_fields": fields}))["data"]
    late = [t for t in tasks if _overdue(t)]
    return dict(sorted(Counter((t.get("assignee") or {}).get("name", "unassigned") for t in late).items()))


OVERDUE = Task(
    "overdue-by-assignee",
    "asana",
    f"In project '{RELAUNCH}' of the {WS} workspace, how many incomplete tasks are overdue (due before {TODAY}), "
    "per assignee name ('unassigned' when none)?",
    overdue_expected,
    overdue_plan,
    (WORKSPACES, PROJECTS, TASKS),
    FIND
    + f"""gid = next(p['gid'] for p in projects if p['name'] == '{RELAUNCH}')
tasks = (await getTasksForProject(project_gid=gid, opt_fields=['completed', 'due_on', 'assignee.name']))['data']
counts = {{}}
for t in tasks:
    if not t['completed'] and t.get('due_on') and t['due_on'] < '{TODAY}':
        who = t['assignee']['name'] if t.get('assignee') else 'unassigned'
        counts[who] = counts.get(who, 0) + 1
dict(sorted(counts.items()))
""",
    FAST_FIND
    + f"""gid = [p['gid'] for p in projects if p['name'] == '{RELAUNCH}'][0]
fields = ['completed', 'due_on', 'assignee.name']
r = await call_tool('{{getTasksForProject}}', {{'project_gid': gid, 'opt_fields': fields}})
counts = {{}}
for t in r['data']:
    if not t['completed'] and t.get('due_on') and t['due_on'] < '{TODAY}':
        who = t['assignee']['name'] if t.get('assignee') else 'unassigned'
        counts[who] = counts.get(who, 0) + 1
return dict(sorted(counts.items()))
""",
)

# ------------------------------------------------------------------------------ team members


def members_expected(up: Upstream) -> Any:
    team = next(t for t in up.asana.teams.values() if t["name"] == TEAM)
    users = sorted((up.asana.users[u] for u in team["members"]), key=lambda u: u["name"])
    return [{"name": u["name"], "email": u["email"]} for u in users]


async def members_plan(call: Caller) -> Any:
    workspaces = await call.call("getWorkspaces", {})
    ws = next(w["gid"] for w in workspaces["data"] if w["name"] == WS)
    teams = await call.call("getTeamsForWorkspace", {"workspace_gid": ws})
    team = next(t["gid"] for t in teams["data"] if t["name"] == TEAM)
    users = await call.call("getUsersForTeam", {"team_gid": team, "opt_fields": ["name", "email"]})
    return sorted(({"name": u["name"], "email": u["email"]} for u in users["data"]), key=lambda u: u["name"])


MEMBERS_TASK = Task(
    "team-members",
    "asana",
    f"The names and email addresses of the members of the {TEAM} team in the {WS} workspace, sorted by name.",
    members_expected,
    members_plan,
    (WORKSPACES, TEAMS, MEMBERS),
    f"""ws = next(w['gid'] for w in (await getWorkspaces())['data'] if w['name'] == '{WS}')
team = next(t['gid'] for t in (await getTeamsForWorkspace(workspace_gid=ws))['data'] if t['name'] == '{TEAM}')
users = (await getUsersForTeam(team_gid=team, opt_fields=['name', 'email']))['data']
sorted(({{'name': u['name'], 'email': u['email']}} for u in users), key=lambda u: u['name'])
""",
    f"""ws = [w['gid'] for w in (await call_tool('{{getWorkspaces}}', {{}}))['data'] if w['name'] == '{WS}'][0]
teams = (await call_tool('{{getTeamsForWorkspace}}', {{'workspace_gid': ws}}))['data']
team = [t['gid'] for t in teams if t['name'] == '{TEAM}'][0]
users = (await call_tool('{{getUsersForTeam}}', {{'team_gid': team, 'opt_fields': ['name', 'email']}}))['data']
return sorted([{{'name': u['name'], 'email': u['email']}} for u in users], key=lambda u: u['name'])
""",
)

# ----------------------------------------------------------------------------- task comments


def comments_expected(up: Upstream) -> Any:
    task = next(t for t in _tasks(up, RELAUNCH) if t["name"] == COMMENTED)
    stories = [s for s in up.asana.stories[task["gid"]] if s["resource_subtype"] == "comment_added"]
    return [
        {"author": s["created_by"]["name"], "text": s["text"]} for s in sorted(stories, key=lambda s: s["created_at"])
    ]


async def comments_plan(call: Caller) -> Any:
    project = await _project(call, RELAUNCH)
    tasks = await call.call("getTasksForProject", {"project_gid": project})
    task = next(t["gid"] for t in tasks["data"] if t["name"] == COMMENTED)
    fields = ["resource_subtype", "text", "created_by.name", "created_at"]
    stories = (await call.call("getStoriesForTask", {"task_gid": task, "opt_fields": fields}))["data"]
    comments = sorted((s for s in stories if s["resource_subtype"] == "comment_added"), key=lambda s: s["created_at"])
    return [{"author": s["created_by"]["name"], "text": s["text"]} for s in comments]


COMMENTS_TASK = Task(
    "task-comments",
    "asana",
    f"The comments on task '{COMMENTED}' of project '{RELAUNCH}' ({WS} workspace), oldest first, each as its "
    "author's name and its text.",
    comments_expected,
    comments_plan,
    (WORKSPACES, PROJECTS, TASKS, COMMENTS),
    FIND
    + f"""gid = next(p['gid'] for p in projects if p['name'] == '{RELAUNCH}')
task = next(t['gid'] for t in (await getTasksForProject(project_gid=gid))['data'] if t['name'] == '{COMMENTED}')
fields = ['resource_subtype', 'text', 'created_by.name', 'created_at']
stories = (await getStoriesForTask(task_gid=task, opt_fields=fields))['data']
comments = sorted((s for s in stories if s['resource_subtype'] == 'comment_added'), key=lambda s: s['created_at'])
[{{'author': s['created_by']['name'], 'text': s['text']}} for s in comments]
""",
    FAST_FIND
    + f"""gid = [p['gid'] for p in projects if p['name'] == '{RELAUNCH}'][0]
tasks = (await call_tool('{{getTasksForProject}}', {{'project_gid': gid}}))['data']
task = [t['gid'] for t in tasks if t['name'] == '{COMMENTED}'][0]
fields = ['resource_subtype', 'text', 'created_by.name', 'created_at']
stories = (await call_tool('{{getStoriesForTask}}', {{'task_gid': task, 'opt_fields': fields}}))['data']
comments = sorted([s for s in stories if s['resource_subtype'] == 'comment_added'], key=lambda s: s['created_at'])
return [{{'author': s['created_by']['name'], 'text': s['text']}} for s in comments]
""",
)

# ---------------------------------------------------------------------------- section counts


def sections_expected(up: Upstream) -> Any:
    project = up.asana.project(MOBILE)
    sections = [s for s in up.asana.sections.values() if s["project"]["gid"] == project["gid"]]
    return {s["name"]: len(up.asana.section_tasks(s["gid"])) for s in sections}


async def sections_plan(call: Caller) -> Any:
    project = await _project(call, MOBILE)
    sections = (await call.call("getSectionsForProject", {"project_gid": project}))["data"]
    found = await call.turn(*(("getTasksForSection", {"section_gid": s["gid"]}) for s in sections))
    return {s["name"]: len(tasks["data"]) for s, tasks in zip(sections, found, strict=True)}


SECTIONS_TASK = Task(
    "section-counts",
    "asana",
    f"How many tasks are in each section of project '{MOBILE}' ({WS} workspace)?",
    sections_expected,
    sections_plan,
    (WORKSPACES, PROJECTS, SECTIONS, SECTION_TASKS),
    FIND
    + f"""import asyncio
gid = next(p['gid'] for p in projects if p['name'] == '{MOBILE}')
sections = (await getSectionsForProject(project_gid=gid))['data']
found = await asyncio.gather(*(getTasksForSection(section_gid=s['gid']) for s in sections))
{{s['name']: len(t['data']) for s, t in zip(sections, found)}}
""",
    FAST_FIND
    + f"""import asyncio
gid = [p['gid'] for p in projects if p['name'] == '{MOBILE}'][0]
sections = (await call_tool('{{getSectionsForProject}}', {{'project_gid': gid}}))['data']
found = await asyncio.gather(*[call_tool('{{getTasksForSection}}', {{'section_gid': s['gid']}}) for s in sections])
return {{s['name']: len(t['data']) for s, t in zip(sections, found)}}
""",
)

# ----------------------------------------------------------------------- backlog (pages)


def backlog_expected(up: Upstream) -> Any:
    open_tasks = [t for t in _tasks(up, BACKLOG) if not t["completed"]]
    return {"incomplete": len(open_tasks), "unassigned": sum(t["assignee"] is None for t in open_tasks)}


async def backlog_plan(call: Caller) -> Any:
    project = await _project(call, BACKLOG)
    args: dict[str, Any] = {"project_gid": project, "completed_since": "now", "limit": 100, "opt_fields": ["assignee"]}
    tasks: list[dict[str, Any]] = []
    while True:
        found = await call.call("getTasksForProject", args)
        tasks += found["data"]
        if not found.get("next_page"):
            break
        args = {**args, "offset": found["next_page"]["offset"]}
    return {"incomplete": len(tasks), "unassigned": sum(t.get("assignee") is None for t in tasks)}


BACKLOG_TASK = Task(
    "backlog-open",
    "asana",
    f"How many tasks of project '{BACKLOG}' ({WS} workspace) are still incomplete, and how many of those have no "
    "assignee?",
    backlog_expected,
    backlog_plan,
    (WORKSPACES, PROJECTS, TASKS),
    FIND
    + f"""gid = next(p['gid'] for p in projects if p['name'] == '{BACKLOG}')
page = await getTasksForProject(project_gid=gid, completed_since='now', limit=100, opt_fields=['assignee'])
tasks = page['data']
while page.get('next_page'):
    page = await getTasksForProject(project_gid=gid, completed_since='now', limit=100, opt_fields=['assignee'],
                                    offset=page['next_page']['offset'])
    tasks += page['data']
{{'incomplete': len(tasks), 'unassigned': sum(1 for t in tasks if t.get('assignee') is None)}}
""",
    FAST_FIND
    + f"""gid = [p['gid'] for p in projects if p['name'] == '{BACKLOG}'][0]
tasks, offset = [], None
while True:
    params = {{'project_gid': gid, 'completed_since': 'now', 'limit': 100, 'opt_fields': ['assignee']}}
    if offset:
        params['offset'] = offset
    page = await call_tool('{{getTasksForProject}}', params)
    tasks += page['data']
    if not page.get('next_page'):
        break
    offset = page['next_page']['offset']
return {{'incomplete': len(tasks), 'unassigned': len([t for t in tasks if t.get('assignee') is None])}}
""",
)

# --------------------------------------------------------------------- complete overdue (writes)


def _owned_overdue(up: Upstream) -> list[dict[str, Any]]:
    return [t for t in _tasks(up, RELAUNCH) if _overdue(t) and (t["assignee"] or {}).get("name") == OWNER]


def complete_expected(up: Upstream) -> Any:
    return sorted(t["name"] for t in _owned_overdue(up))


def complete_verify(up: Upstream) -> list[str]:
    return [f"{t['name']} is still incomplete" for t in _owned_overdue(up)]


async def complete_plan(call: Caller) -> Any:
    project = await _project(call, RELAUNCH)
    fields = ["name", "completed", "due_on", "assignee.name"]
    tasks = (await call.call("getTasksForProject", {"project_gid": project, "opt_fields": fields}))["data"]
    chosen = [t for t in tasks if _overdue(t) and (t.get("assignee") or {}).get("name") == OWNER]
    await call.turn(*(("updateTask", {"task_gid": t["gid"], "data": {"completed": True}}) for t in chosen))
    return sorted(t["name"] for t in chosen)


COMPLETE_TASK = Task(
    "complete-overdue",
    "asana",
    f"Mark as completed every incomplete task of project '{RELAUNCH}' ({WS} workspace) assigned to {OWNER} and "
    f"due before {TODAY}; which tasks were they (names, sorted)?",
    complete_expected,
    complete_plan,
    (WORKSPACES, PROJECTS, TASKS, COMPLETE),
    FIND
    + f"""import asyncio
gid = next(p['gid'] for p in projects if p['name'] == '{RELAUNCH}')
fields = ['name', 'completed', 'due_on', 'assignee.name']
tasks = (await getTasksForProject(project_gid=gid, opt_fields=fields))['data']
chosen = [t for t in tasks if not t['completed'] and t.get('due_on') and t['due_on'] < '{TODAY}'
          and t.get('assignee') and t['assignee']['name'] == '{OWNER}']
await asyncio.gather(*(updateTask(task_gid=t['gid'], data={{'completed': True}}) for t in chosen))
sorted(t['name'] for t in chosen)
""",
    FAST_FIND
    + f"""import asyncio
gid = [p['gid'] for p in projects if p['name'] == '{RELAUNCH}'][0]
fields = ['name', 'completed', 'due_on', 'assignee.name']
tasks = (await call_tool('{{getTasksForProject}}', {{'project_gid': gid, 'opt_fields': fields}}))['data']
chosen = [t for t in tasks if not t['completed'] and t.get('due_on') and t['due_on'] < '{TODAY}'
          and t.get('assignee') and t['assignee']['name'] == '{OWNER}']
await asyncio.gather(*[call_tool('{{updateTask}}', {{'task_gid': t['gid'], 'data': {{'completed': True}}}})
                       for t in chosen])
return sorted([t['name'] for t in chosen])
""",
    write=True,
    verify=complete_verify,
)

TASKS = (OVERDUE, MEMBERS_TASK, COMMENTS_TASK, SECTIONS_TASK, BACKLOG_TASK, COMPLETE_TASK)
