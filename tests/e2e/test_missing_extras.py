"""A missing optional dependency is one line, never a traceback: the real CLI in a subprocess, with
the extras (and what a slim install leaves out) made unimportable by a meta path blocker on
PYTHONPATH. Asked for (``--otel``, ``--metrics-port``, ``--limits-redis``, ``--validate-responses``,
a mode, ``generate``...): exit 1 and exactly one stderr line naming what to install. Not asked for
(``OTEL_*`` variables alone, exact token counts): the command goes on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bridge.contract.version import DISTRIBUTION
from tests.e2e.conftest import PACKAGE, ROOT

BLOCKER = '''
import os, sys
_BLOCKED = tuple(filter(None, os.environ.get("BLOCKED_MODULES", "").split(",")))


class _Blocker:
    """Every module named (and its submodules) is not installed, as far as imports can tell."""

    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in _BLOCKED):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Blocker())
'''
OTEL = "opentelemetry.sdk,opentelemetry.exporter"
GENERATOR = "yaml,jinja2,rich,openapi_spec_validator,jsonschema_path,openapi_schema_validator"
SPEC = str(ROOT / "specs" / "petstore.yaml")
WORKFLOWS = str(ROOT / "generated" / "pet_coupons_workflows")
KEY = {"PETSTORE_API_KEY": "a-long-enough-demo-key"}

# (what is asked, modules missing, command, extra environment, the line's must-have, exit status)
CASES = {
    "--otel without the otel extra": (OTEL, ["serve", PACKAGE, "--otel", "traces"], {}, f"{DISTRIBUTION}[otel]", 1),
    "OTEL_* alone without the extra": (OTEL, ["serve", PACKAGE], {"OTEL_TRACES_EXPORTER": "otlp"}, "", 0),
    "--metrics-port without prometheus": (
        "prometheus_client",
        ["serve", PACKAGE, "--transport", "http", "--port", "9", "--metrics-port", "9"],
        {},
        f"{DISTRIBUTION}[prometheus]",
        1,
    ),
    "--limits-redis without redis": (
        "redis",
        ["serve", PACKAGE, "--limits-redis", "redis://127.0.0.1:9/0"],
        {},
        f"{DISTRIBUTION}[redis]",
        1,
    ),
    "--validate-responses without openapi-core": (
        "openapi_core",
        ["serve", PACKAGE, "--validate-responses", "--spec", SPEC],
        {},
        f"{DISTRIBUTION}[validate]",
        1,
    ),
    "inspect without tiktoken": ("tiktoken", ["inspect", SPEC], {}, "", 0),
    "discovery mode, slim": ("rank_bm25,numpy", ["serve", PACKAGE, "--mode", "discovery"], {}, "rank-bm25", 1),
    "code mode, slim": ("pydantic_monty", ["serve", PACKAGE, "--mode", "code"], {}, "pydantic-monty", 1),
    "workflows, slim": ("jsonpath", ["serve", WORKFLOWS, "--base-url", "http://127.0.0.1:9"], {}, "python-jsonpath", 1),
    "generate, slim": (GENERATOR, ["generate", SPEC, "-o", "{tmp}/out"], {}, f"pip install {DISTRIBUTION}", 1),
    "inspect, slim": (GENERATOR, ["inspect", SPEC], {}, f"pip install {DISTRIBUTION}", 1),
    "serve SPEC, slim": (GENERATOR, ["serve", SPEC, "--no-cache"], {}, f"pip install {DISTRIBUTION}", 1),
}


@pytest.mark.parametrize(("blocked", "args", "env", "named", "status"), CASES.values(), ids=CASES.keys())
def test_a_missing_dependency_is_one_line_or_nothing_never_a_traceback(
    tmp_path: Path, blocked: str, args: list[str], env: dict[str, str], named: str, status: int
) -> None:
    (tmp_path / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    environ = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "MCP_BRIDGE_"))},
        **KEY,
        **env,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "BLOCKED_MODULES": blocked,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    command = [sys.executable, "-m", "bridge", *(str(a).replace("{tmp}", str(tmp_path)) for a in args)]
    done = subprocess.run(
        command, env=environ, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == status, done.stderr[-3000:]
    if status:
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and named in lines[0], done.stderr[-3000:]


def test_every_named_extra_and_package_is_one_pyproject_installs() -> None:
    import tomllib

    from bridge.cli.extras import EXTRAS, SLIM_LEAVES_OUT
    from bridge.contract.runtime_requirements import RUNTIME_REQUIREMENTS

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert {extra for extra, _ in EXTRAS.values()} <= set(project["optional-dependencies"])
    dependencies = {d.split("=")[0].split(">")[0].split("[")[0].lower() for d in project["dependencies"]}
    runtime = {d.split("=")[0].split(">")[0].split("[")[0].lower() for d in RUNTIME_REQUIREMENTS}
    named = {package for package, _ in SLIM_LEAVES_OUT.values()}
    assert named <= dependencies and not named & runtime  # left out of a slim install, in a full one
