"""Every ``serve`` option can come from ``MCP_BRIDGE_<OPTION>``; the command line wins; ``--help`` says so."""

from __future__ import annotations

from typing import Any

import click
import pytest
from click.testing import CliRunner

from bridge.cli import cli
from bridge.cli.serve import serve
from bridge.serving.assemble import ServeOptions
from tests.golden import GENERATED_DIR

PACKAGE = str(GENERATED_DIR / "petstore")


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    got: dict[str, Any] = {}

    def fake_serve(target: str, options: ServeOptions) -> int:
        got["target"], got["options"] = target, options
        return 0

    monkeypatch.setattr("bridge.serving.process.serve_target", fake_serve)
    for name in [n for n in __import__("os").environ if n.startswith(("MCP_BRIDGE_", "OTEL_"))]:
        monkeypatch.delenv(name)
    return got


def test_every_serve_option_has_its_variable_and_help_shows_it() -> None:
    options = [p for p in serve.params if isinstance(p, click.Option)]
    assert len(options) > 50
    for option in options:
        long = next(o for o in option.opts if o.startswith("--"))
        assert option.envvar == "MCP_BRIDGE_" + long[2:].replace("-", "_").upper()
    text = CliRunner().invoke(cli, ["serve", "--help"], terminal_width=200).output
    assert "env var: MCP_BRIDGE_TRANSPORT" in text and "env var: MCP_BRIDGE_LIMITS_REDIS" in text
    assert "MCP_BRIDGE_TARGET" in text and "the command line wins" in text


def test_variables_set_options_of_every_kind_and_the_command_line_wins(seen: dict[str, Any]) -> None:
    env = {
        "MCP_BRIDGE_TARGET": PACKAGE,
        "MCP_BRIDGE_TRANSPORT": "http",
        "MCP_BRIDGE_PORT": "8123",
        "MCP_BRIDGE_STATELESS": "true",
        "MCP_BRIDGE_ALLOWED_HOST": "a.example b.example",
        "MCP_BRIDGE_LOG_FORMAT": "json",
        "MCP_BRIDGE_DRAIN_TIMEOUT": "7.5",
        "MCP_BRIDGE_LIMITS_REDIS": "redis://127.0.0.1:6390/0",
        "MCP_BRIDGE_MAX_CALLS_PER_SECOND": "4",
    }
    result = CliRunner().invoke(cli, ["serve", "--port", "9000"], env=env)
    assert result.exit_code == 0, result.output
    options: ServeOptions = seen["options"]
    assert seen["target"] == PACKAGE
    assert (options.transport, options.port, options.stateless) == ("http", 9000, True)
    assert options.allowed_hosts == ("a.example", "b.example")
    assert options.max_calls_per_second == 4.0
    assert (options.ops.log_format, options.ops.drain_timeout) == ("json", 7.5)
    assert options.ops.limits_redis == "redis://127.0.0.1:6390/0"


@pytest.mark.parametrize(
    ("env", "args", "message"),
    [
        ({"MCP_BRIDGE_PORT": "eighty"}, [], "MCP_BRIDGE_PORT"),
        ({"MCP_BRIDGE_OTEL": "logs"}, [], "--otel: unknown signal 'logs'"),
        ({}, ["--metrics-port", "9100"], "--metrics-port needs --transport http"),
        ({}, ["--transport", "http", "--metrics-path", "/mcp"], "--metrics-path"),
        ({}, ["--workers", "2"], "--workers needs --transport http"),
    ],
)
def test_a_bad_value_stops_start_up_with_one_line(
    seen: dict[str, Any], env: dict[str, str], args: list[str], message: str
) -> None:
    result = CliRunner().invoke(cli, ["serve", PACKAGE, *args], env=env)
    assert result.exit_code == 2 and "options" not in seen
    assert message in result.output


def test_otel_variables_turn_signals_on_and_sdk_disabled_turns_them_off(seen: dict[str, Any]) -> None:
    CliRunner().invoke(cli, ["serve", PACKAGE], env={"OTEL_TRACES_EXPORTER": "otlp"})
    assert seen["options"].ops.traces and not seen["options"].ops.otel_metrics
    CliRunner().invoke(cli, ["serve", PACKAGE, "--otel", "traces,metrics"], env={"OTEL_SDK_DISABLED": "true"})
    assert not seen["options"].ops.traces and not seen["options"].ops.otel_metrics
