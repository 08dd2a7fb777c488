"""The key bar rebuilds its keys only when they change, and always shows the keys the
focused widget has."""

from __future__ import annotations

from pathlib import Path

from textual.binding import ActiveBinding, Binding
from textual.widget import Widget
from textual.widgets._footer import FooterKey

from cockpit.ui.app import CockpitApp
from cockpit.ui.composer import Composer
from cockpit.ui.footer import KeyFooter, ShownKeys
from cockpit.ui.footer import shown_keys as shown_of
from cockpit.ui.rail import SessionRail
from cockpit.ui.transcript import TranscriptView
from tests.support.ui_helpers import make_app, steady, wait_until


def keys_of(active: dict[str, ActiveBinding]) -> ShownKeys:
    return shown_of(active, "ctrl+p")


def test_the_keys_shown_leave_out_hidden_ones_and_the_node_and_keep_order_state_and_tooltip() -> (
    None
):
    one, two = Widget(), Widget()
    save = Binding("ctrl+s", "save", "Save")
    quit_ = Binding("ctrl+q", "quit", "Quit")
    hidden = Binding("up", "previous", "Previous", show=False)
    palette = Binding("ctrl+p", "command_palette", "palette", show=False)
    keys = {
        "ctrl+s": ActiveBinding(one, save, True, ""),
        "ctrl+q": ActiveBinding(one, quit_, True, ""),
        "ctrl+p": ActiveBinding(one, palette, True, ""),
    }
    moved = {key: ActiveBinding(two, *entry[1:]) for key, entry in keys.items()}
    assert keys_of(keys) == keys_of(moved)
    assert keys_of(keys) == keys_of({**keys, "up": ActiveBinding(two, hidden, True, "")})
    assert [binding.key for binding, _, _ in keys_of(keys)] == ["ctrl+s", "ctrl+q", "ctrl+p"]
    assert keys_of(keys) != keys_of(dict(reversed(keys.items())))
    assert keys_of(keys) != keys_of({**keys, "ctrl+s": ActiveBinding(one, save, False, "")})
    assert keys_of(keys) != keys_of({**keys, "ctrl+s": ActiveBinding(one, save, True, "x")})
    renamed = Binding("ctrl+s", "save", "Save all")
    assert keys_of(keys) != keys_of({**keys, "ctrl+s": ActiveBinding(one, renamed, True, "")})


def descriptions(app: CockpitApp) -> list[str]:
    """The keys on the footer (the command palette's key, at its right, left out)."""
    return [
        key.description for key in app.query(FooterKey) if not key.has_class("-command-palette")
    ]


def expected(app: CockpitApp) -> list[str]:
    """The descriptions Textual's footer gives the screen's keys now."""
    active = shown_of(app.screen.active_bindings, app.COMMAND_PALETTE_BINDING)
    shown = [binding for binding, _, _ in active if binding.show]
    seen: dict[str, str] = {}
    for binding in shown:
        seen.setdefault(binding.action, binding.description)
    return list(seen.values())


async def test_a_signal_with_the_same_keys_rebuilds_nothing_and_new_keys_show(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 24)) as pilot:
        footer = app.query_one(KeyFooter)
        await wait_until(lambda: len(app.query(FooterKey)) > 0)
        keys = await steady(pilot, lambda: list(app.query(FooterKey)))  # built for the composer
        assert isinstance(app.focused, Composer)
        for _ in range(3):
            app.screen.refresh_bindings()  # nothing changed: the same key widgets stay
            await pilot.pause()
        assert list(app.query(FooterKey)) == keys and all(key.is_attached for key in keys)
        await pilot.press("tab")  # the transcript's keys are not on the footer
        assert isinstance(app.focused, TranscriptView)
        await pilot.pause()
        assert list(app.query(FooterKey)) == keys
        await pilot.press("tab")  # the rail's are: Plan
        assert isinstance(app.focused, SessionRail)
        await wait_until(
            lambda: "Plan" in descriptions(app) and descriptions(app) == expected(app),
            what="the rail's keys",
        )
        await pilot.press("shift+tab", "shift+tab")
        assert isinstance(app.focused, Composer)
        await wait_until(
            lambda: "Plan" not in descriptions(app) and descriptions(app) == expected(app),
            what="the composer's keys",
        )
        assert descriptions(app) == [key.description for key in keys[:-1]]
        assert footer.is_attached
