"""The MCP conformance suite against ``mcp-bridge serve generated/petstore --transport http``.

- ``@modelcontextprotocol/conformance`` 0.1.13 (pinned in tests/node; runs on Node 20 as is):
  ``conformance server --suite all --expected-failures conformance-baseline.yml``.
- 0.2.0-alpha.12 (pinned in ``conformance_next/``, with the 2026-07-28 scenarios): the same for
  ``--spec-version 2026-07-28`` and ``2025-11-25`` with ``conformance-next-baseline.yml``. It
  imports ``fs.globSync`` (Node 22+), so it runs through the loader shim in
  ``conformance_next/node20-shim``.

Exit 0 means every scenario outside the baseline passed and no baselined one started passing.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import anyio
import pytest

from tests.e2e.conftest import Upstream, http_bridge
from tests.node_tools import ensure_node_modules, npm_ci

pytestmark = [pytest.mark.anyio, pytest.mark.node]

HERE = Path(__file__).resolve().parent
BASELINE = HERE / "conformance-baseline.yml"
NEXT_DIR = HERE / "conformance_next"
NEXT_BASELINE = HERE / "conformance-next-baseline.yml"
SUITE_TIMEOUT = 60.0
MUST_PASS = ("server-initialize", "ping", "tools-list", "server-sse-multiple-streams", "dns-rebinding-protection")
MUST_PASS_NEXT = {
    "2026-07-28": ("tools-list", "server-sse-multiple-streams", "dns-rebinding-protection", "http-header-validation"),
    "2025-11-25": ("server-initialize", "server-session-lifecycle", "ping", "tools-list", "dns-rebinding-protection"),
}


def node() -> str:
    path = shutil.which("node")
    assert path is not None, "Node.js is needed for this test"
    return path


def ensure_conformance_next() -> Path:
    """``conformance_next/node_modules``, installed on first use."""
    return npm_ci(NEXT_DIR)


def scenario_statuses(output_dir: Path) -> dict[str, list[str]]:
    """Scenario name -> the status of each of its checks, from ``-o`` output (``server-<name>-<time>/checks.json``)."""
    statuses: dict[str, list[str]] = {}
    for checks in output_dir.glob("server-*/checks.json"):
        name = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", checks.parent.name.removeprefix("server-"))
        statuses[name] = [check["status"] for check in json.loads(checks.read_text(encoding="utf-8"))]
    return statuses


async def run_suite(
    command: list[str], url: str, baseline: Path, tmp_path: Path, *options: str
) -> dict[str, list[str]]:
    """Run ``command server`` against ``url``; assert exit 0 and return the scenario statuses."""
    output_dir = tmp_path / "results"
    full = [*command, "server", "--url", url, "--suite", "all", "--expected-failures", str(baseline), *options]
    with anyio.fail_after(SUITE_TIMEOUT):
        done = await anyio.run_process([*full, "-o", str(output_dir)], cwd=tmp_path, check=False)
    report = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
    assert done.returncode == 0, report
    assert "Baseline check passed" in report, report
    return scenario_statuses(output_dir)


def assert_passed(statuses: dict[str, list[str]], scenarios: tuple[str, ...]) -> None:
    for scenario in scenarios:
        assert statuses.get(scenario), f"{scenario} did not run"
        assert "SUCCESS" in statuses[scenario], (scenario, statuses[scenario])
        assert set(statuses[scenario]) <= {"SUCCESS", "INFO"}, (scenario, statuses[scenario])


async def test_conformance_suite_passes_outside_the_baseline(upstream: Upstream, tmp_path: Path) -> None:
    conformance = ensure_node_modules() / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    async with http_bridge(upstream, tmp_path) as bridge:
        statuses = await run_suite([node(), str(conformance)], bridge.url, BASELINE, tmp_path)
    assert_passed(statuses, MUST_PASS)
    assert len(statuses) == 32


@pytest.mark.parametrize("spec_version", ["2026-07-28", "2025-11-25"])
async def test_next_conformance_suite_passes_outside_the_baseline(
    upstream: Upstream, tmp_path: Path, spec_version: str
) -> None:
    conformance = ensure_conformance_next() / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    shim = NEXT_DIR / "node20-shim" / "register.mjs"
    command = [node(), "--import", shim.as_uri(), str(conformance)]
    async with http_bridge(upstream, tmp_path) as bridge:
        statuses = await run_suite(command, bridge.url, NEXT_BASELINE, tmp_path, "--spec-version", spec_version)
    assert_passed(statuses, MUST_PASS_NEXT[spec_version])
