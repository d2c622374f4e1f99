"""The generated README works as it is: real folder, real program, real variables, four client forms."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from bridge.cli import cli
from bridge.upstream.http_settings import DEFAULT_DEADLINE
from tests.generator.test_cli_generate import SPEC
from tests.golden import GENERATED_DIR, GOLDEN_SPECS

SECURED = (
    SPEC.replace('servers: [{url: "https://tiny.example/v1"}]\n', "")
    + """
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Key}
    login: {type: http, scheme: basic}
security: [{key: []}, {login: []}]
"""
)


def _configs(readme: str) -> list[dict[str, object]]:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", readme, re.S)]


def _servers(config: dict[str, object]) -> dict[str, dict[str, object]]:
    servers = config.get("mcpServers", config.get("servers"))
    assert isinstance(servers, dict)
    return servers


def _generate(tmp_path: Path, *args: str, text: str = SPEC) -> Path:
    spec = tmp_path / "api.yaml"
    spec.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["generate", str(spec), *args])
    assert result.exit_code == 0, result.output
    return spec


@pytest.mark.parametrize("output", ["pkg", "nested/deeper/pkg"])
def test_the_readme_names_the_absolute_folder_and_program_in_every_client_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: str
) -> None:
    monkeypatch.chdir(tmp_path)
    _generate(tmp_path, "-o", output, "--name", "tiny")
    folder = (tmp_path / output).resolve()
    readme = (folder / "README.md").read_text(encoding="utf-8")
    commands = [line.split("#")[0].strip() for line in readme.splitlines() if " serve " in line and "#" in line]
    assert commands and all(shlex.split(c)[0].startswith("/") for c in commands)
    assert all(shlex.split(c)[-1] == str(folder) or str(folder) in shlex.split(c) for c in commands)
    configs = _configs(readme)
    assert [next(iter(c)) for c in configs] == ["mcpServers", "mcpServers", "servers", "mcpServers"]
    for config in configs:
        entry = _servers(config)["tiny"]
        assert Path(str(entry["command"])).is_absolute()
        assert isinstance(entry["args"], list) and entry["args"][-2:] == ["serve", str(folder)]
    assert _servers(configs[2])["tiny"]["type"] == "stdio" and _servers(configs[3])["tiny"]["type"] == "stdio"


def test_the_client_env_lists_the_credential_variables_and_the_base_url_when_there_is_no_server(
    tmp_path: Path,
) -> None:
    out = tmp_path / "pkg"
    _generate(tmp_path, "-o", str(out), "--name", "tiny", text=SECURED)
    catalogue = json.loads((out / "catalogue.json").read_text())
    wanted = {var["name"] for scheme in catalogue["security_schemes"].values() for var in scheme["env"]}
    wanted.add("TINY_BASE_URL")
    for config in _configs((out / "README.md").read_text(encoding="utf-8")):
        assert set(_servers(config)["tiny"]["env"]) == wanted  # type: ignore[arg-type]


def test_the_env_prefix_defaults_to_the_package_name_and_can_be_set(tmp_path: Path) -> None:
    _generate(tmp_path, "-o", str(tmp_path / "a"), "--name", "my_api", text=SECURED)
    _generate(tmp_path, "-o", str(tmp_path / "b"), "--name", "my_api", "--env-prefix", "ACME", text=SECURED)
    a = json.loads((tmp_path / "a" / "catalogue.json").read_text())
    b = json.loads((tmp_path / "b" / "catalogue.json").read_text())
    assert a["env_prefix"] == "MY_API" and b["env_prefix"] == "ACME"
    names = [var["name"] for scheme in b["security_schemes"].values() for var in scheme["env"]]
    assert names and all(n.startswith("ACME_") for n in names)
    assert "ACME_BASE_URL" in (tmp_path / "b" / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("prefix", ["acme", "1ACME", "AC-ME", ""])
def test_an_env_prefix_that_is_not_a_variable_name_is_a_usage_error(tmp_path: Path, prefix: str) -> None:
    spec = tmp_path / "api.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    result = CliRunner().invoke(cli, ["generate", str(spec), "-o", str(tmp_path / "o"), "--env-prefix", prefix])
    assert result.exit_code == 2


@pytest.mark.parametrize("name", sorted(GOLDEN_SPECS))
def test_the_golden_readmes_use_the_stable_relative_folder(name: str) -> None:
    readme = (GENERATED_DIR / name / "README.md").read_text(encoding="utf-8")
    for config in _configs(readme):
        assert _servers(config)[name]["args"] == ["serve", f"generated/{name}"]
    assert "/home/" not in readme and "/tmp/" not in readme and "/work/" not in readme


def test_inspect_does_not_fold_long_names_when_piped(tmp_path: Path) -> None:
    long_id = "list" + "VeryLongResourceName" * 3
    out = tmp_path / "pkg"
    _generate(tmp_path, "-o", str(out), text=SPEC.replace("listThings", long_id))
    result = CliRunner().invoke(cli, ["inspect", str(out)])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if long_id in line]
    assert rows and "GET /things" in rows[0]  # name and operation on one row


def test_serve_help_shows_the_timeout_default() -> None:
    result = CliRunner().invoke(cli, ["serve", "--help"], terminal_width=200)
    assert result.exit_code == 0
    line = next(line for line in result.output.splitlines() if "--timeout" in line)
    assert f"[default: {DEFAULT_DEADLINE:g}]" in line
