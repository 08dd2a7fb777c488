"""The line above the composer that says what the session on screen is doing."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

from cockpit.ui.status_rules import StatusPart, fit_status


class StatusLine(Widget):
    """The line above the composer: the turn state first, then as much of mode, model,
    options, usage and agent as its width holds (fitted again on every resize)."""

    DEFAULT_CSS = "StatusLine { height: 1; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.parts: list[StatusPart] = []

    def show(self, parts: list[StatusPart]) -> None:
        if parts != self.parts:
            self.parts = parts
            self.refresh()

    def render(self) -> Content:
        return Content(fit_status(self.parts, self.content_size.width))
