"""The fast tier's guard (tests/conftest.py): which commands count as starting a server process."""

from __future__ import annotations

import pytest

from tests.conftest import _starts_a_server


@pytest.mark.parametrize(
    ("command", "server"),
    [
        (["python", "-m", "bridge", "serve", "generated/petstore"], True),
        (["/venv/bin/mcp-bridge", "serve", "pkg", "--transport", "http"], True),
        (["/usr/sbin/nginx", "-c", "/tmp/n.conf"], True),
        (["redis-server", "--port", "0"], True),
        ("python -m bridge serve generated/petstore", True),
        (["python", "-m", "bridge", "generate", "spec.yaml", "-o", "out"], False),
        (["python", "-m", "mypy", "serve.py"], False),
        (["npm", "ci"], False),
    ],
)
def test_a_command_starts_a_server_exactly_when_it_serves(command: object, server: bool) -> None:
    assert _starts_a_server(command) is server
