"""Pure rules behind the TUI: what the rail shows for a session, the status line, prompt
history, and which bubbles a bounded transcript window keeps. No Textual here, so every
rule is tested without an app."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len

from cockpit.api import Status
from cockpit.text.mentions import completion_query, find_mentions
from cockpit.text.sanitize import printable
from store import SessionRecord


class RailState:
    """What a session needs from the user, in the order the rail ranks attention."""

    NEEDS_YOU = "needs-you"
    ERROR = "error"
    UNREAD = "unread"
    WORKING = "working"
    STARTING = "starting"
    IDLE = "idle"
    CLOSED = "closed"


GLYPHS: Mapping[str, str] = {
    RailState.NEEDS_YOU: "!",
    RailState.ERROR: "✗",
    RailState.UNREAD: "◆",
    RailState.WORKING: "●",
    RailState.STARTING: "◌",
    RailState.IDLE: "○",
    RailState.CLOSED: "·",
}
"""One character per state, distinct in shape as well as colour (16-colour terminals)."""

STATE_WORDS: Mapping[str, str] = {
    RailState.NEEDS_YOU: "needs you",
    RailState.ERROR: "error",
    RailState.UNREAD: "finished, unread",
    RailState.WORKING: "working",
    RailState.STARTING: "starting",
    RailState.IDLE: "idle",
    RailState.CLOSED: "closed",
}


def rail_state(
    live_status: str,
    stored_status: str,
    pending: int,
    unread: bool,
    current: bool,
) -> str:
    """The state a session shows in the rail.

    A pending permission trumps everything; then a dead agent; then what the agent is
    doing; then what it did that the user has not seen (never for the session on screen).
    """
    if pending:
        return RailState.NEEDS_YOU
    # With no agent running, only how it ended carries over: a stored "working" is stale
    # (Cockpit stopped mid-turn) and nothing runs now.
    if live_status != Status.CLOSED:
        status = live_status
    elif stored_status in (Status.ERROR, Status.EXITED):
        status = stored_status
    else:
        status = Status.CLOSED
    if status in (Status.ERROR, Status.EXITED):
        return RailState.ERROR
    if status == Status.WAITING:
        return RailState.NEEDS_YOU
    if status in (Status.WORKING, Status.CANCELLING):
        return RailState.WORKING
    if status == Status.STARTING:
        return RailState.STARTING
    if not current and unread:
        return RailState.UNREAD
    if live_status == Status.READY:
        return RailState.IDLE
    return RailState.CLOSED


def short_folder(path: str, home: str | None = None) -> str:
    """A folder as a user reads it: `~` for home, else the last two parts."""
    home = home if home is not None else os.path.expanduser("~")
    if home and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    parts = [part for part in path.split(os.sep) if part]
    return os.sep.join(parts[-2:]) if len(parts) > 2 else path


def current_mode(record: SessionRecord) -> str | None:
    """The name of the session's current mode, from its modes or its mode config option."""
    for option in record.config_options or ():
        if option.get("category") == "mode":
            return option_value_name(option)
    modes = record.modes or {}
    current = modes.get("currentModeId")
    for mode in modes.get("availableModes") or ():
        if isinstance(mode, Mapping) and mode.get("id") == current:
            return str(mode.get("name") or current)
    return str(current) if current else None


def option_value_name(option: Mapping[str, Any]) -> str | None:
    """The display name of a select option's current value."""
    value = option.get("currentValue")
    choices: list[Any] = []
    for entry in option.get("options") or ():
        if isinstance(entry, Mapping) and "options" in entry:  # a group
            choices.extend(entry.get("options") or ())
        else:
            choices.append(entry)
    for choice in choices:
        if isinstance(choice, Mapping) and choice.get("value") == value:
            return str(choice.get("name") or value)
    return str(value) if value is not None else None


def current_model(record: SessionRecord) -> str | None:
    """The name of the model the session uses, when the agent exposes it as an option."""
    for option in record.config_options or ():
        if option.get("category") == "model" or option.get("id") == "model":
            return option_value_name(option)
    return None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def usage_text(usage: Mapping[str, Any] | None) -> str | None:
    """Context use and cost, as far as the agent reports them: "12.3k/200k ctx · $0.42"."""
    if not usage:
        return None
    parts = []
    used: Any = usage.get("used")
    size: Any = usage.get("size")
    if _number(used) and _number(size) and size:
        parts.append(f"{_kilo(float(used))}/{_kilo(float(size))} ctx")
    cost = usage.get("cost")
    if isinstance(cost, Mapping) and _number(cost.get("amount")):
        currency = cost.get("currency") or "USD"
        symbol = "$" if currency == "USD" else f"{clean_line(str(currency))} "
        parts.append(f"{symbol}{cost['amount']:.2f}")
    return " · ".join(parts) or None


TOKEN_FIELDS = (
    ("inputTokens", "in"),
    ("outputTokens", "out"),
    ("thoughtTokens", "thinking"),
    ("cachedReadTokens", "cache read"),
    ("cachedWriteTokens", "cache write"),
)
"""The token counts a turn's usage may carry (ACP's `Usage`), and how the status line
names them."""


def turn_usage(usage: Mapping[str, Any] | None) -> StatusPart | None:
    """The tokens of the last turn, as the agent reported them with its stop reason (the
    built-in Claude agent, claude-agent-acp): "last turn: 71.1k in · 117 out · 47.2k cache
    read", shortened to "71.1k in · 117 out"."""
    last = (usage or {}).get("lastTurn")
    if not isinstance(last, Mapping):
        return None
    counts = [
        f"{_kilo(float(last[name]))} {word}"
        for name, word in TOKEN_FIELDS
        if _number(last.get(name))
    ]
    if not counts:
        return None
    return (f"last turn: {' · '.join(counts)}", " · ".join(counts[:2]))


def _kilo(value: float) -> str:
    if value < 1000:
        return str(int(value))
    if value < 1_000_000:
        return f"{value / 1000:.1f}".removesuffix(".0") + "k"
    return f"{value / 1_000_000:.1f}".removesuffix(".0") + "M"


TURN_WORDS = {
    Status.STARTING: "starting the agent",
    Status.READY: "ready",
    Status.WORKING: "working (Esc cancels)",
    Status.CANCELLING: "cancelling the turn…",
    Status.WAITING: "waiting for your answer",
    Status.CLOSED: "stopped: a prompt starts it",
    Status.EXITED: "the agent exited: a prompt restarts it",
    Status.ERROR: "the agent failed to start: a prompt tries again",
}


def clean_line(text: str) -> str:
    """Agent or user text for a one-line slot (a title, a mode or model name, an option):
    no escape sequences or control characters, line breaks and runs of spaces as one space."""
    return " ".join(printable(text).split())


def turn_words(
    live_status: str, pending: int = 0, stored_status: str = "", detail: str = ""
) -> str:
    """What the session is doing, for the status line; a pending request means waiting. With
    no agent running, how the last one ended (it failed to start, it exited) with what it
    said, as the rail shows it, rather than "stopped"."""
    if pending:
        words = TURN_WORDS[Status.WAITING]
        return words if pending == 1 else f"{words} ({pending} requests)"
    status = live_status
    if live_status == Status.CLOSED and stored_status in (Status.ERROR, Status.EXITED):
        status = stored_status
    if status == Status.ERROR and detail:
        return f"the agent failed to start: {clean_line(detail)} · a prompt tries again"
    if status == Status.EXITED and detail:  # "exited with code 3"
        return f"the agent {clean_line(detail)} · a prompt restarts it"
    return TURN_WORDS.get(status, clean_line(status))


def other_options(record: SessionRecord) -> list[tuple[str, str]]:
    """(name, current value) of the select options that are neither the mode nor the model
    (the Claude agent's Thinking level, say)."""
    shown = []
    for option in record.config_options or ():
        if option.get("type") == "boolean" or option.get("category") in ("mode", "model"):
            continue
        if option.get("id") == "model":
            continue
        value = option_value_name(option)
        if value is not None:
            shown.append(
                (clean_line(str(option.get("name") or option.get("id"))), clean_line(value))
            )
    return shown


StatusPart = tuple[str, str]
"""A piece of the status line: its full label and its short one (for narrow terminals)."""

STATUS_SEPARATOR = " · "
MIN_CLIPPED = 6
"""The fewest cells worth showing of a piece that is cut with an ellipsis."""


def status_parts(
    record: SessionRecord,
    agent_title: str,
    live_status: str,
    pending: int = 0,
    detail: str = "",
    not_saved: str | None = None,
) -> list[StatusPart]:
    """The pieces of the status line, most important first: that the transcript cannot be
    saved (`not_saved` says why: a full disk, which would otherwise go unseen while the
    reply streams on), the turn state, the mode, the model, the other options, usage and
    cost, the last turn's tokens, the agent. Every name is cleaned."""
    turn = turn_words(live_status, pending, record.status, detail)
    parts: list[StatusPart] = []
    if not_saved is not None:
        parts.append((f"NOT SAVED: {clean_line(not_saved)} · retrying", "NOT SAVED"))
    parts.append((turn, turn))
    if mode := current_mode(record):
        parts.append((f"mode: {clean_line(mode)}", clean_line(mode)))
    if model := current_model(record):
        parts.append((f"model: {clean_line(model)}", clean_line(model)))
    parts.extend((f"{name}: {value}", f"{name}: {value}") for name, value in other_options(record))
    if usage := usage_text(record.usage):
        parts.append((usage, usage))
    if tokens := turn_usage(record.usage):
        parts.append(tokens)
    parts.append((clean_line(agent_title), clean_line(agent_title)))
    return parts


def clip_cells(text: str, width: int) -> str:
    """`text` cut to at most `width` terminal cells, with an ellipsis when cut."""
    if cell_len(text) <= width:
        return text
    if width <= 0:
        return ""
    kept = ""
    for character in text:
        if cell_len(kept + character) > width - 1:
            break
        kept += character
    return kept + "…"


def fit_status(parts: Sequence[StatusPart], width: int) -> str:
    """The status line in `width` cells: every piece in full when it fits, else the short
    labels, else as many pieces as fit in order of importance, the last one cut with an
    ellipsis. The first piece (the turn state) always shows, cut only when `width` is
    narrower than it."""
    if width <= 0 or not parts:
        return ""
    for form in (0, 1):
        text = STATUS_SEPARATOR.join(part[form] for part in parts)
        if cell_len(text) <= width:
            return text
    shown = ""
    for _, short in parts:
        joined = f"{shown}{STATUS_SEPARATOR}{short}" if shown else short
        if cell_len(joined) <= width:
            shown = joined
            continue
        if not shown:
            return clip_cells(short, width)
        room = width - cell_len(shown) - len(STATUS_SEPARATOR)
        if room >= MIN_CLIPPED:
            return f"{shown}{STATUS_SEPARATOR}{clip_cells(short, room)}"
        return f"{shown} …" if cell_len(shown) + 2 <= width else shown
    return shown


class PromptHistory:
    """Up/Down through earlier prompts, keeping what was being typed as the newest entry."""

    def __init__(self, entries: Iterable[str] = ()) -> None:
        self.entries: list[str] = []
        self._index: int | None = None
        self._draft = ""
        self.reset(entries)

    def reset(self, entries: Iterable[str]) -> None:
        """Another session's prompts: browsing starts again from the newest (an index into
        the history shown before pointed past the end of a shorter one)."""
        self.entries = [entry for entry in entries if entry.strip()]
        self._index = None
        self._draft = ""

    def add(self, prompt: str) -> None:
        """Remember a sent prompt (not twice in a row) and stop browsing."""
        if prompt.strip() and (not self.entries or self.entries[-1] != prompt):
            self.entries.append(prompt)
        self._index = None

    def older(self, current: str) -> str | None:
        """The previous prompt, or None at the oldest."""
        if not self.entries:
            return None
        if self._index is None:
            self._draft = current
            self._index = len(self.entries)
        if self._index == 0:
            return None
        self._index -= 1
        return self.entries[self._index]

    def newer(self) -> str | None:
        """The next prompt, the draft after the newest, or None when not browsing."""
        if self._index is None:
            return None
        self._index += 1
        if self._index >= len(self.entries):
            self._index = None
            return self._draft
        return self.entries[self._index]


@dataclass(frozen=True)
class Eviction:
    """Which mounted bubbles a window drops, by seq."""

    seqs: tuple[int, ...]
    from_top: bool


def evict(
    mounted: Sequence[int], pinned: frozenset[int], limit: int, keep_bottom: bool
) -> Eviction:
    """Bubbles to unmount so that at most `limit` stay, `mounted` being in seq order.

    Near the bottom (`keep_bottom`) the oldest go, so a long turn never scrolls itself
    away. Reading far up, the newest go instead and the window detaches from the tail;
    the view then says new output is below and reads it again when the user returns.
    Either way the pinned ones (the live turn) stay, so its frames keep landing in the
    view while the user reads history: only the rest counts against `limit`. Near the
    bottom a live turn that alone holds more than `limit` rows loses its oldest too (an
    agent sent thousands of notices in one turn, and each stayed mounted).
    """
    excess = len(mounted) - limit
    if excess <= 0:
        return Eviction((), keep_bottom)
    candidates = [seq for seq in mounted if seq not in pinned]
    if not keep_bottom:
        candidates.reverse()
    elif len(candidates) < excess:
        candidates = list(mounted)
    return Eviction(tuple(candidates[:excess]), keep_bottom)


@dataclass(frozen=True)
class CompletionToken:
    """The word being completed: `/command` at the very start, or an `@path` anywhere."""

    trigger: str
    query: str
    start: int
    end: int


def completion_token(text: str, cursor: int) -> CompletionToken | None:
    """The token under the cursor that completion should work on, if any.

    A slash command is only the first word of the prompt; a mention is what
    `cockpit.engine.mentions` reads as one (so an e-mail address is not one, a quoted path is).
    """
    start = cursor
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    end = cursor
    while end < len(text) and not text[end].isspace():
        end += 1
    word = text[start:end]
    if word.startswith("/") and start == 0 and "\n" not in text[:cursor]:
        return CompletionToken("/", word[1 : cursor - start], start, end)
    mention = completion_query(text, cursor)
    if mention is None:
        return None
    # The token ends where the mention under the cursor ends (a closing bracket, comma or
    # quote after it stays), or at the cursor while it is still being typed.
    whole = [m.end for m in find_mentions(text) if m.start == mention.start]
    return CompletionToken("@", mention.path, mention.start, max([*whole, cursor]))


def offset_of(lines: Sequence[str], row: int, column: int) -> int:
    """The character offset of (row, column) in text made of `lines` joined by newlines."""
    return sum(len(line) + 1 for line in lines[:row]) + column


def mode_option_id(record: SessionRecord) -> str | None:
    """The id of the config option that holds the mode, when the agent has one."""
    for option in record.config_options or ():
        if option.get("category") == "mode":
            return str(option.get("id"))
    return None


def _values(option: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    values: list[Mapping[str, Any]] = []
    for entry in option.get("options") or ():
        if isinstance(entry, Mapping) and "options" in entry:
            values.extend(v for v in entry.get("options") or () if isinstance(v, Mapping))
        elif isinstance(entry, Mapping):
            values.append(entry)
    return values


@dataclass(frozen=True)
class OptionChoice:
    """A value the options screen can set: a config option's value, or a mode."""

    config_id: str | None
    """None for a mode (set with session/set_mode)."""
    value: str | bool
    label: str
    current: bool


def option_choices(record: SessionRecord) -> list[OptionChoice]:
    """Every value the user can pick: each select option's values, each boolean option's
    other value, and the modes (unless a config option already holds the mode)."""
    choices: list[OptionChoice] = []
    for option in record.config_options or ():
        name = str(option.get("name") or option.get("id"))
        if option.get("type") == "boolean":
            current = bool(option.get("currentValue"))
            choices.append(
                OptionChoice(
                    str(option["id"]), not current, f"{name}: {'off' if current else 'on'}", False
                )
            )
            continue
        for value in _values(option):
            label = f"{name}: {value.get('name') or value.get('value')}"
            is_current = value.get("value") == option.get("currentValue")
            choices.append(
                OptionChoice(str(option["id"]), str(value.get("value")), label, is_current)
            )
    if mode_option_id(record) is None:
        modes = record.modes or {}
        for mode in modes.get("availableModes") or ():
            if isinstance(mode, Mapping):
                label = f"Mode: {mode.get('name') or mode.get('id')}"
                choices.append(
                    OptionChoice(
                        None,
                        str(mode.get("id")),
                        label,
                        mode.get("id") == modes.get("currentModeId"),
                    )
                )
    return choices


def next_needing(
    order: Sequence[str], states: Mapping[str, str], current: str | None
) -> str | None:
    """The session Ctrl+G goes to: after `current` in rail order (wrapping), the first that
    asks a question, else the first with something unread; None when no other needs the
    user."""
    start = order.index(current) + 1 if current in order else 0
    rotated = [*order[start:], *order[:start]]
    for wanted in (RailState.NEEDS_YOU, RailState.UNREAD):
        for session in rotated:
            if session != current and states.get(session) == wanted:
                return session
    return None


def quit_question(running: int, waiting: int, not_saved: str | None = None) -> str | None:
    """What quitting would stop, as a question ("2 turns are running and 1 question waits"),
    or None when nothing runs or waits and Cockpit may quit at once. While the transcript
    cannot be saved (`not_saved` says why: the disk is full), quitting loses what the store
    holds in memory, so it is always asked."""
    if not running and not waiting and not_saved is None:
        return None
    parts = []
    if running:
        parts.append(f"{running} turn{'s are' if running > 1 else ' is'} running")
    if waiting:
        parts.append(f"{waiting} question{'s wait' if waiting > 1 else ' waits'} for you")
    if not_saved is not None:
        parts.append(f"the transcript is not saved ({clean_line(not_saved)})")
    endings = ["every agent stops with it"] if running or waiting else []
    endings += ["what is not saved is lost"] if not_saved is not None else []
    return f"Quit Cockpit? {' and '.join(parts)}; {' and '.join(endings)}."
