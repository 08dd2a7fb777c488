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
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input


async def ran_own_binding(
    widget: Widget, event: events.Key, *, text: bool = True, screen: bool = False
) -> bool:
    """Run the binding `widget` itself has for the key, now (True when it ran); False
    leaves the key to go its usual way (a letter typed, the app's key, or disabled).
    `text`: the widget takes printable keys as text (a field, the prompt), so none of
    them is looked up (the lookup walks every binding on screen, at each letter).
    `screen`: its screen's bindings are run too (a list whose keys are the screen's)."""
    if text and event.is_printable:
        return False
    active = widget.screen.active_bindings.get(event.key)
    owners = (widget, widget.screen) if screen else (widget,)
    if active is None or active.node not in owners or not active.enabled:
        return False
    if not await widget.app.run_action(active.binding.action, active.node):
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


class HandedOn(Message):
    """A key that reached a widget after its screen lost the keyboard to a dialog it
    opened (`c`, then the comment, in one burst): it belongs to that dialog, ahead of the
    keys held since it opened."""

    def __init__(self, key: str, character: str | None) -> None:
        super().__init__()
        self.key = key
        self.character = character


def handed_on(widget: Widget, event: events.Key) -> bool:
    """Send a key that reached `widget` while another screen is on top of its own on to
    that screen (True when it did). Textual queued it at the widget before the dialog
    opened; there it would act on the screen below, or its Enter on the dialog, alone."""
    if widget.app.screen is widget.screen:
        return False
    event.stop()
    event.prevent_default()
    widget.post_message(HandedOn(event.key, event.character))
    return True


class Field(Input):
    """A one-line text field whose editing keys keep their order in a burst."""

    async def on_key(self, event: events.Key) -> None:
        await ran_own_binding(self, event)
