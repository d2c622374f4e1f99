"""Golden record: regenerating each spec under specs/ gives generated/ byte for byte."""

from __future__ import annotations

import filecmp
import importlib.util
import os
import sys
from pathlib import Path

import pytest

from generator.generate import generate
from generator.options import GenerateOptions
from tests.golden import GENERATED_DIR, GOLDEN_SPECS, ROOT, spec_path


def _all_files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


@pytest.mark.parametrize("name", sorted(GOLDEN_SPECS))
def test_regenerating_a_golden_spec_gives_identical_files(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / name
    generate(str(spec_path(name).relative_to(ROOT)), out, GenerateOptions(name=name))
    golden = GENERATED_DIR / name
    files = _all_files(golden)
    assert _all_files(out) == files, "run `make golden` and review the diff"
    _match, mismatch, errors = filecmp.cmpfiles(golden, out, files, shallow=False)
    assert (mismatch, errors) == ([], []), "run `make golden` and review the diff"


@pytest.mark.parametrize("name", sorted(GOLDEN_SPECS))
@pytest.mark.parametrize(("module", "suffix"), [("inputs", "Input"), ("outputs", "Output")])
def test_golden_models_modules_import(name: str, module: str, suffix: str) -> None:
    path = GENERATED_DIR / name / "models" / f"{module}.py"
    spec = importlib.util.spec_from_file_location(f"golden_models_{name}_{module}", path)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded  # pydantic resolves generic models through sys.modules
    try:
        spec.loader.exec_module(loaded)
    finally:
        del sys.modules[spec.name]
    assert any(n.endswith(suffix) for n in vars(loaded))


def test_golden_server_module_compiles() -> None:
    for name in GOLDEN_SPECS:
        source = (GENERATED_DIR / name / "server.py").read_text(encoding="utf-8")
        compile(source, f"{name}/server.py", "exec")
    assert os.path.isdir(GENERATED_DIR)
