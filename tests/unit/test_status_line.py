"""The status line fitted to its width (`fit_status` over `status_parts`), and the palette's
hits built from untrusted titles (`cockpit.ui.commands`): pure, no app."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from rich.cells import cell_len
from textual.content import Content
from textual.fuzzy import Matcher

from cockpit.api import Status
from cockpit.ui.commands import highlighted, literal
from cockpit.ui.one_line import clean_line, clip_middle
from cockpit.ui.status_rules import (
    COMMAND_RUNS,
    TURN_WORDS,
    fit_status,
    link_parts,
    status_parts,
    turn_words,
)
from store import SessionRecord
from tests.support.helpers import session_record, status_text

DEMO_MODES = {
    "currentModeId": "ask",
    "availableModes": [{"id": "ask", "name": "Ask before edits"}, {"id": "plan", "name": "Plan"}],
}
DEMO_MODEL = {
    "id": "model",
    "name": "Model",
    "type": "select",
    "category": "model",
    "currentValue": "demo-fast",
    "options": [{"value": "demo-fast", "name": "Fast"}, {"value": "demo-smart", "name": "Smart"}],
}
THINKING = {
    "id": "thinking",
    "name": "Thinking",
    "type": "select",
    "category": "thought_level",
    "currentValue": "high",
    "options": [{"value": "off", "name": "Off"}, {"value": "high", "name": "High"}],
}
AGENT = "Cockpit demo agent"
USAGE = {"used": 12300, "size": 200000, "cost": {"amount": 0.42, "currency": "USD"}}


def record(
    *,
    modes: Mapping[str, Any] | None = DEMO_MODES,
    config_options: tuple[Mapping[str, Any], ...] | None = (DEMO_MODEL,),
    usage: Mapping[str, Any] | None = None,
) -> SessionRecord:
    return session_record(modes=modes, config_options=config_options, usage=usage)


def test_at_80_columns_the_turn_state_comes_first_and_the_labels_shorten() -> None:
    """The 56-cell slot of an 80-column terminal: before, the line was cut after
    "model:" and the turn state never showed."""
    line = status_text(record(), AGENT, Status.WORKING, 56)
    assert line.startswith("working (Esc cancels) · Ask before edits · Fast")
    assert "mode:" not in line and cell_len(line) <= 56
    waiting = status_text(record(), AGENT, Status.WAITING, 56, pending=1)
    assert waiting.startswith("waiting for your answer · Ask before edits")


def test_wide_shows_everything_with_labels_in_order() -> None:
    full = record(config_options=(DEMO_MODEL, THINKING), usage=USAGE)
    assert status_text(full, AGENT, Status.READY, 200) == (
        "ready · mode: Ask before edits · model: Fast · Thinking: High"
        " · 12.3k/200k ctx · $0.42 · Cockpit demo agent"
    )


def test_options_other_than_mode_and_model_show_and_usage_follows() -> None:
    """The Claude agent's Thinking option (category thought_level) and the usage show when
    the line has room for them, after mode and model."""
    full = record(config_options=(DEMO_MODEL, THINKING), usage=USAGE)
    line = status_text(full, AGENT, Status.WORKING, 87)
    assert line.startswith("working (Esc cancels) · Ask before edits · Fast · Thinking: High")
    assert "12.3k/200k ctx" in line
    assert cell_len(line) <= 87


def test_narrow_lines_end_with_an_ellipsis() -> None:
    assert status_text(record(), AGENT, Status.READY, 30) == "ready · Ask before edits …"
    assert (
        status_text(record(), AGENT, Status.READY, 40) == "ready · Ask before edits · Fast · Cockp…"
    )
    assert status_text(record(), AGENT, Status.WORKING, 10) == "working (…"
    assert status_text(record(), AGENT, Status.WORKING, 0) == ""


def test_several_pending_requests_are_counted() -> None:
    assert turn_words(Status.WAITING, 2) == "waiting for your answer (2 requests)"
    assert turn_words(Status.WORKING, 1) == TURN_WORDS[Status.WAITING]
    assert turn_words("mystery\x1b[31m") == "mystery"


def test_a_starting_agent_shows_its_seconds() -> None:
    assert turn_words(Status.STARTING, starting_for=0) == "starting (0 s)"
    assert turn_words(Status.STARTING, starting_for=12.9) == "starting (12 s)"
    assert turn_words(Status.STARTING) == "starting"  # how long is not known
    assert turn_words(Status.READY, starting_for=5) == "ready"
    parts = status_parts(record(), AGENT, Status.STARTING, starting_for=3.2)
    assert parts[0] == ("starting (3 s)", "starting (3 s)")


@given(st.floats(min_value=-5, max_value=10**6, allow_nan=False))
def test_the_seconds_are_whole_and_never_below_zero(seconds: float) -> None:
    """A clock set back (the app's is the wall clock) shows 0, never a negative count."""
    words = turn_words(Status.STARTING, starting_for=seconds)
    assert words == f"starting ({max(int(seconds), 0)} s)"
    assert turn_words(Status.STARTING, 1, starting_for=seconds) == TURN_WORDS[Status.WAITING]


def test_names_from_the_agent_are_cleaned() -> None:
    modes = {
        "currentModeId": "p",
        "availableModes": [{"id": "p", "name": "Plan \x1b]0;pwned\x07 mode\n[/]"}],
    }
    line = status_text(record(modes=modes), "Agent\x1b[2J", Status.READY, 200)
    assert line == "ready · mode: Plan mode [/] · model: Fast · Agent"


PART = st.text(
    alphabet=st.characters(codec="utf-8") | st.sampled_from("界😀·…[/] "),
    max_size=30,
)


@given(
    turn=PART,
    others=st.lists(st.tuples(PART, PART), max_size=8),
    width=st.integers(min_value=-2, max_value=160),
)
@example(turn="working (Esc cancels)", others=[], width=21)
@example(turn="界界界", others=[("a", "a")], width=5)
def test_the_line_never_exceeds_its_width_and_keeps_the_turn_state(
    turn: str, others: list[tuple[str, str]], width: int
) -> None:
    turn = clean_line(turn)
    parts = [(turn, turn), *((clean_line(full), clean_line(short)) for full, short in others)]
    line = fit_status(parts, width)
    assert cell_len(line) <= max(width, 0)
    if width >= cell_len(turn):
        assert line.startswith(turn)


@given(
    live=st.sampled_from([*TURN_WORDS, "mystery"]),
    pending=st.integers(min_value=0, max_value=3),
    width=st.integers(min_value=0, max_value=200),
    mode=PART,
    model=PART,
)
def test_the_status_text_of_any_record_fits(
    live: str, pending: int, width: int, mode: str, model: str
) -> None:
    modes = {"currentModeId": "m", "availableModes": [{"id": "m", "name": mode or "m"}]}
    option = {**DEMO_MODEL, "options": [{"value": "demo-fast", "name": model or "x"}]}
    rec = record(modes=modes, config_options=(option, THINKING), usage=USAGE)
    line = status_text(rec, AGENT, live, width)
    assert cell_len(line) <= width
    assert "\x1b" not in line and "\n" not in line
    turn = status_parts(rec, AGENT, live, pending)[0][0]
    if width >= cell_len(turn):
        assert status_text(rec, AGENT, live, width, pending).startswith(turn)


# -- the command palette ----------------------------------------------------------------------


@given(st.text(max_size=40) | st.sampled_from(["why does [/] break", "[bold]x", "[link=x]y"]))
def test_palette_fields_are_never_read_as_markup(title: str) -> None:
    """The palette reads a hit's prompt and help as markup: what Cockpit hands it comes
    back as written (cleaned), whatever brackets the title holds."""
    assert Content.from_markup(literal(title)).plain == clean_line(title)
    shown = clean_line(title)
    for query in ("s", shown[:3], shown[-2:]):
        if query.strip():
            assert highlighted(Matcher(query), shown).plain == shown


@given(st.text(max_size=80), st.sampled_from(["ready", "working", "waiting"]), st.integers(7, 300))
def test_a_client_cut_from_its_service_says_so_first_and_not_once_attached(
    why: str, live: str, width: int
) -> None:
    """Whatever the status line says after it may be stale while the link is cut."""
    parts = status_parts(session_record(), AGENT, live)
    assert fit_status([*link_parts(why), *parts], width).startswith("OFFLINE")
    assert fit_status(link_parts(why), width).startswith("OFFLINE")  # no session shown
    assert fit_status([*link_parts(None), *parts], width) == fit_status(parts, width)


@given(st.text(max_size=80), st.sampled_from(["ready", "working", "closed"]), st.integers(50, 300))
def test_a_service_stopped_for_good_asks_for_enter_at_any_width_from_50(
    why: str, live: str, width: int
) -> None:
    """The user stopped the service: the line says how to start it again, first, in an
    80-column terminal and down to 50 columns, whatever the reason's length."""
    parts = status_parts(session_record(), AGENT, live)
    shown = fit_status([*link_parts(why, stopped=True), *parts], width)
    assert shown.startswith("OFFLINE · ")
    assert "press Enter to start it again" in shown
    assert "press Enter" not in fit_status([*link_parts(why), *parts], width)


REFUSED = "ssh: connect to host build-box port 22: Connection refused"


def test_offline_at_80_columns_says_why_with_its_middle_cut() -> None:
    """What the link's command said (ssh's words) shows after OFFLINE, before the state
    it makes stale; on the 56 cells of an 80-column terminal its start and end stay."""
    parts = [*link_parts(REFUSED), *status_parts(record(), AGENT, Status.READY)]
    assert fit_status(parts, 200).startswith(f"OFFLINE · {REFUSED} · ready · ")
    line = fit_status(parts, 56)
    assert line == "OFFLINE · ssh: connect to host b…2: Connection refused …"
    assert fit_status(parts, 10) == "OFFLINE …"
    assert link_parts("\x1b[31mssh:\x1b[0m  refused\n") == [
        ("OFFLINE", "OFFLINE"),
        ("ssh: refused", "ssh: refused"),
    ]
    assert link_parts("") == [("OFFLINE", "OFFLINE")]


@given(st.text(max_size=120), st.integers(0, 130))
@example("日本語のテキストです" * 3, 9)
def test_a_middle_cut_fits_and_keeps_both_ends(text: str, width: int) -> None:
    clipped = clip_middle(text, width)
    assert cell_len(clipped) <= width
    if cell_len(text) <= width:
        assert clipped == text
    elif width > 2:  # some ellipsis in it stands for the middle taken out
        assert any(
            text.startswith(clipped[:at]) and text.endswith(clipped[at + 1 :])
            for at, character in enumerate(clipped)
            if character == "…"
        )


def test_a_running_command_shows_in_the_turn_state() -> None:
    """The user's `!command`: an idle session says it runs; a busy one says both."""
    ready = status_parts(record(), AGENT, Status.READY, command_running=True)[0][0]
    assert ready == COMMAND_RUNS
    working = status_parts(record(), AGENT, Status.WORKING, command_running=True)[0][0]
    assert working.endswith(f" · {COMMAND_RUNS}") and working != COMMAND_RUNS
    assert status_parts(record(), AGENT, Status.READY)[0][0] == "ready"
