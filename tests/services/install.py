"""Debian's nginx and redis-server for the tests and the load bench, installed once when missing.

``python -m tests.services.install`` (``make services``, which ``make test`` and ``make load``
run first) and :func:`ensure_services` (called by the fixtures, for a bare ``pytest``) do the
same: nothing when both binaries are there; otherwise, as root, ``apt-get update`` and
``apt-get install -y nginx redis-server``. The packages' own services are never started: a
fresh machine without a ``policy-rc.d`` gets one for the length of the install, so no daemon is
left listening on ports 80 or 6379; the tests start their own on free loopback ports.

Concurrent callers (pytest-xdist workers) take a file lock, so apt runs once. Every step has a
timeout; a machine where the install cannot happen gets one line saying what to install.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

PACKAGES = ("nginx", "redis-server")
# Where Debian puts them (not always on a non-root PATH).
BINARIES = {"nginx": ("/usr/sbin/nginx",), "redis-server": ("/usr/bin/redis-server",)}
LOCK = Path(tempfile.gettempdir()) / "mcp-bridge-services.lock"
POLICY_RC_D = Path("/usr/sbin/policy-rc.d")
APT_TIMEOUT = 900.0


class ServicesUnavailable(RuntimeError):
    """nginx or redis-server is missing and could not be installed here."""


def binary(name: str) -> Path | None:
    """The path of ``name`` (``nginx`` or ``redis-server``), or None when it is not installed."""
    for candidate in BINARIES[name]:
        if os.access(candidate, os.X_OK):
            return Path(candidate)
    found = shutil.which(name)
    return Path(found) if found else None


def missing() -> list[str]:
    return [name for name in PACKAGES if binary(name) is None]


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    with LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def _no_service_starts() -> Iterator[None]:
    """Debian's invoke-rc.d asks policy-rc.d before starting a service; exit 101 means "don't"."""
    if POLICY_RC_D.exists():
        yield
        return
    POLICY_RC_D.write_text("#!/bin/sh\n# mcp-bridge tests: no service starts during the install\nexit 101\n")
    POLICY_RC_D.chmod(0o755)
    try:
        yield
    finally:
        POLICY_RC_D.unlink(missing_ok=True)


def _apt(*args: str) -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    result = subprocess.run(
        ["apt-get", *args], env=env, capture_output=True, text=True, timeout=APT_TIMEOUT, check=False
    )
    if result.returncode != 0:
        tail = " ".join((result.stderr or result.stdout).split())[-400:]
        raise ServicesUnavailable(f"apt-get {' '.join(args)} failed (exit {result.returncode}): {tail}")


def ensure_services() -> dict[str, Path]:
    """The paths of nginx and redis-server, installing the Debian packages first when needed.

    Raises:
        ServicesUnavailable: they are missing and this is not a root shell on a Debian machine.
    """
    if missing():
        with _locked():
            absent = missing()
            if absent:
                if os.geteuid() != 0 or shutil.which("apt-get") is None:
                    raise ServicesUnavailable(
                        f"{' and '.join(absent)} missing: install the Debian packages "
                        f"(apt-get install -y {' '.join(PACKAGES)}) or run the tests as root"
                    )
                with _no_service_starts():
                    _apt("update")
                    _apt("install", "-y", "--no-install-recommends", *PACKAGES)
    paths = {name: binary(name) for name in PACKAGES}
    absent = [name for name, path in paths.items() if path is None]
    if absent:
        raise ServicesUnavailable(f"{' and '.join(absent)} still missing after apt-get install")
    return {name: path for name, path in paths.items() if path is not None}


def main() -> int:
    try:
        paths = ensure_services()
    except (ServicesUnavailable, subprocess.TimeoutExpired) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print("services: " + ", ".join(f"{name} {path}" for name, path in paths.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
