"""The per-call bench calls what it says and checks what comes back."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from bench import figures as f
from bench import github_repo, run_all, serve_bench
from bench.serve_bench import NO_SCHEMA, VALID, output_check

SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
    "required": ["id"],
}


@pytest.mark.parametrize(
    ("tool", "result", "expected"),
    [
        ({"outputSchema": SCHEMA}, {"structuredContent": {"id": 1, "name": "x"}}, VALID),
        ({"outputSchema": SCHEMA}, {"structuredContent": {"name": "x"}}, "invalid at /"),
        ({"outputSchema": SCHEMA}, {"structuredContent": {"id": "1"}}, "invalid at /id"),
        ({"outputSchema": SCHEMA}, {"content": [{"type": "text", "text": "{}"}]}, "no structuredContent"),
        ({"outputSchema": SCHEMA}, {"isError": True, "structuredContent": {"id": 1}}, "isError"),
        ({}, {"structuredContent": {"anything": 1}}, NO_SCHEMA),
        (None, {"content": []}, NO_SCHEMA),
    ],
)
def test_an_answer_is_checked_against_the_advertised_output_schema(
    tool: dict[str, Any] | None, result: dict[str, Any], expected: str
) -> None:
    assert output_check(tool, result).startswith(expected)


def _nulls_added(before: Any, after: Any) -> bool:
    """``after`` is ``before`` with only ``null`` members added to its objects."""
    if isinstance(before, dict) and isinstance(after, dict):
        return set(before) <= set(after) and all(
            _nulls_added(before[k], after[k]) if k in before else after[k] is None for k in after
        )
    if isinstance(before, list) and isinstance(after, list):
        return len(before) == len(after) and all(_nulls_added(b, a) for b, a in zip(before, after, strict=True))
    return bool(before == after)


@pytest.mark.node
def test_the_repository_answer_is_the_spec_example_and_validates_against_the_response_schema() -> None:
    from tests.node_tools import github_spec

    spec = json.loads(github_spec().read_text(encoding="utf-8"))
    example = spec["components"]["examples"][github_repo.EXAMPLE]["value"]
    body = github_repo.repository(spec)
    assert github_repo.schema_errors(spec, body) == []
    assert _nulls_added(example, body)
    assert body["full_name"] == "/".join(github_repo.ARGS.values())
    assert github_repo.PATH == "/repos/{owner}/{repo}".format(**github_repo.ARGS)


def test_the_bridge_serving_a_spec_file_is_measured_with_its_answer_checked() -> None:
    """The `mcp-bridge serve spec.json` row, end to end on petstore: started, listed, called, checked."""
    with serve_bench.Upstream() as upstream:
        servers = run_all.targets_for("petstore", upstream.url, peers=False, package=False)
        (target,) = [t for t in servers if t.label == f.BRIDGE_SPEC]
        run = serve_bench.run(serve_bench.measure(target, calls=5, warmup=1))
    assert run.error == ""
    assert run.tools == 6 and run.cold_start_s > 0
    call = run.calls["getPet"]
    assert call.error == "" and call.output == VALID
    assert not math.isnan(call.calls_per_s)
