"""What the status line says: the turn state, mode, model, options, usage and agent, in
order of importance, and how much of it a width holds. No Textual here, so every rule is
tested without an app."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len

from cockpit.api import Status, Usage, read_usage
from cockpit.ui.agent_options import current_mode, current_model, other_options
from cockpit.ui.one_line import clean_line, clip_cells, clip_middle
from store import SessionRecord

StatusPart = tuple[str, str]
"""A piece of the status line: its full label and its short one (for narrow terminals)."""

STATUS_SEPARATOR = " · "
MIN_CLIPPED = 6
"""The fewest cells worth showing of a piece that is cut with an ellipsis."""


def usage_text(usage: Usage) -> str | None:
    """Context use and cost, as far as the agent reports them: "12.3k/200k ctx · $0.42"."""
    parts = []
    if usage.used is not None and usage.size:
        parts.append(f"{kilo(float(usage.used))}/{kilo(float(usage.size))} ctx")
    if usage.cost is not None:
        currency = usage.cost.currency
        symbol = "$" if currency == "USD" else f"{clean_line(currency)} "
        parts.append(f"{symbol}{usage.cost.amount:.2f}")
    return " · ".join(parts) or None


TOKEN_FIELDS = (
    ("input", "in"),
    ("output", "out"),
    ("thought", "thinking"),
    ("cached_read", "cache read"),
    ("cached_write", "cache write"),
)
"""The token counts a turn's usage may carry (ACP's `Usage`, as `TurnTokens`), and how the
status line names them."""


def turn_usage(usage: Usage) -> StatusPart | None:
    """The tokens of the last turn, as the agent reported them with its stop reason (the
    built-in Claude agent, claude-agent-acp): "last turn: 71.1k in · 117 out · 47.2k cache
    read", shortened to "71.1k in · 117 out"."""
    last = usage.last_turn
    if last is None:
        return None
    counts = [
        f"{kilo(float(count))} {word}"
        for name, word in TOKEN_FIELDS
        if (count := getattr(last, name)) is not None
    ]
    if not counts:
        return None
    return (f"last turn: {' · '.join(counts)}", " · ".join(counts[:2]))


def kilo(value: float) -> str:
    """A count as the status line shows it: `842`, `12.3k`, `1.2M`."""
    if value < 1000:
        return str(int(value))
    if value < 1_000_000:
        return f"{value / 1000:.1f}".removesuffix(".0") + "k"
    return f"{value / 1_000_000:.1f}".removesuffix(".0") + "M"


TURN_WORDS = {
    Status.STARTING: "starting",
    Status.READY: "ready",
    Status.WORKING: "working (Esc cancels)",
    Status.CANCELLING: "cancelling the turn…",
    Status.WAITING: "waiting for your answer",
    Status.CLOSED: "stopped: a prompt starts it",
    Status.EXITED: "the agent exited: a prompt restarts it",
    Status.ERROR: "the agent failed to start: a prompt tries again",
}


def starting_words(seconds: float) -> str:
    """How long the agent has been starting, in whole seconds: "starting (12 s)". A slow
    agent may take minutes on a busy machine; the count shows it is still given time."""
    return f"{TURN_WORDS[Status.STARTING]} ({max(int(seconds), 0)} s)"


def turn_words(
    live_status: str,
    pending: int = 0,
    stored_status: str = "",
    detail: str = "",
    starting_for: float | None = None,
) -> str:
    """What the session is doing, for the status line; a pending request means waiting. With
    no agent running, how the last one ended (it failed to start, it exited) with what it
    said, as the rail shows it, rather than "stopped". A starting agent's seconds show
    when they are known (`starting_for`)."""
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
    if status == Status.STARTING and starting_for is not None:
        return starting_words(starting_for)
    return TURN_WORDS.get(status, clean_line(status))


COMMAND_RUNS = "your command runs (Esc kills it)"
"""What the status line says while a `!command` runs in the session."""
LOGIN_READS = "Enter sends your line to the login (Esc kills it)"
"""What the status line says while an agent's login run by Cockpit reads what you send."""
IDLE = (Status.READY, Status.CLOSED, Status.EXITED, Status.ERROR)


def status_parts(
    record: SessionRecord,
    agent_title: str,
    live_status: str,
    pending: int = 0,
    detail: str = "",
    not_saved: str | None = None,
    starting_for: float | None = None,
    command_running: bool = False,
    reading_input: bool = False,
) -> list[StatusPart]:
    """The pieces of the status line, most important first: that the transcript cannot be
    saved (`not_saved` says why: a full disk, which would otherwise go unseen while the
    reply streams on), the turn state (with the seconds a starting agent has taken), the
    mode, the model, the other options, usage and cost, the last turn's tokens, the agent.
    Every name is cleaned."""
    turn = turn_words(live_status, pending, record.status, detail, starting_for)
    if command_running:  # the user's `!command`: the agent may be idle, the session is not
        running = LOGIN_READS if reading_input else COMMAND_RUNS
        turn = running if live_status in IDLE else f"{turn} · {running}"
    parts: list[StatusPart] = []
    if not_saved is not None:
        parts.append((f"NOT SAVED: {clean_line(not_saved)} · retrying", "NOT SAVED"))
    parts.append((turn, turn))
    if mode := current_mode(record):
        parts.append((f"mode: {clean_line(mode)}", clean_line(mode)))
    if model := current_model(record):
        parts.append((f"model: {clean_line(model)}", clean_line(model)))
    parts.extend((f"{name}: {value}", f"{name}: {value}") for name, value in other_options(record))
    usage = read_usage(record.usage)
    if used := usage_text(usage):
        parts.append((used, used))
    if tokens := turn_usage(usage):
        parts.append(tokens)
    parts.append((clean_line(agent_title), clean_line(agent_title)))
    return parts


START_AGAIN = "press Enter to start it again"
"""What the status line asks of the user while the service they stopped stays stopped."""

LINK_SHORT = 44
"""Cells at most of why the engine is out of reach, on a status line too narrow for all of
it (an 80-column terminal's holds 56): its start and its end stay."""


def link_parts(problem: str | None, stopped: bool = False) -> list[StatusPart]:
    """The status line's first pieces while the engine is out of reach (the service's
    connection was cut): OFFLINE, and why (what the link's own command said, such as ssh's
    "Connection refused", else that it is being attached again), before anything else:
    whatever follows may be stale. A service stopped for good (`stopped`) is started again
    by Enter, which the line says. None: no piece."""
    if problem is None:
        return []
    why = clean_line(problem)
    offline: StatusPart = ("OFFLINE", "OFFLINE")
    if stopped:
        return [offline, (f"{why}; {START_AGAIN}", f"stopped; {START_AGAIN}")]
    return [offline, (why, clip_middle(why, LINK_SHORT))] if why else [offline]


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
