from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True, scope="session")
def private_cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``serve SPEC`` caches catalogues under the user's cache folder: the suite keeps its own.

    Without this, every run would leave entries in the developer's ``~/.cache`` and a test could be served from
    an entry an earlier run wrote. Child processes inherit the variable. Tests that check the cache's own rules
    set ``XDG_CACHE_HOME`` themselves.
    """
    folder = tmp_path_factory.mktemp("xdg-cache")
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(folder)
    yield folder
    if before is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = before


# `make test-fast` is the inner loop: no subprocess servers (`serve` as a process, nginx, redis-server).
# Tests that start one carry the `server` marker, given here by place so no test file has to remember it;
# with MCP_BRIDGE_NO_SERVERS=1 (the target sets it) a test that starts one anyway fails, naming this list.
SERVER_PLACES = (
    "tests/e2e/",
    "tests/ops/",
    "tests/bench/test_calls.py",
    "tests/bench/test_mcp_load.py",
    "tests/bench/test_reports.py",
    "tests/bridge/modes/codemode/test_lifecycle.py",
    "tests/bridge/modes/codemode/test_http.py",
    "tests/bridge/serving/test_startup_imports.py",
    "tests/bridge/serving/test_hooks.py",
    "tests/bridge/serving/test_spec_cache.py",
    "tests/bridge/serving/test_startup.py",
    "tests/security/test_secrets.py",
    "tests/test_cancel_wire.py",
)
_ROOT = Path(__file__).resolve().parents[1]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        place = item.path.resolve().relative_to(_ROOT).as_posix()
        if place.startswith(SERVER_PLACES):
            item.add_marker(pytest.mark.server)


def _starts_a_server(args: object) -> bool:
    words = [str(a) for a in args] if isinstance(args, (list, tuple)) else str(args).split()
    names = [w.rsplit("/", 1)[-1] for w in words]
    if any(name in ("nginx", "redis-server") for name in names):
        return True
    return "serve" in words and any(w in ("bridge", "mcp-bridge") or w.endswith("/mcp-bridge") for w in words)


@pytest.fixture(autouse=True)
def no_servers_in_the_fast_tier(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if os.environ.get("MCP_BRIDGE_NO_SERVERS") != "1" or request.node.get_closest_marker("server"):
        return
    real = subprocess.Popen.__init__

    def guarded(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        if _starts_a_server(args):
            raise AssertionError(f"{request.node.nodeid} starts a server process: add its file to SERVER_PLACES")
        real(self, args, *rest, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", guarded)
