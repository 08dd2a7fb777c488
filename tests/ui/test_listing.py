"""Lists page safely the moment they are shown again (the key monkey found PageUp right after
Ctrl+B showed the rail again ending the app, inside Textual's OptionList)."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import OptionList

from cockpit.ui.listing import Listing


class OneList(App[None]):
    def __init__(self, kind: type[OptionList]) -> None:
        super().__init__()
        self.kind = kind

    def compose(self) -> ComposeResult:
        yield self.kind(*(f"option {n}" for n in range(30)))


async def page_right_after_it_shows(kind: type[OptionList]) -> None:
    app = OneList(kind)
    async with app.run_test(size=(40, 10)) as pilot:
        listing = app.query_one(kind)
        listing.highlighted = 5
        listing.display = False  # Ctrl+B hides the rail...
        await pilot.pause()
        listing.clear_options()  # ...a session changes meanwhile...
        listing.add_options(f"new {n}" for n in range(30))
        listing.highlighted = 5
        listing.display = True  # ...and Ctrl+B in the same burst shows it again
        listing.action_page_up()  # type: ignore[no-untyped-call]  # before it is laid out
        listing.action_page_down()  # type: ignore[no-untyped-call]
        await pilot.pause()
        listing.action_page_down()  # type: ignore[no-untyped-call]  # once laid out, it pages
        assert (listing.highlighted or 0) > 5


async def test_a_listing_pages_at_once_after_it_is_shown_again() -> None:
    await page_right_after_it_shows(Listing)


async def test_textuals_own_list_does_not_which_is_why_listing_exists() -> None:
    """If this starts passing, Textual fixed it and Listing can go."""
    with pytest.raises(KeyError):
        await page_right_after_it_shows(OptionList)
