"""Snapshot pictures of file-edit diffs as a tool card shows them: unified in a 100-column
terminal, split in a 160-column one, and a long diff folded. The app is a bare screen in
`cockpit-dark`'s colours with one bordered card, so the pictures change only when the
renderer does."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import RenderableType
from textual.app import App, ComposeResult
from textual.widgets import Static

from cockpit.ui.diffs.palette import DiffStyles
from cockpit.ui.diffs.render import render_side_by_side, render_unified

Snap = Callable[..., bool]

# The card's border and padding take 4 columns from the terminal's width.
CARD_CHROME = 4

OLD = '''"""Greetings for the command line."""

import os


def greet(name):
    """Say hello."""
    print("hello", name)
    return 1


class Greeter:
\tdef __init__(self, prefix):
\t\tself.prefix = prefix
'''

NEW = '''"""Greetings for the command line."""

import os
import sys


def greet(name, loud=False):
    """Say hello,
    loudly if asked."""
    message = f"hello {name}"
    print(message.upper() if loud else message, file=sys.stderr)  # stderr keeps stdout clean for pipes
    return 1


class Greeter:
\tdef __init__(self, prefix):
\t\tself.prefix = prefix
'''


def long_edit() -> tuple[str, str]:
    """A 120-line module whose every fourth function body changed."""
    old = [f"def handler_{n}(event):\n    return process(event, {n})\n" for n in range(60)]
    new = [
        f"def handler_{n}(event):\n    return process(event, {n}, retries=3)\n"
        if n % 4 == 0
        else text
        for n, text in enumerate(old)
    ]
    return "".join(old), "".join(new)


class DiffCard(App[None]):
    """One tool card holding a rendered diff."""

    CSS = """
    Screen { background: #1B2130; color: #D8DEE9; }
    #card { border: round #6B7487; border-title-color: #7FC1CC; padding: 0 1; }
    """

    def __init__(self, renderable: RenderableType) -> None:
        super().__init__()
        self.renderable = renderable

    def compose(self) -> ComposeResult:
        card = Static(self.renderable, id="card")
        card.border_title = "edit"
        yield card


def test_a_unified_diff(snap_compare: Snap) -> None:
    """100 columns: one column of code with old and new numbers; the long print line wraps
    under the code; added rows green, removed rows red, Python highlighted."""
    width = 100 - CARD_CHROME
    diff = render_unified("src/greet.py", OLD, NEW, width=width, folded=False, styles=DiffStyles())
    assert snap_compare(DiffCard(diff), terminal_size=(100, 24))


def test_a_side_by_side_diff(snap_compare: Snap) -> None:
    """160 columns: old left, new right, the replaced block read across; the long line is
    cropped with an ellipsis."""
    width = 160 - CARD_CHROME
    diff = render_side_by_side(
        "src/greet.py", OLD, NEW, width=width, folded=False, styles=DiffStyles()
    )
    assert snap_compare(DiffCard(diff), terminal_size=(160, 24))


def test_a_long_diff_folded(snap_compare: Snap) -> None:
    """A long edit shows its first lines and one line telling what is hidden."""
    old, new = long_edit()
    width = 100 - CARD_CHROME
    diff = render_unified(
        "src/handlers.py", old, new, width=width, folded=True, limit=16, styles=DiffStyles()
    )
    assert snap_compare(DiffCard(diff), terminal_size=(100, 24))
