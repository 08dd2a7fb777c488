"""Pictures of the user's own commands at 80x24, the size of a default terminal over SSH:
a command that ended, its output waiting as a chip above the prompt, and a command that
still runs, its output so far on its card. Each runs for real in a folder whose path is
the same in every run, and prints the same lines every time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cockpit.api import Status
from cockpit.ui.composer import Composer
from cockpit.ui.shell_card import ShellCard
from cockpit.ui.shell_chips import ShellChips
from tests.snapshots.test_tui_interaction_snapshots import calm, fixed_folder
from tests.support.ui_helpers import burst, make_app, wait_until

Snap = Callable[..., bool]
SIZE = (80, 24)
NAMES = {" ": "space", "!": "exclamation_mark", ";": "semicolon"}


def keys(text: str) -> list[str]:
    return [NAMES.get(character, character) for character in text]


def card_shows(app: Any, state: str, output: str) -> bool:
    """The newest card says `state` in its first line, and holds `output`."""
    found = list(app.query(ShellCard))
    return bool(found) and state in found[-1].render().plain and output in found[-1].text


def test_a_finished_command_and_its_chip(snap_compare: Snap, tmp_path: Path) -> None:
    """`!seq 3`: its card says `exit 0` over its three lines; above the prompt, the chip of
    its output waits for the next prompt."""
    app = make_app(tmp_path, fixed_folder("command-chip"))

    async def run(pilot: Any) -> None:
        await wait_until(
            lambda: app.current is not None and app.engine.status(app.current) == Status.READY
        )
        app.query_one(Composer).focus()
        burst(app, *keys("!seq 3"), "enter")
        await wait_until(lambda: card_shows(app, "exit 0", "1\n2\n3"), what="the card")
        await wait_until(lambda: app.query_one(ShellChips).display, what="the chip")
        await calm(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_a_running_command(snap_compare: Snap, tmp_path: Path) -> None:
    """A command that printed a line and runs on: `running…`, its line below."""
    app = make_app(tmp_path, fixed_folder("command-running"))

    async def run(pilot: Any) -> None:
        await wait_until(
            lambda: app.current is not None and app.engine.status(app.current) == Status.READY
        )
        app.query_one(Composer).focus()
        burst(app, *keys("!echo building; sleep 30"), "enter")
        await wait_until(lambda: card_shows(app, "running", "building"), what="the card")
        await calm(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)
