"""The catalogue cache entry is made from the very bytes its key was made from: a spec or overlay
saved during start-up (between the key's read and generation) cannot leave an entry that serves
the other version's tools under this version's key."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from bridge.serving.spec_cache import CatalogueCache
from bridge.serving.spec_target import load_spec_target
from generator.generate import build_served
from generator.options import GenerateOptions
from tests.golden import spec_path

OVERLAY_A = (
    "overlay: 1.0.0\ninfo: {title: a, version: '1'}\n"
    "actions:\n  - target: $.info\n    update: {description: tailored}\n"
)
OVERLAY_B = (
    "overlay: 1.0.0\ninfo: {title: b, version: '1'}\n"
    "actions:\n  - target: $.paths['/pets/{petId}'].delete\n    remove: true\n"
)


def saved_during_start_up(monkeypatch: pytest.MonkeyPatch, path: Path, later: str) -> list[str]:
    """Right after the cache key is made (the first read), ``path`` is saved with ``later``."""
    original = CatalogueCache.for_spec
    keys: list[str] = []

    def then_saved(cls: type[CatalogueCache], *args: Any, **kwargs: Any) -> CatalogueCache | None:
        cache = original(*args, **kwargs)
        keys.append(cache.key if cache is not None else "")
        path.write_text(later, encoding="utf-8")
        return cache

    monkeypatch.setattr(CatalogueCache, "for_spec", classmethod(then_saved))
    return keys


def tools_of(catalogue: Any) -> list[str]:
    return sorted(tool.name for tool in catalogue.tools)


@pytest.mark.parametrize("changed", ["spec", "overlay"])
def test_a_file_saved_during_start_up_never_mixes_versions_in_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changed: str
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    spec = tmp_path / "petstore.yaml"
    shutil.copyfile(spec_path("petstore"), spec)
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(OVERLAY_A, encoding="utf-8")
    first_bytes = {"spec": spec.read_text(encoding="utf-8"), "overlay": OVERLAY_A}
    # Version B lacks deletePet: the spec loses that operation, or the overlay removes it.
    later = first_bytes["spec"].replace("operationId: deletePet", "operationId: deletePetNoMore")
    if changed == "overlay":
        later = OVERLAY_B
    expected = tools_of(build_served(str(spec), GenerateOptions(overlays=(str(overlay),))).catalogue)
    with monkeypatch.context() as patched:
        keys = saved_during_start_up(patched, spec if changed == "spec" else overlay, later)
        served = load_spec_target(str(spec), overlays=[str(overlay)])
    (spec if changed == "spec" else overlay).write_text(first_bytes[changed], encoding="utf-8")
    options = GenerateOptions(overlays=(str(overlay),))
    entry = CatalogueCache.for_spec(str(spec), overlays=[str(overlay)], options=options)
    assert entry is not None and entry.key == keys[0]  # the first bytes again: the key of the entry written
    hit = entry.load()
    assert hit is not None
    assert tools_of(served) == expected  # served what the key says
    assert tools_of(hit.catalogue) == expected  # and cached it under that key
    assert "deletePet" in expected
