"""A widget's own keys, run in the order they were typed.

Textual inserts a printable key in the focused widget's own turn, but runs a binding that
is not a priority one (Backspace, the arrows, Ctrl+W, Enter in a one-line field) only once
the key has bubbled up to the app. In a burst (keys typed fast, or over SSH, where one
read brings several) the letters typed after a Backspace were in before it ran, and it
deleted them instead: "ab", Backspace, "c" gave "a", not "ac". A widget that runs its own
bindings as each key comes keeps the order (a question's digit, too, answers before the
letters typed after it arrive).
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget
from textual.widgets import Input


async def ran_own_binding(widget: Widget, event: events.Key, *, text: bool = True) -> bool:
    """Run the binding `widget` itself has for the key, now (True when it ran); False
    leaves the key to go its usual way (a letter typed, the app's key, or disabled).
    `text`: the widget takes printable keys as text (a field, the prompt), so none of
    them is looked up (the lookup walks every binding on screen, at each letter)."""
    if text and event.is_printable:
        return False
    active = widget.screen.active_bindings.get(event.key)
    if active is None or active.node is not widget or not active.enabled:
        return False
    if not await widget.app.run_action(active.binding.action, widget):
        return False
    event.stop()
    event.prevent_default()
    return True


def passed_on(widget: Widget, event: events.Key) -> bool:
    """Send a key that reached `widget` after the keyboard left it to where the keyboard is
    now (True when it did). Textual hands a burst's keys to the focused widget as they come,
    before any is handled: a Tab that moves on hands the focus over, but the keys typed
    after it are queued at the widget it left."""
    if widget.screen.focused is widget or widget.screen.focused is None:
        return False
    event.stop()
    event.prevent_default()
    widget.app.post_message(events.Key(event.key, event.character))
    return True


class Field(Input):
    """A one-line text field whose editing keys keep their order in a burst."""

    async def on_key(self, event: events.Key) -> None:
        await ran_own_binding(self, event)
