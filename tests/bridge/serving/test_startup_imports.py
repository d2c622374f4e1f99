"""What serving imports, and what importing the bridge changes (issue 3's floor; the layering).

Start-up time and memory are part of the product: serving a generated package must not load the
generator or the spec tooling. The real console script is run, as users run it, and Python's own
import log (``-X importtime``) says what it loaded.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.golden import GENERATED_DIR

# Modules serving a generated package must not import: the generator and the spec tooling (the
# package is already generated), and httpx's command-line client (rich, pygments). uvicorn is not
# listed: the SDK's low-level server imports it itself.
NOT_AT_STARTUP = ("generator", "openapi_core", "openapi_spec_validator", "rich", "pygments")


def _console_script() -> list[str]:
    script = Path(sys.executable).with_name("mcp-bridge")
    if script.exists():
        return [str(script)]
    found = shutil.which("mcp-bridge")
    assert found, "the mcp-bridge console script is not installed"
    return [found]


def modules_imported_by(command: list[str]) -> set[str]:
    """Every module a command imports, from ``PYTHONPROFILEIMPORTTIME``'s log on stderr."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    done = subprocess.run(command, input="", capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name)
    return names


def imported_by(command: list[str]) -> set[str]:
    """Top-level packages a command imports."""
    return {name.split(".")[0] for name in modules_imported_by(command)}


def test_the_serve_console_script_imports_no_generator_module() -> None:
    loaded = imported_by([*_console_script(), "serve", str(GENERATED_DIR / "petstore")])
    assert {"httpx", "mcp", "bridge"} <= loaded  # the server did start
    assert loaded.isdisjoint(NOT_AT_STARTUP), sorted(loaded & set(NOT_AT_STARTUP))


# What a tools-mode server without client authentication has no use for (about 4 MB of peak RSS
# and 60 ms of imports together): code mode's modules, the sandbox, BM25's numpy, PyJWT.
ONLY_WHEN_USED = ("bridge.modes.codemode", "bridge.modes.stubsource", "pydantic_monty", "numpy", "rank_bm25", "jwt")


def test_a_tools_mode_server_loads_neither_code_mode_nor_jwt() -> None:
    package = str(GENERATED_DIR / "petstore")
    plain = modules_imported_by([*_console_script(), "serve", package])
    assert "bridge.server.handlers" in plain
    assert plain.isdisjoint(ONLY_WHEN_USED), sorted(plain & set(ONLY_WHEN_USED))
    code = modules_imported_by([*_console_script(), "serve", package, "--mode", "code"])
    assert {"bridge.modes.codemode", "bridge.modes.stubsource"} <= code  # the same log does see them when they serve


PROBE = """
import json, sys, gc
before = dict(sys.modules)
threshold = gc.get_threshold(); enabled = gc.isenabled(); frozen = gc.get_freeze_count()
import bridge, bridge.serving.assemble, bridge.http_tools, bridge.server, bridge.tools
import bridge.content, bridge.credentials, bridge.transports
changed = sorted(k for k, v in before.items() if sys.modules.get(k) is not v)
none_entries = sorted(k for k, v in sys.modules.items() if v is None and k not in before)
print(json.dumps({
    "changed": changed, "none": none_entries,
    "gc": [gc.get_threshold() == threshold, gc.isenabled() == enabled, gc.get_freeze_count() == frozen],
}))
"""


def test_importing_the_bridge_as_a_library_changes_nothing_process_wide() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True)
    report = json.loads(done.stdout)
    assert report["changed"] == []  # no module the host had was replaced
    assert report["none"] == []  # no import was blocked (httpx's CLI stays importable)
    assert report["gc"] == [True, True, True]
