"""One `cockpit` command run both ways a user runs it: through the store's service (the
default, which the command starts when none runs) and with the engine in its own process
(`--local`). A test that uses it stops what it started (`services_stopped`)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from tests.support.service_helpers import cockpit

MODES = ("service", "local")


def run_in(
    mode: str,
    home: Path,
    *args: str,
    env_extra: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """`cockpit ARGS` on the store in `home`, through its service or with `--local`."""
    local = ("--local",) if mode == "local" else ()
    return cockpit(*local, *args, home=home, env_extra=env_extra, cwd=cwd)
