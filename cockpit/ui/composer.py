"""The composer: a multi-line prompt box. Enter sends; Ctrl+J (which every terminal sends,
over SSH and tmux too), Shift+Enter or Alt+Enter insert a newline; Up on the first line and
Down on the last walk the prompt history; Esc cancels the running turn."""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from cockpit.viewmodel import PromptHistory

NEWLINE_KEYS = frozenset({"ctrl+j", "shift+enter", "alt+enter"})


class Composer(TextArea):
    """Where the user writes prompts."""

    class Submitted(Message):
        """The user sent a prompt."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class CancelRequested(Message):
        """The user pressed Esc: cancel the running turn."""

    def __init__(self, *, id: str | None = None, blink: bool = True) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.cursor_blink = blink
        self.prompts = PromptHistory()

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if key == "enter":
            event.stop()
            event.prevent_default()
            self.submit()
            return
        if key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if key == "escape":
            event.stop()
            event.prevent_default()
            self.post_message(self.CancelRequested())
            return
        if key == "up" and self.cursor_location[0] == 0:
            older = self.prompts.older(self.text)
            if older is not None:
                event.stop()
                event.prevent_default()
                self._replace_all(older)
            return
        if key == "down" and self.cursor_location[0] == self.document.line_count - 1:
            newer = self.prompts.newer()
            if newer is not None:
                event.stop()
                event.prevent_default()
                self._replace_all(newer)
            return
        await super()._on_key(event)

    def _replace_all(self, text: str) -> None:
        self.text = text
        self.move_cursor(self.document.end)

    def submit(self) -> None:
        """Send what is written (nothing when it is blank)."""
        text = self.text
        if not text.strip():
            return
        self.prompts.add(text)
        self.text = ""
        self.post_message(self.Submitted(text))
