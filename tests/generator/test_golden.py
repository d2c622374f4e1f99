"""Golden record: regenerating each spec under specs/ gives generated/ byte for byte."""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.generate import generate
from tests.golden import GENERATED_DIR, GOLDEN_SPECS, ROOT, golden_options, spec_path

MYPY_TIMEOUT = 120


def _all_files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


@pytest.mark.parametrize("name", sorted(GOLDEN_SPECS))
def test_regenerating_a_golden_spec_gives_identical_files(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / name
    generate(str(spec_path(name).relative_to(ROOT)), out, golden_options(name))
    golden = GENERATED_DIR / name
    files = _all_files(golden)
    assert _all_files(out) == files, "run `make golden` and review the diff"
    _match, mismatch, errors = filecmp.cmpfiles(golden, out, files, shallow=False)
    assert (mismatch, errors) == ([], []), "run `make golden` and review the diff"


HOOK_USING_STUBS = """
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .api import GetPetInput, GetPetOutput


def describe(args: GetPetInput, pet: GetPetOutput) -> str:
    return f"{args[FIELD]}: {pet.get('name')}"
"""


@pytest.mark.parametrize(("field", "clean"), [("'petId'", True), ("'petID'", False)])
def test_hooks_get_their_types_from_api_pyi(tmp_path: Path, field: str, clean: bool) -> None:
    package = tmp_path / "petstore"
    shutil.copytree(GENERATED_DIR / "petstore", package, ignore=shutil.ignore_patterns("__pycache__"))
    (package / "typed_hook.py").write_text(HOOK_USING_STUBS.replace("FIELD", field), encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--no-incremental",
            "petstore/typed_hook.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=MYPY_TIMEOUT,
    )
    assert (done.returncode == 0) is clean, done.stdout
    if not clean:
        assert '"petID"' in done.stdout and "typed_hook.py" in done.stdout


def test_golden_server_module_compiles() -> None:
    for name in GOLDEN_SPECS:
        source = (GENERATED_DIR / name / "server.py").read_text(encoding="utf-8")
        compile(source, f"{name}/server.py", "exec")
    assert os.path.isdir(GENERATED_DIR)
