"""Wire conformance: every tool of a few generated packages, called against a Prism mock of its spec.

Prism 5.14.2 (pinned in tests/node) validates each request the bridge sends against the spec;
``bench.prism`` draws schema-valid arguments from each tool's input schema and classifies every
call. A failing call is a Prism request-validation violation, a refused credential, an unmatched
route or Accept header, no response, or an ``isError`` result for one of Prism's 2xx answers.
Violations that are Prism's own limits are excluded in ``bench.prism.EXCLUSIONS`` (by message
and request media type, each with its reason); requests that crash Prism are not sent
(``bench.prism.PRISM_CRASHES``). The full report is bench/PRISM.md.
"""

from __future__ import annotations

import json

import pytest

from bench.prism import FAST_SPECS, run_spec, spec_set

pytestmark = pytest.mark.node

SPEC_BUDGET = 40.0  # seconds for one spec: generate, start Prism, call every tool


@pytest.mark.parametrize("spec_id", FAST_SPECS)
def test_prism_sees_no_request_violation(spec_id: str) -> None:
    spec = next(s for s in spec_set("fast") if s.id == spec_id)

    report = run_spec(spec, examples=3, budget=SPEC_BUDGET)

    assert report.status == "ok", report.reason
    assert report.tools > 0
    assert report.tools_called + len(report.tools_without_args) == report.tools
    failures = [
        f"{c.tool} ({c.example}) -> {c.outcome} HTTP {c.status}: {c.message}\n"
        f"    args {json.dumps(c.args, ensure_ascii=False)}\n    request {c.request}"
        for c in report.failures()
    ]
    assert failures == [], "\n".join(failures)
    assert any(c.outcome == "ok" for c in report.calls)
