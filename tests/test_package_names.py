"""Names follow the user's choice (issue 18): with ``-o`` the package and its variables are named
after the folder, ``--name``/``--env-prefix`` win, and regenerating keeps what the manifest records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bridge.cli import cli
from bridge.serving.package import load_catalogue

SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Email Activity (beta)", "version": "1"},
    "servers": [{"url": "https://api.example.com"}],
    "components": {"securitySchemes": {"Authorization": {"type": "http", "scheme": "bearer"}}},
    "security": [{"Authorization": []}],
    "paths": {"/messages": {"get": {"operationId": "listMessages", "responses": {"200": {"description": "ok"}}}}},
}


def _generate(tmp_path: Path, out: Path, *extra: str) -> tuple[str, str]:
    spec = tmp_path / "sendgrid.json"
    spec.write_text(json.dumps(SPEC), encoding="utf-8")
    result = CliRunner().invoke(cli, ["generate", str(spec), "-o", str(out), *extra])
    assert result.exit_code == 0, result.output
    catalogue = load_catalogue(out)
    return catalogue.name, catalogue.env_prefix


@pytest.mark.parametrize(
    ("folder", "extra", "name", "prefix"),
    [
        ("pkgs/sendgrid", (), "sendgrid", "SENDGRID"),
        ("pkgs/my-mail.v2", (), "my_mail_v2", "MY_MAIL_V2"),
        ("pkgs/sendgrid", ("--name", "mail"), "mail", "MAIL"),
        ("pkgs/sendgrid", ("--env-prefix", "SG"), "sendgrid", "SG"),
        ("pkgs/sendgrid", ("--name", "mail", "--env-prefix", "SG"), "mail", "SG"),
    ],
)
def test_the_output_folder_names_the_package_unless_told_otherwise(
    tmp_path: Path, folder: str, extra: tuple[str, ...], name: str, prefix: str
) -> None:
    out = tmp_path / folder
    assert _generate(tmp_path, out, *extra) == (name, prefix)
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert f"`{prefix}_AUTHORIZATION_TOKEN`" in readme and "EMAIL_ACTIVITY_BETA" not in readme


def test_regenerating_keeps_the_name_and_prefix_the_manifest_records(tmp_path: Path) -> None:
    out = tmp_path / "pkgs" / "sendgrid"
    assert _generate(tmp_path, out, "--name", "mail", "--env-prefix", "SG") == ("mail", "SG")
    assert _generate(tmp_path, out) == ("mail", "SG")  # no variable renamed under the user's feet
    assert _generate(tmp_path, out, "--env-prefix", "SG2") == ("mail", "SG2")  # an option still wins
    assert _generate(tmp_path, out, "--name", "other") == ("other", "OTHER")


def test_without_an_output_folder_the_title_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = tmp_path / "sendgrid.json"
    spec.write_text(json.dumps(SPEC), encoding="utf-8")
    result = CliRunner().invoke(cli, ["generate", str(spec)])
    assert result.exit_code == 0, result.output
    catalogue = load_catalogue(tmp_path / "generated" / "email_activity_beta")
    assert catalogue.env_prefix == "EMAIL_ACTIVITY_BETA"


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("GitHub's official OpenAPI spec + Octokit extension", "github_octokit"),
        ("Asana’s Official API Specification", "asana_api"),
        ("Email Activity (beta)", "email_activity_beta"),
        ("Google Cloud Storage JSON API v1", "google_cloud_storage"),
        ("OpenAPI", "openapi"),  # nothing but filler: the title as it is
    ],
)
def test_without_o_the_name_comes_from_the_title_cleaned_to_three_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, title: str, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({**SPEC, "info": {"title": title, "version": "1"}}), encoding="utf-8")
    result = CliRunner().invoke(cli, ["generate", str(spec)])
    assert result.exit_code == 0, result.output
    assert load_catalogue(tmp_path / "generated" / name).name == name
