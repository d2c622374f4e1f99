"""A generation runs with fewer collections and gives the collector's settings back, error or not."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from generator import generate as generate_module
from generator.generate import GENERATION_GC_THRESHOLD, fewer_collections, generate
from generator.issues import GenerationError
from generator.options import GenerateOptions
from tests.golden import spec_path


def test_the_threshold_is_raised_for_a_generation_and_restored_after(tmp_path: Path) -> None:
    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []
    real = generate_module.shape_api

    def watching(*args: object, **kwargs: object) -> object:
        seen.append(gc.get_threshold())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(generate_module, "shape_api", watching)
        generate(str(spec_path("petstore")), tmp_path / "p")
    assert seen and seen[0][0] >= GENERATION_GC_THRESHOLD and seen[0][1:] == before[1:]
    assert gc.get_threshold() == before


def test_a_failed_generation_restores_the_threshold_too(tmp_path: Path) -> None:
    before = gc.get_threshold()
    with pytest.raises(GenerationError):  # a filter that leaves no tool is an error
        generate(str(spec_path("petstore")), tmp_path / "out", GenerateOptions(include_tags=("no-such-tag",)))
    assert gc.get_threshold() == before
    with pytest.raises(ValueError), fewer_collections():
        raise ValueError("boom")
    assert gc.get_threshold() == before
