"""Search ranks the operation a query means first: exact names, split words, deprecated last, bounded."""

from __future__ import annotations

import string
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge.modes import discovery as discovery_module
from bridge.modes.discovery import Discovery
from bridge.modes.search import MAX_TERMS, SearchEntry, SearchIndex, says_deprecated, stem, words
from bridge.serving.package import load_catalogue
from bridge.tools.registry import Tool, ToolContext, ToolRegistry
from tests.golden import GENERATED_DIR, GOLDEN_SPECS

WATCH_NOTE = ". deprecated: use the 'watch' parameter with a list operation instead."

# A small slice of a Kubernetes-like and a GitHub-like API. Deprecated operations come first, so
# a ranking that ignores deprecation (or ties by position) puts them on top.
ENTRIES = (
    SearchEntry("watchCoreV1NamespacedPodList", "GET /api/v1/watch/namespaces/{namespace}/pods",
                description="watch individual changes to a list of Pod" + WATCH_NOTE),
    SearchEntry("watchCoreV1PodListForAllNamespaces", "GET /api/v1/watch/pods",
                description="watch individual changes to a list of Pod" + WATCH_NOTE),
    SearchEntry("listCoreV1NamespacedPod", "GET /api/v1/namespaces/{namespace}/pods",
                description="list or watch objects of kind Pod"),
    SearchEntry("listCoreV1PodForAllNamespaces", "GET /api/v1/pods", description="list or watch objects of kind Pod"),
    SearchEntry("readCoreV1NamespacedPod", "GET /api/v1/namespaces/{namespace}/pods/{name}",
                description="read the specified Pod"),
    SearchEntry("deleteCoreV1NamespacedPod", "DELETE /api/v1/namespaces/{namespace}/pods/{name}",
                description="delete a Pod"),
    SearchEntry("teams_get-legacy", "GET /teams/{team_id}", summary="Get a team (Legacy)", tags=("teams",),
                deprecated=True),
    SearchEntry("teams_get-by-name", "GET /orgs/{org}/teams/{team_slug}", summary="Get a team by name",
                tags=("teams",)),
    SearchEntry("repos_list-for-org", "GET /orgs/{org}/repos", summary="List organization repositories",
                tags=("repos",)),
    SearchEntry("repos_delete", "DELETE /repos/{owner}/{repo}", summary="Delete a repository", tags=("repos",)),
    SearchEntry("getHTTPServerStatus", "GET /server/status", summary="Health of the web front end"),
    SearchEntry("server_restart", "POST /server/restart", summary="Restart the server"),
)  # fmt: skip
INDEX = SearchIndex(ENTRIES)
NAMES = {entry.name for entry in ENTRIES}

# query -> the operation that must come first
FIRST = [
    # deprecated operations rank below their replacements
    ("list pods in a namespace", "listCoreV1NamespacedPod"),
    ("watch pods in all namespaces", "listCoreV1PodForAllNamespaces"),
    ("get a team", "teams_get-by-name"),
    # an exact tool name or METHOD /path ranks first, whatever it says otherwise
    ("watchCoreV1NamespacedPodList", "watchCoreV1NamespacedPodList"),
    ("teams_get-legacy", "teams_get-legacy"),
    ("get /API/v1/pods", "listCoreV1PodForAllNamespaces"),
    ("  DELETE   /repos/{owner}/{repo} ", "repos_delete"),
    ("server_restart", "server_restart"),
    # names split at case changes (acronyms too) and at separators; words meet their plurals
    ("http server status", "getHTTPServerStatus"),
    ("list repositories of an org", "repos_list-for-org"),
    ("remove a repo", "repos_delete"),
    ("read a pod", "readCoreV1NamespacedPod"),
]


@pytest.mark.parametrize(("query", "first"), FIRST)
def test_the_meant_operation_ranks_first(query: str, first: str) -> None:
    assert INDEX.rank(query, 3)[0] == first


# GitHub's own wording: the operations sharing every word of "list pull requests" outranked the one
# whose summary is those words (found by bench/tasks); the other operations give the words their idf.
PULLS = SearchIndex(
    (
        SearchEntry("pulls_list-requested-reviewers", "GET /repos/{o}/{r}/pulls/{n}/requested_reviewers",
                    summary="Get all requested reviewers for a pull request", tags=("pulls",)),
        SearchEntry("pull-request-stacks_list", "GET /repos/{o}/{r}/stacks", summary="List pull request stacks",
                    tags=("pulls",)),
        SearchEntry("pulls_list", "GET /repos/{o}/{r}/pulls", summary="List pull requests", tags=("pulls",),
                    description="Lists pull requests in a specified repository."),
        SearchEntry("pulls_create", "POST /repos/{o}/{r}/pulls", summary="Create a pull request", tags=("pulls",)),
        SearchEntry("repos_list-pull-requests-associated-with-commit", "GET /repos/{o}/{r}/commits/{c}/pulls",
                    summary="List pull requests associated with a commit", tags=("repos",)),
        SearchEntry("pulls_list-files", "GET /repos/{o}/{r}/pulls/{n}/files", summary="List pull requests files",
                    tags=("pulls",)),
        *(SearchEntry(f"things_list-{i}", f"GET /things/{i}", summary=f"List things {i}") for i in range(40)),
    )
)  # fmt: skip


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("list pull requests", "pulls_list"),
        ("List Pull Requests", "pulls_list"),
        ("list pull request stacks", "pull-request-stacks_list"),
    ],
)
def test_a_summary_saying_the_query_as_a_phrase_ranks_first(query: str, first: str) -> None:
    assert PULLS.rank(query, 4)[0] == first


def test_a_deprecated_twin_ranks_below_its_replacement_for_any_query_of_its_words() -> None:
    current = [e for e in ENTRIES if not e.deprecated and not says_deprecated(e.description)]
    twins = [SearchEntry(f"{e.name}_old", e.operation, e.summary, e.description, e.tags, True) for e in current]
    index = SearchIndex([*twins, *ENTRIES])
    vocabulary = sorted({w for e in ENTRIES for w in words(f"{e.name} {e.summary} {e.description}")})
    for word in vocabulary:
        ranked = index.rank(word, len(index))
        for entry in current:
            if f"{entry.name}_old" in ranked:
                assert entry.name in ranked
                assert ranked.index(entry.name) < ranked.index(f"{entry.name}_old"), word


def test_words_split_names_paths_and_separators_and_stem_alike() -> None:
    assert words("listCoreV1NamespacedPod") == ["list", "core", "v1", "namespac", "pod"]
    assert words("getHTTPServerStatus") == ["get", "http", "server", "status"]
    assert words("/repos/{owner}/{repo}/pulls") == ["repo", "owner", "repo", "pull"]
    assert words("security-advisories_list-global") == ["security", "advisory", "list", "global"]
    for variants in (("pod", "pods"), ("namespace", "namespaces", "namespaced"), ("policy", "policies")):
        assert len({stem(v) for v in variants}) == 1, variants
    assert stem("string") == "string" and stem("status") == "status"


def test_the_query_is_cut_to_its_first_characters_and_terms(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    scores = SearchIndex._scores

    def spy(self: SearchIndex, terms: Any, soft: Any = frozenset()) -> Any:
        seen.append(len(terms))
        return scores(self, terms, soft)

    monkeypatch.setattr(SearchIndex, "_scores", spy)
    assert INDEX.rank("list pods " + "x" * 10**6, 5) == INDEX.rank("list pods", 5)
    many = " ".join(f"w{i}" for i in range(10**5))
    assert INDEX.rank("list pods " + many, 5) == INDEX.rank("list pods", 5)
    assert seen and max(seen) <= MAX_TERMS


def test_a_blank_query_lists_everything_in_order_and_limits_hold() -> None:
    assert INDEX.rank("", len(INDEX)) == [e.name for e in ENTRIES]
    assert INDEX.rank("   ", 2) == [ENTRIES[0].name, ENTRIES[1].name]
    assert INDEX.rank("pods", 0) == [] and INDEX.rank("pods", -1) == []
    assert INDEX.rank("pods", 100, lambda name: name.startswith("read")) == ["readCoreV1NamespacedPod"]
    assert SearchIndex([]).rank("anything", 5) == []


def test_catalogue_entries_carry_deprecated_into_the_index() -> None:
    catalogue = load_catalogue(GENERATED_DIR / "features_3_1")
    deprecated = [entry.name for entry in catalogue.tools if entry.deprecated]
    assert deprecated == ["legacyThing"]
    index = SearchIndex(catalogue.tools)
    assert index.rank("legacyThing", 1) == ["legacyThing"]
    assert SearchEntry.of(catalogue.tools[0]).name == catalogue.tools[0].name


def _registry() -> ToolRegistry:
    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        return "ok"

    def tool(entry: SearchEntry) -> Tool:
        scopes = (frozenset({"admin"}),) if entry.name.startswith("delete") else ()
        meta = {"mcp-bridge/operation": entry.operation}
        return Tool(name=entry.name, run=run, description=entry.description, title=entry.summary or None,
                    meta=meta, scopes=scopes)  # fmt: skip

    return ToolRegistry([tool(entry) for entry in ENTRIES])


def test_discovery_search_keeps_its_shape_paging_and_scope_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    found = Discovery(_registry(), deprecated={"teams_get-legacy"}).search("pod", limit=2)
    assert set(found) == {"operations", "matched", "next_offset"} and found["next_offset"] == 2
    first = found["operations"][0]
    assert set(first) == {"name", "summary", "operation", "annotations"}
    assert not first["name"].startswith("watch")  # the deprecated watch operations come last
    everything = Discovery(_registry()).search("pod", limit=50)["operations"]
    assert {op["name"] for op in everything} >= {"deleteCoreV1NamespacedPod", "watchCoreV1NamespacedPodList"}
    assert [op["name"] for op in everything][-2:] == [ENTRIES[0].name, ENTRIES[1].name]

    monkeypatch.setattr(discovery_module, "caller_scopes", lambda: frozenset({"read"}))
    granted = Discovery(_registry()).search("delete a pod", limit=50)
    assert "deleteCoreV1NamespacedPod" not in {op["name"] for op in granted["operations"]}
    assert granted["matched"] == len(granted["operations"])


QUERIES = st.one_of(
    st.text(),
    st.text(alphabet=string.punctuation + " \t\n"),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1).map(lambda s: s * 5000),
    st.lists(st.sampled_from([*sorted(NAMES), "pods", "GET", "/api/v1/pods", "{", "}"])).map(" ".join),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=QUERIES, limit=st.integers(-2, 40), only=st.none() | st.frozensets(st.sampled_from(sorted(NAMES))))
def test_any_query_returns_at_most_limit_known_names_without_raising(
    query: str, limit: int, only: frozenset[str] | None
) -> None:
    allowed = None if only is None else only.__contains__
    ranked = INDEX.rank(query, limit, allowed)
    assert len(ranked) <= max(limit, 0)
    assert len(set(ranked)) == len(ranked)
    assert set(ranked) <= (NAMES if only is None else only)


@pytest.mark.parametrize("name", sorted(GOLDEN_SPECS))
def test_every_golden_operation_is_found_first_by_its_name_and_its_operation(name: str) -> None:
    catalogue = load_catalogue(GENERATED_DIR / name)
    index = SearchIndex(catalogue.tools)
    for entry in catalogue.tools:
        assert index.rank(entry.name, 1) == [entry.name]
        assert index.rank(entry.operation, 1)[0] in {e.name for e in catalogue.tools if e.operation == entry.operation}


@pytest.mark.parametrize(
    ("description", "deprecated"),
    [
        ("watch individual changes to a list of Pod" + WATCH_NOTE, True),
        ("[Deprecated] An old operation", True),
        ("Lists teams. Deprecated - use the organization endpoint.", True),
        ("Deprecated fields are kept for old clients.", False),
        ("Lists pods; the response is not deprecated: see below.", False),
    ],
)
def test_a_description_says_deprecated_only_when_a_sentence_opens_with_it(description: str, deprecated: bool) -> None:
    assert says_deprecated(description) is deprecated
