"""One widget per row: the user's prompt, the agent's reply, a thought, a tool call, a
plan, a notice. Each is a single cheap widget, except the reply that is streaming live,
which holds a Markdown widget fed through Textual's MarkdownStream until it finishes."""

from __future__ import annotations

from typing import ClassVar

from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets._markdown import MarkdownStream

from cockpit.sanitize import printable
from cockpit.textout import plan_lines, tool_line
from store import Bubble

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


class ToolCard(BubbleWidget):
    """A tool call on one line: status mark, kind, title, state."""

    def on_mount(self) -> None:
        self._mark_status()

    def refresh_from(self, bubble: Bubble) -> None:
        super().refresh_from(bubble)
        self._mark_status()

    def _status(self) -> str:
        return str((self.payload or {}).get("status") or "pending")

    def _mark_status(self) -> None:
        status = STATUS_CLASSES.get(self._status())
        for name in STATUS_CLASSES.values():
            self.set_class(name == status, name)

    def render(self) -> Text:
        mark = TOOL_MARKS.get(self._status(), "○")
        line = printable(tool_line(self.payload))
        return Text(f"{mark} {line}")

    def copy_text(self) -> str:
        return tool_line(self.payload)


class PlanBubble(BubbleWidget):
    """The plan as a checklist."""

    def render(self) -> Text:
        lines = plan_lines(self.payload)
        return Text("Plan\n" + "\n".join(printable(line) for line in lines))

    def copy_text(self) -> str:
        return "\n".join(plan_lines(self.payload))


class AgentBubble(BubbleWidget):
    """The agent's reply, as Markdown.

    While it streams it holds a Textual Markdown widget written through a MarkdownStream;
    once finished (or when it comes from a page) it is one Static holding a Rich Markdown
    renderable, which costs one widget instead of one per block.
    """

    def __init__(self, bubble: Bubble, live: bool) -> None:
        super().__init__(bubble)
        self.live = live
        self._markdown: Markdown | None = None
        self._stream: MarkdownStream | None = None
        self._static: Static | None = None

    def compose(self) -> ComposeResult:
        if self.live:
            self._markdown = Markdown(printable(self.text))
            yield self._markdown
        else:
            self._static = Static(self._renderable())
            yield self._static

    def _renderable(self) -> RichMarkdown:
        return RichMarkdown(printable(self.text), code_theme="ansi_dark", hyperlinks=False)

    async def append(self, text: str) -> None:
        """Add streamed text (live bubbles only)."""
        self.text += text
        if self._markdown is None:
            self._refresh_static()
            return
        if self._stream is None:
            self._stream = Markdown.get_stream(self._markdown)
        await self._stream.write(printable(text))

    def refresh_from(self, bubble: Bubble) -> None:
        self.text = bubble.text
        self.payload = bubble.payload
        if self._markdown is not None:
            self.run_worker(self._replace_live(), group="bubble", exclusive=True)
        else:
            self._refresh_static()

    async def _replace_live(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        if self._markdown is not None:
            await self._markdown.update(printable(self.text))

    def _refresh_static(self) -> None:
        if self._static is not None:
            self._static.update(self._renderable())

    async def finish(self) -> None:
        """The reply is complete: stop streaming and keep it as one cheap widget."""
        if not self.live:
            return
        self.live = False
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        static = Static(self._renderable())
        self._static = static
        with self.app.batch_update():
            if self._markdown is not None:
                await self._markdown.remove()
                self._markdown = None
            await self.mount(static)


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
