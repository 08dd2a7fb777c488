"""A box of the new-session dialog says whether it is ticked by its mark, not by its colour
alone: a 16-colour terminal may show Textual's X the same either way."""

from __future__ import annotations

from textual.app import App, ComposeResult

from cockpit.ui.screens.new_session import ChoiceBox


class Boxes(App[None]):
    def compose(self) -> ComposeResult:
        yield ChoiceBox("ticked", value=True, id="on")
        yield ChoiceBox("not ticked", id="off")


async def test_a_box_shows_an_x_only_when_ticked() -> None:
    app = Boxes()
    async with app.run_test() as pilot:
        on, off = app.query_one("#on", ChoiceBox), app.query_one("#off", ChoiceBox)
        assert "X" in str(on.render()) and "X" not in str(off.render())
        off.focus()
        await pilot.press("space")
        on.value = False
        await pilot.pause()
        assert off.value and "X" in str(off.render())
        assert "X" not in str(on.render())
