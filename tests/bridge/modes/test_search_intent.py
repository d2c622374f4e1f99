"""Search reads a request: the verb's intent, the path's structure, nouns over lookalikes, synonyms.

Each rule has a small catalogue written for it (operations of invented APIs in the styles real
ones use: camelCase operationIds, GitHub's ``area_verb-noun``, Stripe's method-and-path names,
Slack's RPC paths); the property test builds CRUD catalogues over random resource names and asks
the same questions of every one.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.modes.search import SearchEntry, SearchIndex, returns_list
from bridge.modes.search_intent import parse, traits

LIST_OF = {"type": "object", "properties": {"data": {"type": "array", "items": {"type": "object"}}}}
ONE = {"type": "object", "properties": {"data": {"type": "object"}}}


def entry(name: str, operation: str, summary: str = "", *, listing: bool | None = None, **kw: object) -> SearchEntry:
    return SearchEntry(name, operation, summary, returns_list=listing, **kw)  # type: ignore[arg-type]


def first(index: SearchIndex, query: str) -> str:
    ranked = index.rank(query, 3)
    return ranked[0] if ranked else ""


# ------------------------------------------------------------------------------ verb intent

WORKSPACE = SearchIndex(
    [
        entry("createProjectForWorkspace", "POST /workspaces/{workspace_gid}/projects",
              "Create a project in a workspace", listing=False),
        entry("getProjectsForWorkspace", "GET /workspaces/{workspace_gid}/projects",
              "Get all projects in a workspace", listing=True),
        entry("getProject", "GET /projects/{project_gid}", "Get a project", listing=False),
        entry("updateProject", "PUT /projects/{project_gid}", "Update a project", listing=False),
        entry("deleteProject", "DELETE /projects/{project_gid}", "Delete a project"),
        entry("getProjects", "GET /projects", "Get multiple projects", listing=True),
        entry("createProject", "POST /projects", "Create a project", listing=False),
    ]
)  # fmt: skip


@pytest.mark.parametrize(
    ("query", "meant"),
    [
        ("list projects in a workspace", "getProjectsForWorkspace"),  # not the POST on the same path
        ("show all projects of a workspace", "getProjectsForWorkspace"),
        ("create a project in a workspace", "createProjectForWorkspace"),
        ("get a project", "getProject"),  # the item lookup, not a listing
        ("fetch one project", "getProject"),
        ("rename a project", "updateProject"),
        ("remove a project", "deleteProject"),
        ("list projects", "getProjects"),
        ("make a new project", "createProject"),
    ],
)
def test_the_verb_picks_the_method_and_the_result_shape(query: str, meant: str) -> None:
    assert first(WORKSPACE, query) == meant


# Queries and operations here are invented for the rules: none is a query of bench/search_heldout.yaml.
TRANSFERS = SearchIndex(
    [
        entry("GetTransfers", "GET /v1/transfers", description="<p>Returns a list of existing transfers.</p>",
              listing=True),
        entry("PostTransfers", "POST /v1/transfers", description="<p>Creates a new transfer.</p>"),
        entry("GetTransfersTransfer", "GET /v1/transfers/{transfer}",
              description="<p>Retrieves the details of an existing transfer.</p>"),
        entry("PostTransfersTransfer", "POST /v1/transfers/{transfer}",
              description="<p>Updates the specified transfer.</p>"),
        entry("PostTransfersTransferReversals", "POST /v1/transfers/{transfer}/reversals",
              description="<p>Reverses a transfer, in whole or in part.</p>"),
        entry("GetAccountsSearch", "GET /v1/accounts/search", description="<p>Search for accounts.</p>",
              listing=True),
        entry("GetAccounts", "GET /v1/accounts", description="<p>Returns a list of accounts.</p>", listing=True),
    ]
)  # fmt: skip


@pytest.mark.parametrize(
    ("query", "meant"),
    [
        ("make a transfer", "PostTransfers"),
        ("update a transfer", "PostTransfersTransfer"),  # POST /xs/{id} with "Updates" is an update
        ("list transfers", "GetTransfers"),
        ("retrieve a transfer", "GetTransfersTransfer"),
        ("search accounts", "GetAccountsSearch"),
        ("list accounts", "GetAccounts"),
    ],
)
def test_summaryless_method_and_path_names_are_read_from_method_path_and_description(query: str, meant: str) -> None:
    assert first(TRANSFERS, query) == meant


RPC = SearchIndex(
    [
        entry("files_remove", "POST /files.remove", "Removes a file."),
        entry("files_edit", "POST /files.edit", "Edits a file's title."),
        entry("files_share", "POST /files.share", "Shares a file with a group."),
        entry("files_history", "GET /files.history", "Fetches the versions of a file", listing=True),
        entry("groups_list", "GET /groups.list", "Lists all groups in a team.", listing=True),
    ]
)  # fmt: skip


@pytest.mark.parametrize(
    ("query", "meant"),
    [
        ("remove a file", "files_remove"),
        ("change a file", "files_edit"),
        ("share a file with a group", "files_share"),
        ("list groups", "groups_list"),
    ],
)
def test_rpc_paths_say_their_verb_in_the_last_part(query: str, meant: str) -> None:
    assert first(RPC, query) == meant


def test_a_page_shaped_result_is_a_listing_and_an_object_is_not() -> None:
    page = {"type": "object", "properties": {"data": {"type": "array", "items": {"type": "object"}}, "has_more": {}}}
    wrapped = {"type": "object", "properties": {"result": {"type": "array"}, "_truncated": {"type": "array"}}}
    assert returns_list(page) is True
    assert returns_list(wrapped) is True
    assert returns_list(ONE) is False
    assert (
        returns_list({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}})
        is False
    )
    assert returns_list(None) is None
    index = SearchIndex(
        [
            entry("getUserTaskList", "GET /user_task_lists/{user_task_list_gid}", "Get a user task list",
                  listing=False),
            entry("getTasksForUserTaskList", "GET /user_task_lists/{user_task_list_gid}/tasks",
                  "Get tasks from a user task list", listing=True),
        ]
    )  # fmt: skip
    assert first(index, "list the tasks of a user task list") == "getTasksForUserTaskList"
    assert first(index, "get a user task list") == "getUserTaskList"


# --------------------------------------------------------------------------- path structure

NESTED = SearchIndex(
    [
        entry("getTasksForProject", "GET /projects/{project_gid}/tasks", "Get tasks from a project", listing=True),
        entry("getProjectsForTask", "GET /tasks/{task_gid}/projects", "Get projects a task is in", listing=True),
        entry("getTasksForTag", "GET /tags/{tag_gid}/tasks", "Get tasks from a tag", listing=True),
        entry("getTasks", "GET /tasks", "Get multiple tasks", listing=True),
        entry("getTask", "GET /tasks/{task_gid}", "Get a task", listing=False),
        entry("getProject", "GET /projects/{project_gid}", "Get a project", listing=False),
        entry("teams_list", "GET /orgs/{org}/teams", "List teams", listing=True),
        entry("teams_list-child", "GET /orgs/{org}/teams/{team_slug}/teams", "List child teams", listing=True),
        entry("orgs_list-role-teams", "GET /orgs/{org}/organization-roles/{role_id}/teams",
              "List the teams of a role", listing=True),
    ]
)  # fmt: skip


@pytest.mark.parametrize(
    ("query", "meant"),
    [
        ("list tasks in a project", "getTasksForProject"),
        ("list the projects of a task", "getProjectsForTask"),  # the same words, the other way round
        ("list tasks on a tag", "getTasksForTag"),
        ("a project's tasks", "getTasksForProject"),  # a possessive names the container
        ("list teams in an organization", "teams_list"),  # the container right above, not further up
    ],
)
def test_list_x_of_a_y_means_get_ys_id_xs(query: str, meant: str) -> None:
    assert first(NESTED, query) == meant


# -------------------------------------------------------------------- nouns over lookalikes

LOOKALIKES = SearchIndex(
    [
        entry("getUserTaskList", "GET /user_task_lists/{user_task_list_gid}", "Get a user task list", listing=False),
        entry("getUserTaskListForUser", "GET /users/{user_gid}/user_task_list", "Get a user's task list",
              listing=False),
        entry("getTasksForProject", "GET /projects/{project_gid}/tasks", "Get tasks from a project", listing=True),
        entry("getUsersForTeam", "GET /teams/{team_gid}/users", "Get users in a team", listing=True),
        entry("getUsersForWorkspace", "GET /workspaces/{workspace_gid}/users", "Get users in a workspace",
              listing=True),
        entry("getBoardsCardsByIdBoard", "GET /boards/{idBoard}/cards", "getBoardsCardsByIdBoard()", listing=True),
        entry("getListsCardsByIdList", "GET /lists/{idList}/cards", "getListsCardsByIdList()", listing=True),
        entry("getBoardsListsByIdBoard", "GET /boards/{idBoard}/lists", "getBoardsListsByIdBoard()", listing=True),
    ]
)  # fmt: skip


@pytest.mark.parametrize(
    ("query", "meant"),
    [
        ("list tasks in a project", "getTasksForProject"),
        ("list users in a team", "getUsersForTeam"),
        ("list users in a workspace", "getUsersForWorkspace"),
        ("list cards on a board", "getBoardsCardsByIdBoard"),  # "list" the verb is not Trello's lists
        ("list the lists of a board", "getBoardsListsByIdBoard"),  # but "lists" the noun is
        ("list the cards in a list", "getListsCardsByIdList"),
    ],
)
def test_the_verb_list_does_not_match_the_noun_list(query: str, meant: str) -> None:
    assert first(LOOKALIKES, query) == meant


# ------------------------------------------------------------------------ words and synonyms

SYNONYMS = SearchIndex(
    [
        entry("getStoriesForTask", "GET /tasks/{task_gid}/stories", "Get stories from a task", listing=True),
        entry("createStoryForTask", "POST /tasks/{task_gid}/stories", "Create a story on a task"),
        entry("getSubtasksForTask", "GET /tasks/{task_gid}/subtasks", "Get subtasks from a task", listing=True),
        entry("getTask", "GET /tasks/{task_gid}", "Get a task", listing=False),
        entry("repos_list-webhooks", "GET /repos/{owner}/{repo}/hooks", "List repository webhooks", listing=True),
        entry("repos_delete-webhook", "DELETE /repos/{owner}/{repo}/hooks/{hook_id}", "Delete a repository webhook"),
        entry("getMembersOfTeam", "GET /teams/{team_id}/members", "Get the members of a team", listing=True),
        entry("GetCharges", "GET /v1/charges", description="<p>Returns a list of charges.</p>", listing=True),
        entry("repos_list-branches", "GET /repos/{owner}/{repo}/branches", "List branches", listing=True),
    ]
)  # fmt: skip


@pytest.mark.parametrize(
    ("query", "meant"),
    [
        ("list comments on a task", "getStoriesForTask"),  # comment / story
        ("add a note to a task", "createStoryForTask"),  # note / story
        ("list sub-tasks of a task", "getSubtasksForTask"),  # "sub tasks" is the compound "subtasks"
        ("list the hooks of a repository", "repos_list-webhooks"),  # hook / webhook
        ("delete a hook", "repos_delete-webhook"),
        ("list users of a team", "getMembersOfTeam"),  # user / member
        ("list payments", "GetCharges"),  # payment / charge
        ("list branch of a repository", "repos_list-branches"),  # singular / plural, repository / repo
    ],
)
def test_synonyms_compounds_and_plurals_match(query: str, meant: str) -> None:
    assert first(SYNONYMS, query) == meant


def test_the_specs_own_word_ranks_above_a_synonym() -> None:
    index = SearchIndex(
        [
            entry("getStoriesForTask", "GET /tasks/{task_gid}/stories", "Get stories from a task", listing=True),
            entry("getCommentsForTask", "GET /tasks/{task_gid}/comments", "Get comments on a task", listing=True),
            entry("getNotesForTask", "GET /tasks/{task_gid}/notes", "Get notes of a task", listing=True),
        ]
    )
    assert first(index, "list comments on a task") == "getCommentsForTask"
    assert first(index, "list stories of a task") == "getStoriesForTask"
    assert first(index, "list notes of a task") == "getNotesForTask"


# ----------------------------------------------------------- questions, "my", nouns as verbs

OTHERS = SearchIndex(
    [
        entry("activity_list-stargazers", "GET /repos/{owner}/{repo}/stargazers", "List stargazers", listing=True),
        entry("activity_star-repo", "PUT /user/starred/{owner}/{repo}", "Star a repository for the authenticated user"),
        entry("repos_list-for-user", "GET /users/{username}/repos", "List repositories for a user", listing=True),
        entry("repos_list-for-authenticated-user", "GET /user/repos",
              "List repositories for the authenticated user", listing=True),
        entry("issues_create-comment", "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
              "Create an issue comment"),
        entry("issues_list-comments", "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
              "List issue comments", listing=True),
        entry("repos_create-fork", "POST /repos/{owner}/{repo}/forks", "Create a fork"),
        entry("repos_list-forks", "GET /repos/{owner}/{repo}/forks", "List forks", listing=True),
    ]
)  # fmt: skip


@pytest.mark.parametrize(
    ("query", "meant"),
    [
        ("who forked this repository", "repos_list-forks"),  # a question reads
        ("star a repository", "activity_star-repo"),
        ("list my repositories", "repos_list-for-authenticated-user"),  # "my": the caller's own
        ("list a user's repositories", "repos_list-for-user"),
        ("comment on an issue", "issues_create-comment"),  # a noun used as a verb adds one
        ("fork a repository", "repos_create-fork"),  # an action named by the path's noun
    ],
)
def test_questions_possessives_and_nouns_used_as_verbs(query: str, meant: str) -> None:
    assert first(OTHERS, query) == meant


def test_an_exact_name_or_operation_still_comes_first() -> None:
    assert first(WORKSPACE, "createProjectForWorkspace") == "createProjectForWorkspace"
    assert first(WORKSPACE, "post /workspaces/{workspace_gid}/projects") == "createProjectForWorkspace"


# ------------------------------------------------------------------------------ properties

NOUNS = (
    "invoice widget gadget ticket folder document ledger account device sensor bucket order shipment "
    "carrier vendor album track playlist recipe ingredient course lesson student garden plant"
).split()


def plural(noun: str) -> str:
    return noun + "s"


def crud(resource: str, parent: str, style: int) -> dict[str, SearchEntry]:
    """What each request means -> the operation an API has for it, ``resource`` inside ``parent``,
    named in one of three styles (camelCase verbs, GitHub's ``xs_verb-for-y``, Stripe's method and path)."""
    xs, ys = plural(resource), plural(parent)
    cap, pcap = resource.capitalize(), parent.capitalize()
    ops = {
        "list": (f"GET /{ys}/{{{parent}_id}}/{xs}", True, f"list{cap}sFor{pcap}", f"{xs}_list-for-{parent}"),
        "create": (f"POST /{ys}/{{{parent}_id}}/{xs}", False, f"create{cap}For{pcap}", f"{xs}_create-for-{parent}"),
        "get": (f"GET /{xs}/{{{resource}_id}}", False, f"get{cap}", f"{xs}_get"),
        "update": (f"PATCH /{xs}/{{{resource}_id}}", False, f"update{cap}", f"{xs}_update"),
        "delete": (f"DELETE /{xs}/{{{resource}_id}}", None, f"delete{cap}", f"{xs}_delete"),
        "list-all": (f"GET /{xs}", True, f"list{cap}s", f"{xs}_list"),
        "list-parents": (
            f"GET /{xs}/{{{resource}_id}}/{ys}",
            True,
            f"list{pcap}sFor{cap}",
            f"{ys}_list-for-{resource}",
        ),
    }
    out = {}
    for verb, (operation, listing, camel, github) in ops.items():
        method, path = operation.split(" ")
        stripe = method.capitalize() + "".join(p.strip("{}").title().replace("_", "") for p in path.split("/"))
        out[verb] = entry((camel, github, stripe)[style], operation, "", listing=listing)
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(NOUNS), min_size=3, max_size=6, unique=True),
    st.integers(min_value=0, max_value=2),
    st.data(),
)
def test_every_crud_catalogue_answers_every_crud_request(nouns: list[str], style: int, data: st.DataObject) -> None:
    pairs = [(nouns[i], nouns[(i + 1) % len(nouns)]) for i in range(len(nouns))]  # a chain: no pair twice
    apis = {pair: crud(*pair, style) for pair in pairs}
    index = SearchIndex([e for ops in apis.values() for e in ops.values()])
    resource, parent = data.draw(st.sampled_from(pairs))
    meant = {verb: e.name for verb, e in apis[resource, parent].items()}
    asks = {
        f"list {plural(resource)} in a {parent}": "list",
        f"list the {plural(resource)} of a {parent}": "list",
        f"create a {resource} in a {parent}": "create",
        f"get a {resource}": "get",
        f"update a {resource}": "update",
        f"delete a {resource}": "delete",
        f"list the {plural(parent)} of a {resource}": "list-parents",
    }
    for query, verb in asks.items():
        assert first(index, query) == meant[verb], query


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_query_parses_and_any_path_reads_without_raising(text: str) -> None:
    request = parse(text)
    assert request.intent in (None, "list", "get", "read", "search", "create", "update", "delete", "action")
    for method in ("GET", "POST", "PATCH", "DELETE", "OPTIONS"):
        traits(method, "/" + text, text, text, None)


# ---------------------------------------------------- what a path acts on, in every path style

STYLES = SearchIndex(
    [
        entry("getWorkspaces", "GET /workspaces", "Get multiple workspaces", listing=True),
        entry("getMembershipsForWorkspace", "GET /workspaces/{workspace_gid}/workspace_memberships",
              "Get the workspace memberships for a workspace", listing=True),
        entry("bots_list", "GET /bots.list", "Lists the bots of a team.", listing=True),
        entry("bots_info", "GET /bots.info", "Gets information about a bot."),
        entry("post_getGroup", "POST /getGroup"),
        entry("post_getGroupMember", "POST /getGroupMember"),
        entry("post_getGroupMembersCount", "POST /getGroupMembersCount"),
        entry("FetchRecording", "GET /2010-04-01/Accounts/{AccountSid}/Recordings/{Sid}.json"),
        entry("ListRecording", "GET /2010-04-01/Accounts/{AccountSid}/Recordings.json", listing=True),
        entry("droplets_get", "GET /v2/droplets/{droplet_id}", "Retrieve an Existing Droplet"),
        entry("dropletActions_get", "GET /v2/droplets/{droplet_id}/actions/{action_id}", "Retrieve a Droplet Action"),
    ]
)  # fmt: skip


@pytest.mark.parametrize(
    ("query", "meant"),
    [
        ("list workspaces", "getWorkspaces"),  # a segment's head noun: workspace_memberships are memberships
        ("list bots", "bots_list"),  # a lone verb at the end acts on the namespace before it
        ("get information about a group", "post_getGroup"),  # "information about" stands for the group
        ("get a group member", "post_getGroupMember"),  # an RPC POST that reads
        ("how many members does a group have", "post_getGroupMembersCount"),  # "how many": a count
        ("get a recording", "FetchRecording"),  # /{Sid}.json is an item lookup
        ("list recordings", "ListRecording"),
        ("get a droplet", "droplets_get"),  # not the action the droplet holds
    ],
)
def test_every_path_style_says_what_it_acts_on(query: str, meant: str) -> None:
    assert first(STYLES, query) == meant


def test_stop_words_are_dropped_after_stemming_too() -> None:
    from bridge.modes.search_words import meaningful

    assert meaningful("how many pods does a node have please") == ["pod", "node"]
