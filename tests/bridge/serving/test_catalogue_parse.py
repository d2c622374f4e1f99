"""The cyclic collector is paused while a catalogue is parsed (Graph's 162 MB: 6.6 s -> 1.6 s) and restored after."""

from __future__ import annotations

import gc
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from bridge.contract.catalogue import CATALOGUE_FILE
from bridge.serving.package import load_catalogue
from bridge.tools.errors import PackageError
from tests.golden import GENERATED_DIR


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    seen: list[bool] = []
    real = json.loads

    def loads(text: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(text, **kwargs)

    monkeypatch.setattr(json, "loads", loads)
    return seen


@pytest.mark.parametrize("text", [None, "{not json", '{"format": 1}'], ids=["good", "not-json", "invalid"])
def test_the_collector_is_paused_during_the_parse_and_enabled_after(
    text: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(GENERATED_DIR / "petstore" / CATALOGUE_FILE, tmp_path / CATALOGUE_FILE)
    if text is not None:
        (tmp_path / CATALOGUE_FILE).write_text(text, encoding="utf-8")
    seen = _spy(monkeypatch)
    assert gc.isenabled()
    if text is None:
        assert load_catalogue(tmp_path).tools
    else:
        with pytest.raises(PackageError):
            load_catalogue(tmp_path)
    assert seen == [False]
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _spy(monkeypatch)
    gc.disable()
    try:
        load_catalogue(GENERATED_DIR / "petstore")
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert seen == [False]
