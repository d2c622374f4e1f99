from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

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
