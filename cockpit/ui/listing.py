"""Textual's OptionList, safe to page at any moment.

PageUp or PageDown right after a list changed (its options replaced, or the list shown
again after Ctrl+B hid it) raised KeyError inside Textual: it looks the highlighted option
up in lines it has not laid out yet. Every list in Cockpit is this one, so a key pressed
in the same burst as the change does nothing instead of ending the app.
"""

from __future__ import annotations

import contextlib

from textual.widgets import OptionList


class Listing(OptionList):
    """An OptionList whose page keys wait for its lines."""

    def action_page_up(self) -> None:
        with contextlib.suppress(KeyError):  # not laid out yet: nothing to page
            super().action_page_up()  # type: ignore[no-untyped-call]

    def action_page_down(self) -> None:
        with contextlib.suppress(KeyError):
            super().action_page_down()  # type: ignore[no-untyped-call]
