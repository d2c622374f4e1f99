"""The catalogue cache of ``serve spec.yaml`` is used only when it matches, and never trusted otherwise."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import bridge.serving.spec_cache as spec_cache
from bridge.serving.spec_cache import CatalogueCache, cache_root
from bridge.serving.spec_target import load_spec_target
from generator.emit.render import catalogue_json
from generator.generate import build_served
from generator.load.deferred import validation_issues
from generator.options import GenerateOptions
from tests.golden import GOLDEN_SPECS, golden_options, spec_path

ROOT = Path(__file__).resolve().parents[3]
RUN_TIMEOUT = 60.0


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "petstore.yaml"
    shutil.copyfile(spec_path("petstore"), path)
    return path


def _cache(spec: Path, folder: Path, **kwargs: Any) -> CatalogueCache:
    kwargs.setdefault("options", GenerateOptions())  # as serve passes them
    cache = CatalogueCache.for_spec(str(spec), folder=folder, **kwargs)
    assert cache is not None
    return cache


def _filled(spec: Path, folder: Path) -> CatalogueCache:
    cache = _cache(spec, folder)
    built = build_served(str(spec), GenerateOptions(), validate=True)
    assert cache.store(catalogue_json(built.catalogue), [str(i) for i in built.issues], validated=True)
    return cache


def test_an_entry_gives_back_the_catalogue_it_was_written_with(spec: Path, tmp_path: Path) -> None:
    cache = _filled(spec, tmp_path / "c")
    hit = cache.load()
    assert hit is not None and hit.validated
    built = build_served(str(spec), GenerateOptions(), validate=True)
    assert hit.catalogue.model_dump() == built.catalogue.model_dump()
    assert list(hit.issues) == [str(i) for i in built.issues]


def test_the_key_changes_with_every_input(spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "c"
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("overlay: 1.0.0\ninfo: {title: o, version: '1'}\nactions: []\n", encoding="utf-8")
    base = _cache(spec, folder).key
    keys = {
        "options": _cache(spec, folder, options=GenerateOptions(read_only=True)).key,
        "overlay": _cache(spec, folder, overlays=[str(overlay)]).key,
    }
    overlay.write_text(overlay.read_text(encoding="utf-8") + "# one more byte\n", encoding="utf-8")
    keys["overlay bytes"] = _cache(spec, folder, overlays=[str(overlay)]).key
    with monkeypatch.context() as patched:
        patched.setattr(spec_cache, "bridge_version", lambda: "0.0.0-another")
        keys["version"] = _cache(spec, folder).key
    moved = tmp_path / "elsewhere.yaml"
    shutil.copyfile(spec, moved)
    keys["path"] = _cache(moved, folder).key
    spec.write_bytes(spec.read_bytes().replace(b"Petstore", b"Petstorf", 1))
    keys["one spec byte"] = _cache(spec, folder).key
    assert base not in keys.values()
    assert len(set(keys.values())) == len(keys), keys
    assert _cache(moved, folder).key == keys["path"]  # the same inputs, the same key


def test_another_specs_entry_under_this_key_is_ignored(spec: Path, tmp_path: Path) -> None:
    cache = _filled(spec, tmp_path / "c")
    other = _cache(spec, tmp_path / "c", options=GenerateOptions(read_only=True))
    shutil.copyfile(cache.path, other.path)  # a whole, valid entry, but written for other inputs
    assert other.load() is None
    assert cache.load() is not None


@pytest.mark.parametrize("damage", ["truncated", "catalogue edited", "not json", "empty", "header only"])
def test_a_damaged_entry_is_ignored_with_a_warning(
    spec: Path, tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    cache = _filled(spec, tmp_path / "c")
    data = cache.path.read_bytes()
    head, _, body = data.partition(b"\n")
    damaged = {
        "truncated": data[: len(data) // 2],
        "catalogue edited": head + b"\n" + body.replace(b'"petstore"', b'"petstorf"', 1),
        "not json": b"\x00\xff garbage",
        "empty": b"",
        "header only": head,
    }[damage]
    assert damaged != data
    cache.path.write_bytes(damaged)
    with caplog.at_level(logging.WARNING, logger="bridge.serve"):
        assert cache.load() is None
    assert any("ignored" in r.getMessage() for r in caplog.records)


def test_an_entry_others_can_write_or_a_symlink_is_not_trusted(spec: Path, tmp_path: Path) -> None:
    cache = _filled(spec, tmp_path / "c")
    assert cache.load() is not None
    os.chmod(cache.path, 0o666)
    assert cache.load() is None
    os.chmod(cache.path, 0o600)
    planted = tmp_path / "planted.json"
    shutil.copyfile(cache.path, planted)
    os.chmod(planted, 0o600)
    cache.path.unlink()
    cache.path.symlink_to(planted)
    assert cache.load() is None
    cache.path.unlink()
    shutil.copyfile(planted, cache.path)
    os.chmod(cache.folder, 0o777)  # a folder others can write: they could swap entries in
    assert cache.load() is None
    os.chmod(cache.folder, 0o700)
    assert cache.load() is not None


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="planting a file as another user needs root"
)
def test_an_entry_planted_by_another_user_is_ignored(spec: Path, tmp_path: Path) -> None:
    cache = _filled(spec, tmp_path / "c")
    os.chown(cache.path, 4242, 4242)
    assert cache.load() is None
    os.chown(cache.path, 0, 0)
    os.chown(cache.folder, 4242, 4242)
    assert cache.load() is None


def test_entries_are_private_files_in_a_private_folder(spec: Path, tmp_path: Path) -> None:
    cache = _filled(spec, tmp_path / "c")
    assert cache.path.stat().st_mode & 0o777 == 0o600
    assert cache.folder.stat().st_mode & 0o777 == 0o700
    assert [p.name for p in cache.folder.iterdir()] == [cache.path.name]  # no temporary file left


def test_the_cache_folder_follows_xdg() -> None:
    assert cache_root({"XDG_CACHE_HOME": "/x/cache"}) == Path("/x/cache/mcp-bridge/catalogues")
    home = Path.home() / ".cache" / "mcp-bridge" / "catalogues"
    assert cache_root({}) == home
    assert cache_root({"XDG_CACHE_HOME": "relative/path"}) == home  # XDG: a relative path is ignored


def test_a_spec_whose_refs_reach_other_files_is_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    multifile = next((ROOT / "specs" / "multifile").glob("*.yaml"))
    load_spec_target(str(multifile))
    assert not list(folder.rglob("*.json"))


def test_a_later_start_serves_the_cached_catalogue(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    first = load_spec_target(str(spec))
    with caplog.at_level(logging.INFO, logger="bridge.serve"):
        again = load_spec_target(str(spec))
    assert any("catalogue from the cache" in r.getMessage() for r in caplog.records)
    assert again.model_dump() == first.model_dump()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="bridge.serve"):
        load_spec_target(str(spec), use_cache=False)
    assert not any("cache" in r.getMessage() for r in caplog.records)


def test_a_big_specs_validation_runs_in_the_background_and_finds_the_problems(tmp_path: Path) -> None:
    path = tmp_path / "invalid.json"
    document = json.loads(json.dumps({"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {}}))
    document["paths"]["/x"] = {"get": {"operationId": "getX"}}  # no responses: invalid 3.0
    path.write_text(json.dumps(document), encoding="utf-8")
    deferred = build_served(str(path), GenerateOptions(), validate=False)
    found = validation_issues(str(path))
    assert any("responses" in str(issue) for issue in found), found
    assert not any("responses" in str(issue) for issue in deferred.issues)
    assert deferred.catalogue.tools[0].name  # served all the same


@pytest.mark.parametrize("name", sorted(GOLDEN_SPECS))
def test_deferring_validation_changes_no_tool(name: str) -> None:
    options = golden_options(name)
    deferred = build_served(str(spec_path(name)), options, validate=False)
    validated = build_served(str(spec_path(name)), options, validate=True)
    assert deferred.catalogue.model_dump() == validated.catalogue.model_dump()
    assert set(deferred.issues) <= set(validated.issues)


def test_a_document_the_parser_fails_on_unvalidated_is_loaded_again_with_validation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import generator.generate as served

    real = served._load_and_parse
    seen: list[bool] = []

    def fails_unvalidated(*args: Any, validate: bool, **kwargs: Any) -> Any:
        seen.append(validate)
        if not validate:
            raise TypeError("as a converter meeting a malformed document would")
        return real(*args, validate=validate, **kwargs)

    monkeypatch.setattr(served, "_load_and_parse", fails_unvalidated)
    built = build_served(str(spec_path("petstore")), GenerateOptions(), validate=False)
    assert seen == [False, True] and built.validated and built.catalogue.tools


def _serve_lines(spec: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    lines = [initialize, initialized, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    process = subprocess.Popen(
        [sys.executable, "-m", "bridge", "serve", str(spec)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=str(ROOT),
        env=env,
    )
    assert process.stdin is not None
    process.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
    process.stdin.flush()
    return process


def test_two_serve_processes_starting_at_once_share_one_whole_entry(spec: Path, tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    processes = [_serve_lines(spec, env) for _ in range(2)]
    for process in processes:
        out, err = process.communicate(timeout=RUN_TIMEOUT)  # closes stdin: the session ends
        assert process.returncode == 0, err[-2000:]
        answers = [json.loads(line) for line in out.splitlines() if line.strip()]
        assert [a.get("id") for a in answers] == [1, 2]
        assert answers[1]["result"]["tools"]
    entries = list((tmp_path / "xdg").rglob("*.json"))
    assert len(entries) == 1
    assert not list((tmp_path / "xdg").rglob("*.tmp"))
    assert _cache(spec, entries[0].parent).load() is not None
    third = _serve_lines(spec, env)
    out, err = third.communicate(timeout=RUN_TIMEOUT)
    assert third.returncode == 0 and "catalogue from the cache" in err, err[-2000:]
    assert json.loads(out.splitlines()[1])["result"]["tools"]


def test_no_cache_neither_reads_nor_writes(spec: Path, tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    done = subprocess.run(
        [sys.executable, "-m", "bridge", "serve", str(spec), "--no-cache"],
        input="",
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        cwd=str(ROOT),
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (tmp_path / "xdg").exists()


def test_a_big_spec_is_served_before_validation_and_the_child_caches_it_validated(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import threading

    import generator.generate

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(generator.generate, "defer_validation", lambda source: True)  # as for a 1 MB spec
    with caplog.at_level(logging.INFO, logger="bridge.serve"):
        served = load_spec_target(str(spec))
        (waiting,) = [t for t in threading.enumerate() if t.name == "mcp-bridge-validate"]
        waiting.join(timeout=RUN_TIMEOUT)
        assert not waiting.is_alive()
    assert any("spec validated" in r.getMessage() for r in caplog.records)
    hit = _cache(spec, tmp_path / "xdg" / "mcp-bridge" / "catalogues").load()
    assert hit is not None and hit.validated
    assert hit.catalogue.model_dump() == served.model_dump()


def test_a_changed_generator_source_file_changes_the_key(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fingerprint = spec_cache._code_fingerprint()
    assert len(fingerprint) == 64 and fingerprint == spec_cache._code_fingerprint()
    before = _cache(spec, tmp_path).key
    # An editable install edited under the same version number (not a real file touched: other
    # tests running at the same time compute keys too).
    monkeypatch.setattr(spec_cache, "_code_fingerprint", lambda: "0" * 64)
    assert _cache(spec, tmp_path).key != before
