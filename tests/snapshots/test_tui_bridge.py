"""The TUI reached through a bridge command (`--via`, `--remote`): what the command says on
stderr while the screen is up (ssh's "Connection refused" as the link drops) is read by
the client and shown on the status line, after OFFLINE, never written over the screen
(where it stayed until a resize)."""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
from pathlib import Path
from typing import Any

import pytest

from cockpit.api import EngineAPI
from cockpit.client import Reach, open_engine
from cockpit.remote.link import LINK_CUT
from cockpit.ui.app import CockpitApp
from cockpit.ui.status_line import StatusLine
from cockpit.ui.status_rules import fit_status
from tests.bench.service_procs import ServiceProcess
from tests.snapshots.test_tui_snapshots import Snap, conversation, project_of, settle
from tests.support.service_helpers import cockpit_command, pid_alive, services_stopped
from tests.support.ui_helpers import fill_now, make_app, wait_until

REFUSED = "ssh: connect to host build-box port 22: Connection refused"
"""What ssh says when the host is up and its sshd is not."""


class DroppingBridge:
    """A `--via` command, as the screen runs it, that reaches the service of `home` and
    notes its pid, until it is told to fail as ssh does: saying what ssh says of a host
    that refuses it on stderr (`refuse`), or nothing (`fail_silently`)."""

    def __init__(self, home: Path, tmp_path: Path) -> None:
        self.pid_file = tmp_path / "bridge-pid"
        self.mode = tmp_path / "bridge-mode"
        bridge = shlex.join(cockpit_command("--data-dir", str(home), "service", "--stdio"))
        mode, pid = shlex.quote(str(self.mode)), shlex.quote(str(self.pid_file))
        script = (
            f"case $(cat {mode} 2>/dev/null) in"
            f" refuse) printf '%s\\r\\n' {shlex.quote(REFUSED)} >&2; exit 255;;"
            " silent) exit 255;;"
            " esac;"
            f" echo $$ > {pid}; exec {bridge}"
        )
        self.reach = Reach(via=("sh", "-c", script)).under_screen()

    def refuse(self) -> None:
        self.mode.write_text("refuse")

    def fail_silently(self) -> None:
        self.mode.write_text("silent")

    def connect(self) -> None:
        self.mode.write_text("connect")
        self.pid_file.unlink(missing_ok=True)

    async def engine(self) -> EngineAPI:
        return await open_engine(Path("/nonexistent"), reach=self.reach)

    async def drop(self) -> None:
        """Kill the bridge that is connected (the SSH connection drops)."""
        await wait_until(self.pid_file.exists, 30, "the bridge to connect")
        pid = int(self.pid_file.read_text())
        os.kill(pid, signal.SIGKILL)
        await wait_until(lambda: not pid_alive(pid), 10, "the bridge to die")


def status_of(app: CockpitApp, width: int = 200) -> str:
    return fit_status(app.query_one("#status", StatusLine).parts, width)


async def test_what_ssh_says_after_a_drop_is_on_the_offline_line_not_over_the_screen(
    service_home: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    bridge = DroppingBridge(service_home, tmp_path)
    app = make_app(tmp_path, engine=bridge.engine)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(lambda: app.current is not None, 30, "a session on screen")
        bridge.refuse()
        await bridge.drop()
        await wait_until(lambda: REFUSED in status_of(app), 30, "ssh's words on the status line")
        status = app.query_one("#status", StatusLine)
        assert status.parts[0] == ("OFFLINE", "OFFLINE"), status.parts
        assert status.parts[1][0] == REFUSED, status.parts
        # attached again, the words are forgotten: a later drop with none is told as such
        bridge.connect()
        await wait_until(lambda: "OFFLINE" not in status_of(app), 30, "the link back")
        bridge.fail_silently()
        await bridge.drop()
        await wait_until(lambda: "OFFLINE" in status_of(app), 30, "the second drop")
        await pilot.pause()
        assert status.parts[1][0] == LINK_CUT, status.parts
    assert REFUSED not in capfd.readouterr().err, "ssh's words were written over the screen"


def test_the_offline_line_at_80_columns(
    snap_compare: Snap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored conversation through a bridge whose link dropped: the status line of an
    80-column terminal begins OFFLINE, then ssh's words with their middle cut."""
    monkeypatch.delenv("COCKPIT_LOCAL")
    project = project_of(tmp_path)
    home = tmp_path / "home"
    fill_now(home, lambda engine: conversation()(engine, project))
    service = ServiceProcess(home)
    bridge = DroppingBridge(home, tmp_path)

    async def dropped(pilot: Any) -> None:
        await settle(pilot)
        bridge.refuse()
        await bridge.drop()
        await wait_until(lambda: REFUSED in status_of(pilot.app), 30, "ssh's words shown")
        await wait_until(lambda: pilot.app._notifications, 10, "word of the loss")
        pilot.app.clear_notifications()  # its words are the SDK's, and it goes in 10 s
        await settle(pilot)

    with services_stopped(home):
        asyncio.run(service.start())
        try:
            app = make_app(tmp_path, project, engine=bridge.engine)
            assert snap_compare(app, terminal_size=(80, 24), run_before=dropped)
        finally:
            asyncio.run(service.stop())
