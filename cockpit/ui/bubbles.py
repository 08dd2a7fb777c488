"""One widget per row: the user's prompt, the agent's reply, a thought, a plan, a notice
(and a tool call: `cockpit.ui.tool_card`), all on `BubbleWidget`, whose stylesheet styles
every kind; `cockpit.ui.bubble_kinds` picks the widget for a row. Each is a single cheap
widget; the reply renders its Markdown block by block and re-renders only the block still
being written, at the pace `cockpit.ui.repaint` sets."""

from __future__ import annotations

import time
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from cockpit.api import Plan, read_attachments, read_plan
from cockpit.text.sanitize import StreamCleaner, printable
from cockpit.text.textout import plan_checklist, plan_source
from cockpit.ui.markdown_lines import finished_markdown, render_markdown
from cockpit.ui.mdblocks import BlockSplitter
from cockpit.ui.repaint import RepaintPacer, ReplyLines, changed_lines
from cockpit.ui.shell_rules import attachment_line
from store import Bubble
from store.pieces import Pieces


class BubbleWidget(Widget):
    """The shared behaviour of bubbles: a key, a seq, focus and copy."""

    # Every bubble keeps its first column for the focus bar, blank until it has the focus,
    # so moving the focus never re-wraps a bubble. The focused bubble (the one `c` copies)
    # gets the bar and a lighter background; the bar's shape (a half block) tells it from
    # the full block of the user's and the plan's bubbles even where colours are few and
    # the background does not show. The user's bubble keeps its own background: its bar
    # alone changes (the plan's focus is named with the rest, or its own full bar would
    # win). No order-dependent selectors (:first-child, :odd...): they would restyle every
    # bubble on every mount. The order of the rules matters where two are as specific.
    DEFAULT_CSS = """
    BubbleWidget {
        height: auto;
        width: 100%;
        margin: 1 0 0 0;
        border-left: blank $foreground;
    }
    BubbleWidget:focus, BubbleWidget.-plan:focus {
        background: $bubble-focus-background;
        border-left: outer $bubble-focus-border;
    }
    BubbleWidget.-user:focus {
        border-left: outer $bubble-focus-border;
    }
    BubbleWidget.-user {
        background: $bubble-user-background;
        border-left: thick $bubble-user-border;
        padding: 0 1;
    }
    BubbleWidget.-agent {
        padding: 0 0 0 0;
    }
    BubbleWidget.-thought {
        color: $bubble-thought-foreground;
        text-style: italic;
        padding: 0 1;
    }
    BubbleWidget.-thought.-collapsed, BubbleWidget.-tool.-collapsed {
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    BubbleWidget.-tool {
        color: $tool-foreground;
        padding: 0 1;
        margin: 0;
    }
    BubbleWidget.-tool.-failed {
        color: $status-error;
    }
    BubbleWidget.-tool.-running {
        color: $status-working;
    }
    BubbleWidget.-tool.-cancelled {
        color: $text-muted;
    }
    BubbleWidget.-plan {
        padding: 0 1;
        border-left: thick $accent;
    }
    BubbleWidget.-notice {
        color: $bubble-notice-foreground;
        padding: 0 1;
    }
    BubbleWidget.-error {
        color: $bubble-error-foreground;
        padding: 0 1;
    }
    BubbleWidget.-permission {
        color: $bubble-notice-foreground;
        padding: 0 1;
        margin: 0;
    }
    """

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
    """The user's prompt, and a line for each command's output it carried."""

    def render(self) -> Text:
        text = Text(printable(self.text))
        for attachment in read_attachments(self.payload):
            text.append("\n" + attachment_line(attachment), style="dim")
        return text


class NoteBubble(BubbleWidget):
    """A notice, an error or a permission decision, on one or a few lines."""

    MARKS: ClassVar[dict[str, str]] = {"notice": "⊙ ", "error": "✗ ", "permission": "⚑ "}
    """Marks drawn in DejaVu Sans Mono, the usual Linux monospace font, like every glyph
    of the UI (tests/test_glyphs.py)."""

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


class PlanBubble(BubbleWidget):
    """The plan as a checklist."""

    def __init__(self, bubble: Bubble) -> None:
        super().__init__(bubble)
        self.plan = read_plan(bubble.payload)
        """The plan, read from the row's payload once per update."""

    def refresh_from(self, bubble: Bubble) -> None:
        self.plan = read_plan(bubble.payload)
        super().refresh_from(bubble)

    def render(self) -> Text:
        lines = plan_checklist(self.plan)
        title = "Plan"
        if isinstance(self.plan, Plan) and self.plan.revision:
            title += f" · {plan_source(self.plan)}"
        return Text(title + "\n" + "\n".join(printable(line) for line in lines))

    def copy_text(self) -> str:
        return "\n".join(plan_checklist(self.plan))


class AgentBubble(BubbleWidget):
    """The agent's reply, as Markdown, one widget whatever its length.

    The text is split into top-level blocks (`cockpit.ui.mdblocks`): a sealed block is
    rendered once (per width) and kept as lines; only the open tail is rendered again when
    text arrives. So streaming costs grow with the text, not with the number of chunks or
    the square of the length, and a finished reply needs no second rendering.

    While it streams, the screen shows a frame: the lines as they were at the last
    repaint. A repaint renders the tail, then asks the screen for as little as it can: the
    lines that differ from the frame on screen when the reply kept its height (no
    layout), a layout only when it got taller or shorter. How often it repaints is the
    `RepaintPacer`'s rule (`cockpit.ui.repaint`), from what recent repaints cost.
    """

    def __init__(self, bubble: Bubble, live: bool = False) -> None:
        self._pieces = Pieces()
        super().__init__(bubble)
        self.live = live
        self._cleaner = StreamCleaner()
        self._splitter = BlockSplitter()
        self._blocks: list[str] = []
        self._width = 0
        self._sealed: list[Strip] = []
        self._rendered_blocks = 0
        self._tail: list[Strip] | None = None
        self._all: ReplyLines | None = None
        self._frame: ReplyLines | None = None
        """The lines the screen shows (or will at its next update)."""
        self._frame_width = 0
        self._frame_sealed = 0
        """How many lines at the top of the frame are sealed blocks (they cannot change)."""
        self._repaint: Timer | None = None
        self._pacer = RepaintPacer()
        self._extend(bubble.text)
        if not live:
            self._extend_held()

    @property
    def repaint_pending(self) -> bool:
        """A repaint is waiting for its timer (the screen does not show all the text yet)."""
        return self._repaint is not None

    @property
    def text(self) -> str:
        """The reply so far (kept as pieces while it streams: a join, not once a frame)."""
        return self._pieces.text

    @text.setter
    def text(self, text: str) -> None:
        self._pieces = Pieces(text)

    def _extend(self, text: str) -> None:
        self._blocks += self._splitter.feed(self._cleaner.feed(text))
        self._tail = None
        self._all = None

    def _extend_held(self) -> None:
        """The reply has ended: an escape sequence it left unfinished goes too."""
        self._blocks += self._splitter.feed(self._cleaner.flush())
        self._tail = None
        self._all = None

    async def append(self, text: str) -> None:
        """Add streamed text. The screen is asked to redraw at most REPAINT_RATE times a
        second: a terminal shows no more."""
        self._pieces.append(text)
        self._extend(text)
        if self._repaint is not None:
            return
        now = time.monotonic()
        due = self._pacer.next_due()
        if due <= now:
            self._paint()
        else:
            self._repaint = self.set_timer(due - now, self._deferred_paint)

    def _deferred_paint(self) -> None:
        self._repaint = None
        self._paint(late=self._pacer.lateness())

    def _paint(self, late: float = 0.0) -> None:
        """Show the text so far: render it into a new frame and ask the screen to update
        the lines that changed, or to lay out again when the height changed. `late`: how
        long after it was due the repaint could start (the app was busy)."""
        pacer = self._pacer
        started = pacer.start()
        before, width = self._frame, self._frame_width
        if before is None or not width:
            self._frame = None  # the next layout takes a fresh frame
            pacer.paint_cost = None
            self.refresh(layout=True)
            return
        rendering = time.thread_time()
        lines = self._frame = self._lines(width)
        pacer.render_cost = time.thread_time() - rendering
        stable, self._frame_sealed = self._frame_sealed, len(self._sealed)
        pacer.paint_cost = time.monotonic() - started + late
        if len(lines) != len(before):
            self.refresh(layout=True)
            return
        changed = changed_lines(before, lines, stable)
        if changed:
            self.refresh(Region(0, changed.start, width, len(changed)))

    def _asked(self) -> None:
        """The screen asks for the frame's lines (its height, or a line): the pacer times
        the screen's update from the first such call to the last one before the event
        loop moves on (`UPDATE_IN_ONE_GO` in `cockpit.compat.textual_private`)."""
        if self._pacer.asked():
            self.call_next(self._pacer.update_over)  # after the screen's update

    def refresh_from(self, bubble: Bubble) -> None:
        if bubble.text.startswith(self.text):
            self._extend(bubble.text[len(self.text) :])
        else:
            self._cleaner = StreamCleaner()
            self._splitter = BlockSplitter()
            self._blocks = []
            self._sealed = []
            self._rendered_blocks = 0
            self._all = None
            self._extend(bubble.text)
        self.text = bubble.text
        self.payload = bubble.payload
        self._frame = None
        self.refresh(layout=True)

    async def finish(self) -> None:
        """The reply is complete: nothing to re-render, it simply stops growing."""
        self.live = False
        self._extend_held()
        if self._repaint is not None:
            self._repaint.stop()
            self._deferred_paint()

    def lines(self, width: int) -> list[Strip]:
        """The whole text rendered at `width`, line by line."""
        return list(self._lines(width))

    def _lines(self, width: int) -> ReplyLines:
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
            self._sealed += finished_markdown(self.app.console, block.strip("\n"), width)
            self._rendered_blocks += 1
        if self._tail is None:
            tail = self._splitter.tail.strip("\n")
            # The open tail changes with every chunk while the reply streams: kept only
            # once the reply is finished (a stored reply's last block stays the tail).
            render = render_markdown if self.live else finished_markdown
            self._tail = render(self.app.console, tail, width) if tail.strip() else []
        self._all = ReplyLines(self._sealed, self._tail)
        return self._all

    def _frame_lines(self, width: int) -> ReplyLines:
        """The frame on screen; a new one when there is none yet or the width changed."""
        if self._frame is None or width != self._frame_width:
            self._frame = self._lines(width)
            self._frame_width = width
            self._frame_sealed = len(self._sealed)
        return self._frame

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._asked()
        return len(self._frame_lines(width))

    def render_line(self, y: int) -> Strip:
        self._asked()
        width = self.content_size.width
        lines = self._frame_lines(width)
        base = self.rich_style
        if y < len(lines):
            return lines[y].extend_cell_length(width).apply_style(base)
        return Strip.blank(width, base)
