"""One widget per row: the user's prompt, the agent's reply, a thought, a tool call, a
plan, a notice. Each is a single cheap widget; the reply renders its Markdown block by
block and re-renders only the block still being written."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.markdown import Markdown as RichMarkdown
from rich.padding import Padding
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.reactive import reactive
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from cockpit.mdblocks import BlockSplitter
from cockpit.sanitize import printable
from cockpit.textout import plan_lines, tool_line, tool_output
from cockpit.ui.diffs import DiffStyles, choose_layout, render_diff
from store import Bubble

REPAINT_RATE = 30
"""Most redraws a second of a streaming reply."""

STATUS_CLASSES = {
    "completed": "-done",
    "failed": "-failed",
    "cancelled": "-cancelled",
    "in_progress": "-running",
    "pending": "-pending",
}
TOOL_MARKS = {"completed": "✓", "failed": "✗", "cancelled": "⊘", "in_progress": "⋯", "pending": "○"}


class BubbleWidget(Widget):
    """The shared behaviour of bubbles: a key, a seq, focus and copy."""

    can_focus = True
    BINDINGS: ClassVar[list[BindingType]] = [Binding("c", "copy", "Copy", show=False)]

    def __init__(self, bubble: Bubble) -> None:
        super().__init__(classes=f"bubble -{bubble.kind}")
        self.key = bubble.key
        self.seq = bubble.seq
        self.text = bubble.text
        self.payload = bubble.payload

    def refresh_from(self, bubble: Bubble) -> None:
        """Show the bubble's latest text and payload."""
        self.text = bubble.text
        self.payload = bubble.payload
        self.refresh(layout=True)

    def copy_text(self) -> str:
        """What the copy action puts on the clipboard."""
        return self.text

    def action_copy(self) -> None:
        """Copy this bubble (OSC 52, so it works over SSH)."""
        self.app.copy_to_clipboard(self.copy_text())
        self.notify("Copied to the clipboard", timeout=2)


class UserBubble(BubbleWidget):
    """The user's prompt."""

    def render(self) -> Text:
        return Text(printable(self.text))


class NoteBubble(BubbleWidget):
    """A notice, an error or a permission decision, on one or a few lines."""

    MARKS: ClassVar[dict[str, str]] = {"notice": "ⓘ ", "error": "✗ ", "permission": "⚑ "}

    def render(self) -> Text:
        return Text(self.MARKS.get(self.classes_kind(), "") + printable(self.text))

    def classes_kind(self) -> str:
        return next((c[1:] for c in self.classes if c in ("-notice", "-error", "-permission")), "")


class ThoughtBubble(BubbleWidget):
    """A thought: one line until expanded (Enter, click)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "toggle_thought", "Expand", show=False),
        Binding("c", "copy", "Copy", show=False),
    ]
    expanded: reactive[bool] = reactive(False, layout=True)

    def on_mount(self) -> None:
        self.add_class("-collapsed")

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(not expanded, "-collapsed")

    def render(self) -> Text:
        text = printable(self.text).strip()
        if self.expanded:
            return Text("▾ Thinking\n" + text)
        first = text.splitlines()[0] if text else ""
        return Text("▸ Thinking: " + first)

    def action_toggle_thought(self) -> None:
        """Show the whole thought, or fold it back to one line."""
        self.expanded = not self.expanded

    def on_click(self) -> None:
        self.action_toggle_thought()


def has_terminal(payload: Mapping[str, Any] | None) -> bool:
    """True when a tool call embeds a terminal."""
    return any(
        isinstance(item, Mapping) and item.get("type") == "terminal"
        for item in (payload or {}).get("content") or ()
    )


def card_opens(policy: str, status: str, terminal: bool) -> bool:
    """Whether a tool card is open by itself under `policy` ("failures", "always" or
    "never") in `status`."""
    if policy == "always":
        return True
    if policy == "never":
        return False
    return status == "failed" or (status == "in_progress" and terminal)


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
        self.policy = policy or self.default_policy
        self._user_toggled = False

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(not expanded, "-collapsed")

    def on_mount(self) -> None:
        self.set_class(not self.expanded, "-collapsed")
        self._mark_status()
        self._auto_expand()

    def refresh_from(self, bubble: Bubble) -> None:
        super().refresh_from(bubble)
        self._mark_status()
        self._auto_expand()

    def _auto_expand(self) -> None:
        """Open by the policy: a failure stays open, a running command is open while it
        runs (its output is live) and folds when it succeeds; the user's toggle wins."""
        if self._user_toggled:
            return
        self.expanded = card_opens(self.policy, self._status(), has_terminal(self.payload))

    def _status(self) -> str:
        return str((self.payload or {}).get("status") or "pending")

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
        header = Text(
            f"{'▾' if self.expanded else '▸'} {mark} {printable(tool_line(self.payload))}"
        )
        if not self.expanded:
            return header
        return Group(header, *self._body(max(self.content_size.width - 2, 20)))

    def _body(self, width: int) -> list[RenderableType]:
        payload = self.payload or {}
        parts: list[RenderableType] = []
        styles = diff_styles(self)
        for item in payload.get("content") or ():
            if not isinstance(item, Mapping):
                continue
            if item.get("type") == "diff":
                parts.append(
                    render_diff(
                        str(item.get("path") or ""),
                        item.get("oldText"),
                        str(item.get("newText") or ""),
                        width=width,
                        folded=not self.unfolded,
                        styles=styles,
                        layout=self.layout_choice,  # type: ignore[arg-type]
                    )
                )
            elif item.get("type") == "content":
                block = item.get("content")
                if isinstance(block, Mapping) and isinstance(block.get("text"), str):
                    parts.append(RichMarkdown(printable(block["text"]), code_theme="ansi_dark"))
            elif item.get("type") == "terminal":
                parts.append(self._terminal(str(item.get("terminalId"))))
        raw = payload.get("rawOutput")
        if not parts and raw:
            parts.append(Text(printable(tool_output({"rawOutput": raw})), style="dim"))
        return [Padding(part, (0, 0, 0, 2)) for part in parts]

    def _terminal(self, terminal_id: str) -> RenderableType:
        """A terminal's output (the last lines) and how it ended, or that it still runs."""
        terminals = (self.payload or {}).get("terminalOutput") or {}
        data = terminals.get(terminal_id) if isinstance(terminals, Mapping) else None
        if not isinstance(data, Mapping):
            return Text("⋯ waiting for output", style="dim")
        lines = printable(str(data.get("output") or "")).splitlines()
        shown = lines[-TERMINAL_LINES:]
        text = Text("\n".join(shown))
        if len(lines) > len(shown) or data.get("truncated"):
            text = Text("… earlier output not shown\n", style="dim") + text
        status = data.get("exitStatus")
        if isinstance(status, Mapping):
            code, signal = status.get("exitCode"), status.get("signal")
            ending = f"exit {code}" if code is not None else f"killed by {signal}"
            text.append(f"\n[{ending}]", style="bold" if code == 0 else "bold red")
        else:
            text.append("\n[running…]", style="dim")
        return text

    def copy_text(self) -> str:
        return "\n".join(
            part for part in (tool_line(self.payload), tool_output(self.payload)) if part
        )


def diff_styles(widget: Widget) -> DiffStyles:
    """The diff colours of the app's current theme (cached per theme)."""
    app = widget.app
    key = app.theme
    cached = _DIFF_STYLES.get(key)
    if cached is None:
        variables = app.get_css_variables()
        ansi = bool(getattr(app.current_theme, "ansi", False))
        cached = DiffStyles.from_variables(variables, syntax_theme="ansi_dark" if ansi else "")
        _DIFF_STYLES[key] = cached
    return cached


_DIFF_STYLES: dict[str, DiffStyles] = {}

TERMINAL_LINES = 30
"""Lines of a terminal's output an open card shows (the newest)."""


class PlanBubble(BubbleWidget):
    """The plan as a checklist."""

    def render(self) -> Text:
        lines = plan_lines(self.payload)
        return Text("Plan\n" + "\n".join(printable(line) for line in lines))

    def copy_text(self) -> str:
        return "\n".join(plan_lines(self.payload))


class AgentBubble(BubbleWidget):
    """The agent's reply, as Markdown, one widget whatever its length.

    The text is split into top-level blocks (`cockpit.mdblocks`): a sealed block is
    rendered once (per width) and kept as lines; only the open tail is rendered again when
    text arrives. So streaming costs grow with the text, not with the number of chunks or
    the square of the length, and a finished reply needs no second rendering.
    """

    def __init__(self, bubble: Bubble, live: bool = False) -> None:
        self._parts: list[str] = []
        super().__init__(bubble)
        self.live = live
        self._splitter = BlockSplitter()
        self._blocks: list[str] = []
        self._width = 0
        self._sealed: list[Strip] = []
        self._rendered_blocks = 0
        self._tail: list[Strip] | None = None
        self._all: list[Strip] | None = None
        self._painted = 0.0
        self._repaint: Timer | None = None
        self._extend(bubble.text)

    @property
    def text(self) -> str:
        """The reply so far (kept as parts while it streams)."""
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    @text.setter
    def text(self, text: str) -> None:
        self._parts = [text] if text else []

    def _extend(self, text: str) -> None:
        self._blocks += self._splitter.feed(printable(text))
        self._tail = None
        self._all = None

    async def append(self, text: str) -> None:
        """Add streamed text. The screen is asked to redraw at most REPAINT_RATE times a
        second: a terminal shows no more, and each redraw lays out the whole screen."""
        self._parts.append(text)
        self._extend(text)
        now = time.monotonic()
        if now - self._painted >= 1 / REPAINT_RATE:
            self._painted = now
            self.refresh(layout=True)
        elif self._repaint is None:
            self._repaint = self.set_timer(1 / REPAINT_RATE, self._deferred_refresh)

    def _deferred_refresh(self) -> None:
        self._repaint = None
        self._painted = time.monotonic()
        self.refresh(layout=True)

    def refresh_from(self, bubble: Bubble) -> None:
        if bubble.text.startswith(self.text):
            self._extend(bubble.text[len(self.text) :])
        else:
            self._splitter = BlockSplitter()
            self._blocks = []
            self._sealed = []
            self._rendered_blocks = 0
            self._all = None
            self._extend(bubble.text)
        self.text = bubble.text
        self.payload = bubble.payload
        self.refresh(layout=True)

    async def finish(self) -> None:
        """The reply is complete: nothing to re-render, it simply stops growing."""
        self.live = False
        if self._repaint is not None:
            self._repaint.stop()
            self._deferred_refresh()

    def _render_markdown(self, markdown: str, width: int) -> list[Strip]:
        console = self.app.console
        options = console.options.update(width=width, height=None)
        renderable = RichMarkdown(markdown, code_theme="ansi_dark", hyperlinks=False)
        lines = [Strip(line) for line in console.render_lines(renderable, options, pad=False)]
        while lines and _blank(lines[0]):
            lines.pop(0)
        while lines and _blank(lines[-1]):
            lines.pop()
        return lines

    def _lines(self, width: int) -> list[Strip]:
        if self._all is not None and width == self._width:
            return self._all
        if width != self._width:
            self._width = width
            self._sealed = []
            self._rendered_blocks = 0
            self._tail = None
        while self._rendered_blocks < len(self._blocks):
            if self._sealed:
                self._sealed.append(Strip.blank(0))
            block = self._blocks[self._rendered_blocks]
            self._sealed += self._render_markdown(block.strip("\n"), width)
            self._rendered_blocks += 1
        if self._tail is None:
            tail = self._splitter.tail.strip("\n")
            self._tail = self._render_markdown(tail, width) if tail.strip() else []
        if self._sealed and self._tail:
            self._all = [*self._sealed, Strip.blank(0), *self._tail]
        else:
            self._all = self._sealed or self._tail
        return self._all

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines(width))

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        lines = self._lines(width)
        base = self.rich_style
        if y < len(lines):
            return lines[y].extend_cell_length(width).apply_style(base)
        return Strip.blank(width, base)


def _blank(line: Strip) -> bool:
    """A rendered line with nothing on it (the margins Rich puts around some blocks)."""
    return not line.text.strip() and not any(s.style and s.style.bgcolor for s in line)


def make_bubble(bubble: Bubble, live: bool = False) -> BubbleWidget:
    """The widget for a row of this kind."""
    if bubble.kind == "agent":
        return AgentBubble(bubble, live)
    kinds: dict[str, type[BubbleWidget]] = {
        "user": UserBubble,
        "thought": ThoughtBubble,
        "tool": ToolCard,
        "plan": PlanBubble,
    }
    return kinds.get(bubble.kind, NoteBubble)(bubble)
