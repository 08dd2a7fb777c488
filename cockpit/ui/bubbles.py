"""One widget per row: the user's prompt, the agent's reply, a thought, a tool call, a
plan, a notice. Each is a single cheap widget; the reply renders its Markdown block by
block and re-renders only the block still being written."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from itertools import islice
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.markdown import Markdown as RichMarkdown
from rich.padding import Padding
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from cockpit.text.sanitize import StreamCleaner, printable
from cockpit.text.textout import listed, plan_lines, tool_line, tool_output
from cockpit.ui.diffs import CODE_THEME, DiffStyles, choose_layout, render_diff
from cockpit.ui.mdblocks import BlockSplitter
from store import Bubble
from store.pieces import Pieces

REPAINT_RATE = 30
"""Most redraws a second of a streaming reply."""

PAINT_SHARE = 0.25
"""The share of the time a streaming reply's redraws may take: when one costs more (a
long open block to render again, a busy screen, a busy machine), the next waits longer,
so input and the other sessions are never starved."""

SLOWEST_REPAINT = 0.25
"""The longest wait, in seconds, between two redraws of a streaming reply, unless
rendering it alone takes more than PAINT_SHARE of that (a very long open block, such as
a huge code block): then the wait is the rendering's cost over PAINT_SHARE, so the
rendering never takes the whole loop, and a reply that keeps growing costs time in
proportion to its length (each rendering is of a tail a constant factor longer than the
last one's), not to its square."""

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


def has_terminal(payload: Mapping[str, Any] | None) -> bool:
    """True when a tool call embeds a terminal."""
    return any(
        isinstance(item, Mapping) and item.get("type") == "terminal"
        for item in listed((payload or {}).get("content"))
    )


def short_path(path: str, root: str | None, home: str | None = None) -> str:
    """A path as a card shows it: relative to the session's folder when inside it (`.` for
    the folder itself), `~/...` when under the home folder, else whole."""
    home = os.path.expanduser("~") if home is None else home
    for base, prefix in ((root, ""), (home, "~/")):
        base = (base or "").rstrip("/")
        if not base:
            continue
        if path == base:
            return "." if prefix == "" else "~"
        if path.startswith(base + "/"):
            return prefix + path[len(base) + 1 :]
    return path


def session_root(app: object, session: object) -> str | None:
    """The folder of `session` as the app knows it (None outside Cockpit's app)."""
    records = getattr(app, "records", None)
    record = records.get(session) if isinstance(records, Mapping) and session else None
    root = getattr(record, "cwd", None)
    return root if isinstance(root, str) else None


def exit_code(payload: Mapping[str, Any] | None) -> int | None:
    """How a finished command ended: the exit code of its (last) terminal, or the one in
    its raw output (agents without client terminals report it there)."""
    payload = payload or {}
    code = None
    terminals = payload.get("terminalOutput")
    for data in terminals.values() if isinstance(terminals, Mapping) else ():
        status = data.get("exitStatus") if isinstance(data, Mapping) else None
        if isinstance(status, Mapping) and isinstance(status.get("exitCode"), int):
            code = status["exitCode"]
    raw = payload.get("rawOutput")
    if code is None and isinstance(raw, Mapping):
        found = raw.get("exit_code", raw.get("exitCode"))
        code = found if isinstance(found, int) and not isinstance(found, bool) else None
    return code


def card_line(payload: Mapping[str, Any] | None, root: str | None) -> str:
    """A card's one line: `tool_line` with its paths (locations, and the title's) short
    for the session's folder at `root`, and a finished command's exit code."""
    payload = dict(payload or {})
    locations = payload.get("locations")
    if isinstance(locations, list):
        payload["locations"] = [
            {**loc, "path": short_path(loc["path"], root)}
            if isinstance(loc, Mapping) and isinstance(loc.get("path"), str)
            else loc
            for loc in locations
        ]
    title = payload.get("title")
    if isinstance(title, str) and root and root.rstrip("/"):
        payload["title"] = title.replace(root.rstrip("/") + "/", "")
    line = tool_line(payload)
    code = exit_code(payload)
    if code is not None and payload.get("status") in ("completed", "failed"):
        line += f" · exit {code}"
    return line


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
        line = card_line(self.payload, self._root())
        header = Text(f"{'▾' if self.expanded else '▸'} {mark} {printable(line)}")
        if not self.expanded:
            return header
        return Group(header, *self._body(max(self.content_size.width - 2, 20)))

    def _root(self) -> str | None:
        """The folder of the session this card is in (the transcript's session), so paths
        can be shown relative to it."""
        return session_root(self.app, getattr(self.parent, "session", None))

    def _body(self, width: int) -> list[RenderableType]:
        payload = self.payload or {}
        parts: list[RenderableType] = []
        styles = diff_styles(self)
        for item in listed(payload.get("content")):
            if not isinstance(item, Mapping):
                continue
            if item.get("type") == "diff":
                parts.append(
                    render_diff(
                        short_path(str(item.get("path") or ""), self._root()),
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
                    parts.append(  # no OSC 8 link to wherever the agent points
                        RichMarkdown(
                            printable(block["text"]), code_theme=CODE_THEME, hyperlinks=False
                        )
                    )
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
            text.append(f"\n[{ending}]", style="bold" if code == 0 else "bold bright_red")
        else:
            text.append("\n[running…]", style="dim")
        return text

    def copy_text(self) -> str:
        line = card_line(self.payload, self._root())
        return "\n".join(part for part in (line, tool_output(self.payload)) if part)


def diff_styles(widget: Widget) -> DiffStyles:
    """The diff colours of the app's current theme (cached per theme)."""
    app = widget.app
    key = app.theme
    cached = _DIFF_STYLES.get(key)
    if cached is None:
        cached = DiffStyles.from_variables(app.get_css_variables())
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

    The text is split into top-level blocks (`cockpit.ui.mdblocks`): a sealed block is
    rendered once (per width) and kept as lines; only the open tail is rendered again when
    text arrives. So streaming costs grow with the text, not with the number of chunks or
    the square of the length, and a finished reply needs no second rendering.

    While it streams, the screen shows a frame: the lines as they were at the last
    repaint. A repaint renders the tail, then asks the screen for as little as it can: the
    lines that differ from the frame on screen when the reply kept its height (no
    layout), a layout only when it got taller or shorter. Repaints come at most
    REPAINT_RATE times a second, and less often when they are expensive: the wait after
    one is its cost over PAINT_SHARE, the cost being the time to render it, the screen's
    update that showed it, and how late it started (the app was busy), at most
    SLOWEST_REPAINT unless the rendering alone costs more than PAINT_SHARE of that.
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
        self._painted = 0.0
        self._due = 0.0
        self._repaint: Timer | None = None
        self._interval = 1 / REPAINT_RATE
        """The wait between two repaints, from what recent ones cost."""
        self._paint_cost: float | None = None
        """What the last repaint cost before the screen's update (None: none to time)."""
        self._render_cost = 0.0
        """The CPU time rendering the last repaint's lines took (CPU, so that a machine
        busy with other work does not stretch it): the next repaint waits at least that
        over PAINT_SHARE (see SLOWEST_REPAINT)."""
        self._update_started: float | None = None
        """When the screen first asked for lines after the last repaint."""
        self._update_ended = 0.0
        """When it last asked for one in that same update."""
        self._in_update = False
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
        self._due = self._painted + max(self._interval, self._render_cost / PAINT_SHARE)
        if self._due <= now:
            self._paint()
        else:
            self._repaint = self.set_timer(self._due - now, self._deferred_paint)

    def _deferred_paint(self) -> None:
        self._repaint = None
        self._paint(late=max(time.monotonic() - self._due, 0.0))

    def _paint(self, late: float = 0.0) -> None:
        """Show the text so far: render it into a new frame and ask the screen to update
        the lines that changed, or to lay out again when the height changed. `late`: how
        long after it was due the repaint could start (the app was busy)."""
        started = self._painted = time.monotonic()
        self._timed()
        before, width = self._frame, self._frame_width
        if before is None or not width:
            self._frame = None  # the next layout takes a fresh frame
            self._paint_cost = None
            self.refresh(layout=True)
            return
        rendering = time.thread_time()
        lines = self._frame = self._lines(width)
        self._render_cost = time.thread_time() - rendering
        stable, self._frame_sealed = self._frame_sealed, len(self._sealed)
        self._paint_cost = time.monotonic() - started + late
        if len(lines) != len(before):
            self.refresh(layout=True)
            return
        first, last = stable, len(lines) - 1
        while first <= last and lines[first] == before[first]:
            first += 1
        while last >= first and lines[last] == before[last]:
            last -= 1
        if first <= last:
            self.refresh(Region(0, first, width, last - first + 1))

    def _asked(self) -> None:
        """The screen asks for the frame's lines (its height, or a line): the update that
        shows the last repaint runs from the first such call to the last one before the
        event loop moves on."""
        now = time.monotonic()
        if self._update_started is None:
            self._update_started = self._update_ended = now
            self._in_update = True
            self.call_next(self._update_over)  # after the screen's update: it runs in one go
        elif self._in_update:
            self._update_ended = now

    def _update_over(self) -> None:
        self._in_update = False

    def _timed(self) -> None:
        """What the last repaint cost (rendering, and the screen's update that showed it)
        sets the wait before the next one."""
        if self._paint_cost is not None:
            cost = self._paint_cost
            if self._update_started is not None:
                cost += self._update_ended - self._update_started
            wait = min(max(cost / PAINT_SHARE, 1 / REPAINT_RATE), SLOWEST_REPAINT)
            self._interval = (self._interval + wait) / 2
        self._paint_cost = self._update_started = None

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

    def _render_markdown(self, markdown: str, width: int) -> list[Strip]:
        console = self.app.console
        options = console.options.update(width=width, height=None)
        renderable = RichMarkdown(markdown, code_theme=CODE_THEME, hyperlinks=False)
        lines = [Strip(line) for line in console.render_lines(renderable, options, pad=False)]
        while lines and _blank(lines[0]):
            lines.pop(0)
        while lines and _blank(lines[-1]):
            lines.pop()
        return lines

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
            self._sealed += self._render_markdown(block.strip("\n"), width)
            self._rendered_blocks += 1
        if self._tail is None:
            tail = self._splitter.tail.strip("\n")
            self._tail = self._render_markdown(tail, width) if tail.strip() else []
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


class ReplyLines:
    """A reply's lines at one repaint, made without copying them: the sealed blocks' lines
    (a list that only grows while the width stays the same: this keeps how many it had),
    a blank line, and the open tail's lines. So a repaint's frame costs the tail, not the
    whole reply, however long it has grown."""

    __slots__ = ("_count", "_gap", "_sealed", "_tail")

    def __init__(self, sealed: list[Strip], tail: list[Strip]) -> None:
        self._sealed = sealed
        self._count = len(sealed)
        self._gap = 1 if sealed and tail else 0
        self._tail = tail

    def __len__(self) -> int:
        return self._count + self._gap + len(self._tail)

    def __getitem__(self, y: int) -> Strip:
        """Line `y` (from the end when negative, as in a list)."""
        if y < 0:
            y += len(self)
        if not 0 <= y < len(self):
            raise IndexError(y)
        if y < self._count:
            return self._sealed[y]
        y -= self._count + self._gap
        return self._tail[y] if y >= 0 else _GAP

    def __iter__(self) -> Iterator[Strip]:
        yield from islice(self._sealed, self._count)
        yield from [_GAP] * self._gap
        yield from self._tail


_GAP = Strip.blank(0)
"""The blank line between two blocks."""


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
