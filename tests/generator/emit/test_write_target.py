"""`generate -o DIR` writes only into a new or empty folder or its own package, and loses nothing else."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge.cli import cli
from generator.emit.write import MANIFEST_FILE, WriteError
from generator.generate import generate
from generator.options import GenerateOptions
from tests.generator.test_cli_generate import SPEC


def _snapshot(folder: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_symlink():
            out[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            out[rel] = path.read_bytes()
        else:
            out[rel] = "dir"
    return out


def _spec_here(folder: Path) -> Path:
    spec = folder / "api.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    return spec


def _folder_with_spec(tmp_path: Path) -> Path:
    _spec_here(tmp_path)
    return tmp_path


def _project_folder(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "main.py").write_text("print('mine')\n")
    return tmp_path / "project"


def _foreign_manifest(tmp_path: Path) -> Path:
    # A folder with someone else's manifest.json is not ours either.
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / MANIFEST_FILE).write_text('{"name": "my-pwa", "icons": []}')
    return tmp_path / "web"


def _a_file(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("keep me\n")
    return tmp_path / "notes.txt"


def _under_a_file(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("keep me\n")
    return tmp_path / "notes.txt" / "pkg"


REFUSED: list[Callable[[Path], Path]] = [_folder_with_spec, _project_folder, _foreign_manifest, _a_file, _under_a_file]


@pytest.mark.parametrize("make_target", REFUSED, ids=lambda f: f.__name__)
def test_a_target_that_is_not_new_empty_or_ours_is_refused_with_one_line_and_left_alone(
    tmp_path: Path, make_target: Callable[[Path], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _spec_here(tmp_path)
    target = make_target(tmp_path)
    before = _snapshot(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["generate", str(spec), "-o", str(target)])
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert _snapshot(tmp_path) == before
    with pytest.raises(WriteError):
        generate(str(spec), target, GenerateOptions())


def test_generate_into_the_current_folder_holding_the_spec_keeps_the_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _spec_here(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["generate", "api.yaml", "-o", "."])
    assert result.exit_code == 1
    assert spec.read_text(encoding="utf-8") == SPEC


def test_an_empty_existing_folder_is_written_in_place(tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    inode = out.stat().st_ino
    generate(str(_spec_here(tmp_path)), out, GenerateOptions())
    assert (out / MANIFEST_FILE).is_file() and out.stat().st_ino == inode
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_an_unwritable_place_is_one_line(tmp_path: Path) -> None:
    # /proc refuses new folders even to root; a read-only folder refuses everyone else.
    locked = Path("/proc") if os.geteuid() == 0 else tmp_path / "locked"
    if locked != Path("/proc"):
        locked.mkdir()
        locked.chmod(0o500)
    try:
        result = CliRunner().invoke(cli, ["generate", str(_spec_here(tmp_path)), "-o", str(locked / "pkg")])
    finally:
        if locked != Path("/proc"):
            locked.chmod(0o700)
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1, result.output
    assert "Traceback" not in result.output


_NAMES = st.text(alphabet="abcdefgh_.", min_size=1, max_size=8).filter(lambda n: n not in (".", ".."))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    files=st.dictionaries(
        st.lists(_NAMES, min_size=1, max_size=3).map(tuple), st.binary(max_size=20), min_size=1, max_size=6
    )
)
def test_regenerating_keeps_every_file_the_user_added(tmp_path_factory: pytest.TempPathFactory, files: dict) -> None:
    root = tmp_path_factory.mktemp("regen")
    out = root / "pkg"
    spec = _spec_here(root)
    generate(str(spec), out, GenerateOptions())
    generated = _snapshot(out)
    added: dict[str, bytes] = {}
    for parts, content in files.items():
        rel = str(Path(*parts))
        prefixes = [str(Path(*parts[:i])) for i in range(1, len(parts))]
        taken = rel in generated or rel in added or any(k.startswith(rel + "/") for k in added)
        if taken or any(generated.get(p, "dir") != "dir" or p in added for p in prefixes):
            continue  # a path the tool writes, or one this example already used
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        added[rel] = content
    (out / "hooks.py").write_text("# my hooks\n")
    generate(str(spec), out, GenerateOptions())
    after = _snapshot(out)
    for rel, content in added.items():
        assert after[rel] == content
    assert after["hooks.py"] == b"# my hooks\n"


def test_regenerating_keeps_symlinks_as_links(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    spec = _spec_here(tmp_path)
    generate(str(spec), out, GenerateOptions())
    (tmp_path / "data").mkdir()
    (out / "data").symlink_to(tmp_path / "data")
    (out / "spec-link.yaml").symlink_to(spec)
    generate(str(spec), out, GenerateOptions())
    assert os.readlink(out / "data") == str(tmp_path / "data")
    assert os.readlink(out / "spec-link.yaml") == str(spec)


def test_package_folders_and_files_follow_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        out = tmp_path / "pkg"
        generate(str(_spec_here(tmp_path)), out, GenerateOptions())
        generate(str(_spec_here(tmp_path)), out, GenerateOptions())  # the swapped-in folder too
    finally:
        os.umask(previous)
    for path in [out, *out.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o755 if path.is_dir() else 0o644), (path, oct(mode))


ROOT = Path(__file__).resolve().parents[3]


def _generate(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["generate", *args])
    return result.exit_code, result.output


def test_generating_another_api_onto_a_package_is_refused_naming_what_differs(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    code, _ = _generate(str(ROOT / "specs" / "petstore.yaml"), "-o", str(out))
    assert code == 0
    before = _snapshot(out)
    code, output = _generate(str(ROOT / "specs" / "jobs.yaml"), "-o", str(out))
    assert code == 1
    assert "another API" in output and "'Petstore'" in output and "'Jobs'" in output and "--replace" in output
    assert "Traceback" not in output
    assert _snapshot(out) == before  # nothing was written


def test_replace_writes_over_it_with_the_new_apis_own_names(tmp_path: Path) -> None:
    out = tmp_path / "pets"
    assert _generate(str(ROOT / "specs" / "petstore.yaml"), "-o", str(out))[0] == 0
    code, output = _generate(str(ROOT / "specs" / "jobs.yaml"), "-o", str(out), "--replace")
    assert code == 0, output
    manifest = json.loads((out / MANIFEST_FILE).read_text())
    assert manifest["api"]["title"] == "Jobs"
    assert manifest["env_prefix"] == "PETS"  # from the folder's name, as for a new package, not the old manifest


def test_the_same_api_changed_is_regenerated_in_place(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    spec = tmp_path / "petstore.yaml"
    text = (ROOT / "specs" / "petstore.yaml").read_text()
    spec.write_text(text)
    assert _generate(str(spec), "-o", str(out))[0] == 0
    spec.write_text(text.replace("version: 1.0.0", "version: 1.1.0", 1))
    code, output = _generate(str(spec), "-o", str(out))
    assert code == 0, output


def test_a_package_from_before_the_manifest_named_its_api_is_judged_by_its_operations(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    assert _generate(str(ROOT / "specs" / "petstore.yaml"), "-o", str(out))[0] == 0
    manifest = json.loads((out / MANIFEST_FILE).read_text())
    del manifest["api"]
    (out / MANIFEST_FILE).write_text(json.dumps(manifest))
    assert _generate(str(ROOT / "specs" / "petstore.yaml"), "-o", str(out))[0] == 0  # same operations
    manifest = json.loads((out / MANIFEST_FILE).read_text())
    del manifest["api"]
    (out / MANIFEST_FILE).write_text(json.dumps(manifest))
    code, output = _generate(str(ROOT / "specs" / "jobs.yaml"), "-o", str(out))
    assert code == 1 and "0 of its" in output
