"""The nginx configuration of docs/deployment.md is valid nginx, for one worker and for several."""

from __future__ import annotations

import pytest

from tests.services.nginx import bridge_http_block, check_config, documented_snippet


@pytest.mark.parametrize("workers", [1, 3])
def test_the_documented_configuration_passes_nginx_t(workers: int) -> None:
    block = bridge_http_block([8001 + i for i in range(workers)])
    check_config(block)
    assert block.count("server 127.0.0.1:") == 2 * workers  # the shared pool and one pinned pool per worker
    assert all(f'"~^w{i}\\." mcp_bridge_w{i};' in block for i in range(workers))


def test_the_snippet_pins_by_the_session_header_and_streams_answers() -> None:
    snippet = documented_snippet()
    for needed in ("map $http_mcp_session_id", "proxy_buffering off;", "proxy_http_version 1.1;", 'Connection ""'):
        assert needed in snippet


def test_nginx_closes_idle_upstream_connections_before_a_draining_worker_would() -> None:
    import re

    from bridge.ops.drain import DRAIN_LINGER

    timeouts = [float(t) for t in re.findall(r"keepalive_timeout (\d+(?:\.\d+)?)s;", documented_snippet())]
    upstreams = documented_snippet().count("upstream ")
    assert len(timeouts) == upstreams and all(t < DRAIN_LINGER for t in timeouts)
