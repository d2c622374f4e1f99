"""``mcp-bridge install CLIENT PACKAGE`` as a user runs it: real packages, real client files in a temp folder."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bridge.cli import cli
from bridge.contract.clients.placeholders import looks_like_placeholder

# Slack's shape: a token bound to a parameter of every operation, an org header, a relative server.
SPEC = """openapi: 3.0.3
info: {title: Chat, version: "1"}
servers: [{url: /api}]
paths:
  /post:
    post:
      operationId: postMessage
      parameters:
        - {name: token, in: query, required: true, schema: {type: string}}
        - {name: text, in: query, schema: {type: string}}
      responses: {"200": {description: ok}}
  /me:
    get:
      operationId: whoAmI
      security: [{key: []}]
      responses: {"200": {description: ok}}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Key}
"""
CONFIG = """bind:
  token: env:CHAT_TOKEN
headers:
  X-Org: env:CHAT_ORG
"""
EVERYTHING = {"CHAT_TOKEN": "xoxb-1234567890", "CHAT_ORG": "org-4242", "CHAT_KEY_API_KEY": "k-0987654321"}
BASE = {"CHAT_BASE_URL": "https://chat.example/api"}


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("chat")
    (root / "api.yaml").write_text(SPEC, encoding="utf-8")
    (root / "config.yaml").write_text(CONFIG, encoding="utf-8")
    out = root / "chat"
    done = CliRunner().invoke(
        cli, ["generate", str(root / "api.yaml"), "-o", str(out), "--config", str(root / "config.yaml")]
    )
    assert done.exit_code == 0, done.output
    return out


def _install(package: Path, client: str, target: Path, env: dict[str, str], *extra: str) -> Result:
    clean = {k: None for k in os.environ if k.startswith("CHAT_")}
    return CliRunner().invoke(
        cli, ["install", client, str(package), "--config-file", str(target), *extra], env={**clean, **env}
    )


def _servers(target: Path, key: str = "mcpServers") -> dict[str, dict[str, object]]:
    servers = json.loads(target.read_text(encoding="utf-8"))[key]
    assert isinstance(servers, dict)
    return servers


def test_install_carries_bound_header_credential_and_base_url_variables_from_the_environment(
    package: Path, tmp_path: Path
) -> None:
    target = tmp_path / "claude_desktop_config.json"
    done = _install(package, "claude-desktop", target, {**EVERYTHING, **BASE})
    assert done.exit_code == 0, done.output
    entry = _servers(target)["chat"]
    assert entry["env"] == {**EVERYTHING, **BASE}
    assert entry["args"] == ["serve", str(package.resolve())]
    assert Path(str(entry["command"])).is_absolute()
    assert "xoxb-1234567890" not in done.output  # names only


def test_the_variables_still_missing_are_named_and_nothing_is_written(package: Path, tmp_path: Path) -> None:
    target = tmp_path / "mcp.json"
    done = _install(package, "cursor", target, {"CHAT_TOKEN": "xoxb-1234567890"})
    assert done.exit_code == 1
    for name in ("CHAT_BASE_URL", "CHAT_ORG", "CHAT_KEY_API_KEY"):
        assert name in done.output
    assert "CHAT_TOKEN" not in done.output.split("not set:")[1]
    assert not target.exists()


def test_allow_missing_writes_the_entry_without_them_and_says_which_to_add(package: Path, tmp_path: Path) -> None:
    target = tmp_path / "mcp.json"
    done = _install(package, "cursor", target, {"CHAT_TOKEN": "xoxb-1234567890"}, "--allow-missing")
    assert done.exit_code == 0, done.output
    assert _servers(target)["chat"]["env"] == {"CHAT_TOKEN": "xoxb-1234567890"}
    assert "CHAT_ORG" in done.output and "CHAT_BASE_URL" in done.output


def test_merge_keeps_other_servers_and_unknown_keys_and_writes_a_backup_first(package: Path, tmp_path: Path) -> None:
    target = tmp_path / "mcp.json"
    before = {"mcpServers": {"other": {"command": "/bin/other", "args": []}}, "theme": {"dark": True}}
    original = json.dumps(before)
    target.write_text(original, encoding="utf-8")
    done = _install(package, "cursor", target, {**EVERYTHING, **BASE})
    assert done.exit_code == 0, done.output
    after = json.loads(target.read_text(encoding="utf-8"))
    assert after["theme"] == {"dark": True} and after["mcpServers"]["other"] == before["mcpServers"]["other"]
    assert "chat" in after["mcpServers"]
    (backup,) = tmp_path.glob("mcp.json.*.bak")
    assert backup.read_text(encoding="utf-8") == original
    again = _install(package, "cursor", target, {**EVERYTHING, **BASE})  # a second backup, the first kept
    assert again.exit_code == 0, again.output
    assert len(list(tmp_path.glob("mcp.json.*.bak"))) == 2 and backup.read_text(encoding="utf-8") == original


def test_values_already_in_the_entry_are_kept_when_the_environment_has_none(package: Path, tmp_path: Path) -> None:
    target = tmp_path / "mcp.json"
    assert _install(package, "cursor", target, {**EVERYTHING, **BASE}).exit_code == 0
    done = _install(package, "cursor", target, {"CHAT_ORG": "org-new-1"})
    assert done.exit_code == 0, done.output
    assert _servers(target)["chat"]["env"] == {**EVERYTHING, **BASE, "CHAT_ORG": "org-new-1"}


@pytest.mark.parametrize("value", ["<value>", "<api key>", "YOUR_KEY", "changeme", "xxx", "your-token-here"])
def test_a_placeholder_in_the_environment_is_refused(package: Path, tmp_path: Path, value: str) -> None:
    target = tmp_path / "mcp.json"
    done = _install(package, "cursor", target, {**EVERYTHING, **BASE, "CHAT_KEY_API_KEY": value})
    assert done.exit_code == 1
    assert "CHAT_KEY_API_KEY" in done.output and "placeholder" in done.output
    assert not target.exists()


def test_a_placeholder_left_in_an_existing_entry_is_refused(package: Path, tmp_path: Path) -> None:
    target = tmp_path / "mcp.json"
    readme_like = {"mcpServers": {"chat": {"command": "x", "env": {"CHAT_ORG": "<set me: header X-Org>"}}}}
    target.write_text(json.dumps(readme_like), encoding="utf-8")
    done = _install(package, "cursor", target, {k: v for k, v in {**EVERYTHING, **BASE}.items() if k != "CHAT_ORG"})
    assert done.exit_code == 1 and "CHAT_ORG" in done.output
    assert json.loads(target.read_text(encoding="utf-8")) == readme_like


@pytest.mark.parametrize("text", ["{not json", '{"mcpServers": {}', "[1, 2]", '{"mcpServers": []}'])
def test_a_file_that_is_not_a_json_object_is_refused_in_one_line_and_left_untouched(
    package: Path, tmp_path: Path, text: str
) -> None:
    target = tmp_path / "mcp.json"
    target.write_text(text, encoding="utf-8")
    done = _install(package, "cursor", target, {**EVERYTHING, **BASE})
    assert done.exit_code == 1
    assert done.output.count("\n") == 1 and str(target) in done.output and "Traceback" not in done.output
    assert target.read_text(encoding="utf-8") == text
    assert not list(tmp_path.glob("*.bak"))


@pytest.mark.parametrize(
    ("client", "key", "typed"),
    [
        ("claude-desktop", "mcpServers", False),
        ("cursor", "mcpServers", False),
        ("vscode", "servers", True),
        ("claude-code", "mcpServers", True),
    ],
)
def test_each_client_gets_its_own_file_shape(package: Path, tmp_path: Path, client: str, key: str, typed: bool) -> None:
    target = tmp_path / "client.json"
    done = _install(package, client, target, {**EVERYTHING, **BASE})
    assert done.exit_code == 0, done.output
    entry = _servers(target, key)["chat"]
    assert (entry.get("type") == "stdio") is typed
    assert list(json.loads(target.read_text(encoding="utf-8"))) == [key]


def test_the_default_file_of_a_project_client_is_in_the_current_folder(
    package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    clean = {k: None for k in os.environ if k.startswith("CHAT_")}
    done = CliRunner().invoke(cli, ["install", "vscode", str(package)], env={**clean, **EVERYTHING, **BASE})
    assert done.exit_code == 0, done.output
    assert "chat" in _servers(tmp_path / ".vscode" / "mcp.json", "servers")


def test_a_program_in_uvs_cache_is_replaced_by_uvx_from_the_distribution(
    package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    # This interpreter's environment stands for the one uvx made: its folder is declared uv's cache.
    monkeypatch.setenv("UV_CACHE_DIR", str(Path(sys.executable).parent.parent))
    target = tmp_path / "mcp.json"
    done = _install(package, "cursor", target, {**EVERYTHING, **BASE})
    assert done.exit_code == 0, done.output
    entry = _servers(target)["chat"]
    assert Path(str(entry["command"])).name == "uvx"
    assert entry["args"] == ["--from", "mcp-openapi-bridge", "mcp-bridge", "serve", str(package.resolve())]


def test_an_absolute_server_needs_no_base_url(tmp_path: Path) -> None:
    spec = tmp_path / "api.yaml"
    spec.write_text(SPEC.replace("url: /api", "url: https://chat.example/api"), encoding="utf-8")
    (tmp_path / "config.yaml").write_text(CONFIG, encoding="utf-8")
    out = tmp_path / "chat"
    made = CliRunner().invoke(cli, ["generate", str(spec), "-o", str(out), "--config", str(tmp_path / "config.yaml")])
    assert made.exit_code == 0, made.output
    done = _install(out, "cursor", tmp_path / "mcp.json", EVERYTHING)
    assert done.exit_code == 0, done.output
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "CHAT_ORG" in readme and "CHAT_TOKEN" in readme and '"CHAT_BASE_URL"' not in readme


def test_the_readme_snippet_names_every_variable_install_writes(package: Path, tmp_path: Path) -> None:
    target = tmp_path / "mcp.json"
    assert _install(package, "cursor", target, {**EVERYTHING, **BASE}).exit_code == 0
    readme = (package / "README.md").read_text(encoding="utf-8")
    for name in _servers(target)["chat"]["env"]:  # type: ignore[union-attr]
        assert f'"{name}": "<set me: ' in readme


@pytest.mark.parametrize("value", ["xoxb-1234567890", "sk_live_abc", "https://chat.example/api", "0", "settings"])
def test_real_values_are_not_taken_for_placeholders(value: str) -> None:
    assert not looks_like_placeholder(value)


def _big_spec(operations: int) -> dict[str, object]:
    """An API whose tool list alone is over the discovery budget: distinct, long descriptions (no sharing)."""
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike oscar papa".split()
    paths = {}
    for i in range(operations):
        params = [
            {
                "name": f"p{j}",
                "in": "query",
                "schema": {"type": "string"},
                "description": f"Setting {j} of {i}: " + " ".join(words[(i * 7 + j * 3 + k) % 15] for k in range(12)),
            }
            for j in range(6)
        ]
        paths[f"/r{i}"] = {
            "get": {
                "operationId": f"getResource{i}",
                "description": " ".join(words[(i + k) % 15] for k in range(40)),
                "parameters": params,
                "responses": {"200": {"description": "ok"}},
            }
        }
    info = {"title": "Big", "version": "1"}
    return {"openapi": "3.0.3", "info": info, "servers": [{"url": "https://big.example"}], "paths": paths}


def test_a_big_api_starts_in_discovery_mode_in_the_readme_and_install_with_one_count(tmp_path: Path) -> None:
    spec = tmp_path / "big.json"
    # generate's hint, the README and install say one count: the characters/4 estimate (start_mode.py).
    spec.write_text(json.dumps(_big_spec(250)), encoding="utf-8")
    made = CliRunner().invoke(cli, ["generate", str(spec), "-o", str(tmp_path / "big")])
    assert made.exit_code == 0, made.output
    counts = re.findall(r"costs? about ([\d,]+) tokens", made.output)
    readme = (tmp_path / "big" / "README.md").read_text(encoding="utf-8")
    assert counts and f"cost about {counts[0]} tokens" in readme
    assert all(config.count('"--mode",\n') == 1 for config in re.findall(r"```json\n(.*?)```", readme, re.S))
    target = tmp_path / "mcp.json"
    done = _install(tmp_path / "big", "cursor", target, {})
    assert done.exit_code == 0, done.output
    assert _servers(target)["big"]["args"][-2:] == ["--mode", "discovery"]  # type: ignore[index]
    assert f"cost about {counts[0]} tokens" in done.output


def test_a_small_api_or_one_generated_for_discovery_gets_no_extra_mode(package: Path, tmp_path: Path) -> None:
    target = tmp_path / "mcp.json"
    assert _install(package, "cursor", target, {**EVERYTHING, **BASE}).exit_code == 0
    assert "--mode" not in _servers(target)["chat"]["args"]  # type: ignore[operator]
    assert "--mode" not in "".join(re.findall(r"```json\n(.*?)```", (package / "README.md").read_text(), re.S))
    spec = tmp_path / "big.json"
    spec.write_text(json.dumps(_big_spec(120)), encoding="utf-8")
    made = CliRunner().invoke(cli, ["generate", str(spec), "-o", str(tmp_path / "big"), "--mode", "discovery"])
    assert made.exit_code == 0, made.output
    assert _install(tmp_path / "big", "cursor", target, {}).exit_code == 0
    assert _servers(target)["big"]["args"][-1] == str((tmp_path / "big").resolve())  # type: ignore[index]


def test_a_file_that_cannot_be_reached_is_one_line_not_a_traceback(package: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("", encoding="utf-8")
    done = _install(package, "cursor", blocked / "mcp.json", {**EVERYTHING, **BASE})
    assert done.exit_code == 1 and done.output.count("\n") == 1 and "left as it was" in done.output


def test_every_value_a_readme_snippet_shows_is_one_install_and_serve_refuse(package: Path) -> None:
    from bridge.contract.clients.entry import readme_snippets
    from bridge.contract.clients.placeholders import is_bracketed_placeholder
    from bridge.serving.package import load_catalogue

    snippets = readme_snippets("chat", load_catalogue(package), "mcp-bridge", ["serve", "chat"])
    values = [
        v for _, config in snippets for entry in config.values() for e in entry.values() for v in e["env"].values()
    ]
    assert len(values) == 4 * 4  # four clients; base URL, key, header, bound token
    assert all(looks_like_placeholder(v) and is_bracketed_placeholder(v) for v in values)
