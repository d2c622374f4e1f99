"""`mcp-bridge generate` as a user runs it: exit codes, one-line errors, safe writes, regeneration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bridge.cli import cli
from generator.emit import write as write_module
from generator.generate import generate
from generator.options import GenerateOptions

SPEC = """
openapi: 3.0.3
info: {title: Tiny API, version: "1"}
servers: [{url: "https://tiny.example/v1"}]
paths:
  /things:
    get:
      operationId: listThings
      responses:
        "200":
          description: ok
          content: {application/json: {schema: {type: array, items: {type: string}}}}
  /things/{id}:
    delete:
      operationId: deleteThing
      parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
      responses: {"204": {description: gone}}
"""


def _spec(tmp_path: Path, text: str = SPEC, name: str = "api.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_generate_writes_a_package_and_exits_zero(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    result = CliRunner().invoke(cli, ["generate", str(_spec(tmp_path)), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "README.md",
        "__init__.py",
        "api.pyi",
        "catalogue.json",
        "hooks.py",
        "manifest.json",
        "requirements.txt",
        "server.py",
    ]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["tools"] == {"deleteThing": "DELETE /things/{id}", "listThings": "GET /things"}


def test_regenerating_an_old_package_removes_the_models_it_wrote_and_keeps_the_users(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    generate(str(_spec(tmp_path)), out, GenerateOptions())
    # What an older mcp-bridge left: models/ listed in its manifest, and a file of the user's beside it.
    (out / "models").mkdir()
    old = ["models/__init__.py", "models/inputs.py", "models/outputs.py"]
    for rel in old:
        (out / rel).write_text("# generated\n", encoding="utf-8")
    (out / "models" / "mine.py").write_text("# mine\n", encoding="utf-8")
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**manifest, "files": sorted([*manifest["files"], *old])}))
    result = CliRunner().invoke(cli, ["generate", str(_spec(tmp_path)), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (out / "models").iterdir()) == ["mine.py"]
    assert all("models/" not in rel for rel in json.loads((out / "manifest.json").read_text())["files"])


def test_no_models_is_a_deprecated_flag_that_warns_and_changes_nothing(tmp_path: Path) -> None:
    plain, flagged = tmp_path / "plain", tmp_path / "flagged"
    assert CliRunner().invoke(cli, ["generate", str(_spec(tmp_path)), "-o", str(plain)]).exit_code == 0
    result = CliRunner().invoke(cli, ["generate", str(_spec(tmp_path)), "-o", str(flagged), "--no-models"])
    assert result.exit_code == 0, result.output
    assert [line for line in result.output.splitlines() if "--no-models" in line] == [
        "warning: --no-models is deprecated and does nothing: packages have no models/ (api.pyi is typed)"
    ]
    assert not (flagged / "models").exists()
    assert (flagged / "api.pyi").read_bytes() == (plain / "api.pyi").read_bytes()


def test_broken_yaml_is_one_line_naming_the_file(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "openapi: 3.0.3\ninfo: [unclosed\n")
    result = CliRunner().invoke(cli, ["generate", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and str(spec) in lines[0]
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_a_document_that_is_not_openapi_is_one_clear_line(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "name: not an api\n")
    result = CliRunner().invoke(cli, ["generate", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "not an OpenAPI document" in result.output


def test_unknown_option_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["generate", str(_spec(tmp_path)), "--no-such-option"])
    assert result.exit_code == 2


def test_strict_turns_a_skipped_operation_into_an_error(tmp_path: Path) -> None:
    broken = (
        SPEC
        + """
  /orphan/{missing}:
    get:
      operationId: orphan
      responses: {"204": {description: ok}}
"""
    )
    spec = _spec(tmp_path, broken)
    relaxed = CliRunner().invoke(cli, ["generate", str(spec), "-o", str(tmp_path / "a")])
    assert relaxed.exit_code == 0 and "GET /orphan/{missing}" in relaxed.output
    strict = CliRunner().invoke(cli, ["generate", str(spec), "-o", str(tmp_path / "b"), "--strict"])
    assert strict.exit_code == 1 and "GET /orphan/{missing}" in strict.output
    assert not (tmp_path / "b").exists()


def test_regenerating_reports_added_renamed_and_removed_tools_and_keeps_hooks(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    generate(str(_spec(tmp_path)), out, GenerateOptions())
    (out / "hooks.py").write_text("# mine\n", encoding="utf-8")
    other = "  /other:\n    get:\n      operationId: other\n      responses: {'204': {description: ok}}\n"
    changed = SPEC.replace("operationId: deleteThing", "operationId: removeThing").replace(
        "  /things/{id}:", other + "  /things/{id}:"
    )
    result = CliRunner().invoke(cli, ["generate", str(_spec(tmp_path, changed)), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "+ other" in result.output
    assert "~ deleteThing -> removeThing" in result.output
    assert (out / "hooks.py").read_text(encoding="utf-8") == "# mine\n"


def test_a_crash_while_writing_leaves_the_old_package_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "pkg"
    generate(str(_spec(tmp_path)), out, GenerateOptions())
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    calls = 0
    real_write = write_module._write_file

    def failing_write(path: Path, content: bytes) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise OSError("disk full")
        real_write(path, content)

    monkeypatch.setattr(write_module, "_write_file", failing_write)
    changed = SPEC.replace("listThings", "listAllThings")
    with pytest.raises(OSError):
        generate(str(_spec(tmp_path, changed)), out, GenerateOptions())
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".pkg")] == []


def test_generation_is_byte_identical_across_runs(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    generate(str(spec), tmp_path / "one", GenerateOptions())
    generate(str(spec), tmp_path / "two", GenerateOptions())
    files = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "two") for p in (tmp_path / "two").rglob("*") if p.is_file())
    for path in files:
        assert (tmp_path / "one" / path).read_bytes() == (tmp_path / "two" / path).read_bytes(), path


def test_config_file_overrides_name_and_annotations(tmp_path: Path) -> None:
    config = tmp_path / "bridge.yaml"
    config.write_text(
        "operations:\n  listThings: {name: things, annotations: {openWorldHint: false}}\n"
        "  'DELETE /things/{id}': {exclude: true}\n",
        encoding="utf-8",
    )
    out = tmp_path / "pkg"
    result = CliRunner().invoke(cli, ["generate", str(_spec(tmp_path)), "-o", str(out), "--config", str(config)])
    assert result.exit_code == 0, result.output
    catalogue = json.loads((out / "catalogue.json").read_text())
    assert [t["name"] for t in catalogue["tools"]] == ["things"]
    assert catalogue["tools"][0]["annotations"]["openWorldHint"] is False


def test_generate_runs_from_a_thread_other_than_the_main_one(tmp_path: Path) -> None:
    import threading

    results: list[int] = []
    spec = _spec(tmp_path)
    worker = threading.Thread(
        target=lambda: results.append(
            CliRunner().invoke(cli, ["generate", str(spec), "-o", str(tmp_path / "pkg")]).exit_code
        )
    )
    worker.start()
    worker.join(timeout=60)
    assert results == [0]
