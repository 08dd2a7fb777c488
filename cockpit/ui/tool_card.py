"""The tool card: one line per tool call (status mark, kind, title, where, state) that opens
on its content: text, diffs (unified, or side by side when wide; long ones folded) and a
terminal's output with its exit status, live while it runs. What the line says and when
the card opens by itself are `cockpit.ui.cards`' rules; its diffs are `cockpit.ui.diffs`'."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.markdown import Markdown as RichMarkdown
from rich.padding import Padding
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.reactive import reactive

from cockpit.api import (
    DiffContent,
    TerminalOutput,
    TextContent,
    ToolCall,
    Unknown,
    read_tool_call,
)
from cockpit.text.sanitize import printable
from cockpit.text.textout import call_output
from cockpit.ui.bubbles import BubbleWidget
from cockpit.ui.cards import (
    STATUS_CLASSES,
    TOOL_MARKS,
    card_line,
    card_opens,
    has_terminal,
    session_root,
    short_path,
)
from cockpit.ui.diffs.palette import CODE_THEME, diff_styles
from cockpit.ui.diffs.render import choose_layout, render_diff
from store import Bubble


class ToolCard(BubbleWidget):
    """A tool call: one line (status mark, kind, title, where, state) until expanded; then
    its content: text, diffs (unified, or side by side when wide; long ones folded), and a
    terminal's output with its exit status, live while it runs. A failure opens itself."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "toggle_card", "Expand", show=False),
        Binding("f", "unfold", "Whole diff", show=False),
        Binding("s", "switch_layout", "Split/unified", show=False),
        Binding("c", "copy", "Copy", show=False),
    ]
    expanded: reactive[bool] = reactive(False, layout=True)
    unfolded: reactive[bool] = reactive(False, layout=True)
    layout_choice: reactive[str | None] = reactive(None, layout=True)

    default_policy: ClassVar[str] = "failures"
    """When cards open by themselves: "failures", "always" or "never" (a setting)."""

    def __init__(self, bubble: Bubble, policy: str | None = None) -> None:
        super().__init__(bubble)
        self.call = read_tool_call(bubble.payload)
        """The tool call, read from the row's payload once per update."""
        self.policy = policy or self.default_policy
        self._user_toggled = False

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(not expanded, "-collapsed")

    def on_mount(self) -> None:
        self.set_class(not self.expanded, "-collapsed")
        self._mark_status()
        self._auto_expand()

    def refresh_from(self, bubble: Bubble) -> None:
        self.call = read_tool_call(bubble.payload)
        super().refresh_from(bubble)
        self._mark_status()
        self._auto_expand()

    def _auto_expand(self) -> None:
        """Open by the policy: a failure stays open, a running command is open while it
        runs (its output is live) and folds when it succeeds; the user's toggle wins."""
        if self._user_toggled:
            return
        self.expanded = card_opens(self.policy, self._status(), has_terminal(self.call))

    def _status(self) -> str:
        return self.call.status if isinstance(self.call, ToolCall) else "unknown"

    def _mark_status(self) -> None:
        status = STATUS_CLASSES.get(self._status())
        for name in STATUS_CLASSES.values():
            self.set_class(name == status, name)

    def action_toggle_card(self) -> None:
        """Open or close the card."""
        self._user_toggled = True
        self.expanded = not self.expanded

    def on_click(self) -> None:
        self.action_toggle_card()

    def action_unfold(self) -> None:
        """Show a long diff whole (or fold it again)."""
        self.unfolded = not self.unfolded

    def action_switch_layout(self) -> None:
        """Side by side, or unified."""
        width = self.content_size.width
        current = self.layout_choice or choose_layout(width)
        self.layout_choice = "unified" if current == "split" else "split"

    def render(self) -> RenderableType:
        mark = TOOL_MARKS.get(self._status(), "○")
        line = card_line(self.call, self._root())
        header = Text(f"{'▾' if self.expanded else '▸'} {mark} {printable(line)}")
        if not self.expanded:
            return header
        return Group(header, *self._body(max(self.content_size.width - 2, 20)))

    def _root(self) -> str | None:
        """The folder of the session this card is in (the transcript's session), so paths
        can be shown relative to it."""
        return session_root(self.app, getattr(self.parent, "session", None))

    def _body(self, width: int) -> list[RenderableType]:
        if isinstance(self.call, Unknown):
            return []
        parts: list[RenderableType] = []
        styles = diff_styles(self)
        for item in self.call.content:
            if isinstance(item, DiffContent):
                parts.append(
                    render_diff(
                        short_path(item.path or "", self._root()),
                        item.old_text,
                        item.new_text,
                        width=width,
                        folded=not self.unfolded,
                        styles=styles,
                        layout=self.layout_choice,  # type: ignore[arg-type]
                    )
                )
            elif isinstance(item, TextContent):
                parts.append(  # no OSC 8 link to wherever the agent points
                    RichMarkdown(printable(item.text), code_theme=CODE_THEME, hyperlinks=False)
                )
            else:
                parts.append(self._terminal(self.call.terminal(item.terminal_id)))
        raw = self.call.raw_output
        if not parts and raw is not None:
            parts.append(Text(printable(call_output(ToolCall(raw_output=raw))), style="dim"))
        return [Padding(part, (0, 0, 0, 2)) for part in parts]

    def _terminal(self, data: TerminalOutput | None) -> RenderableType:
        """A terminal's output (the last lines) and how it ended, or that it still runs."""
        if data is None:
            return Text("⋯ waiting for output", style="dim")
        lines = printable(data.output).splitlines()
        shown = lines[-TERMINAL_LINES:]
        text = Text("\n".join(shown))
        if len(lines) > len(shown) or data.truncated:
            text = Text("… earlier output not shown\n", style="dim") + text
        status = data.exit_status
        if status is not None:
            code, signal = status.code, status.signal
            ending = f"exit {code}" if code is not None else f"killed by {signal}"
            text.append(f"\n[{ending}]", style="bold" if code == 0 else "bold bright_red")
        else:
            text.append("\n[running…]", style="dim")
        return text

    def copy_text(self) -> str:
        line = card_line(self.call, self._root())
        return "\n".join(part for part in (line, call_output(self.call)) if part)


TERMINAL_LINES = 30
"""Lines of a terminal's output an open card shows (the newest)."""
