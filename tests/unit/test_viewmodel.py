"""The pure rules behind the TUI (`cockpit.ui.session_states`, `status_text`, `agent_options`,
`prompt_history`, `transcript_window`, `completion`, `one_line`): rail states, ages, folders, the
status line, prompt history, transcript eviction, completion tokens, options and exports."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cockpit.api import ConfigOption, Status, read_config_option, read_usage
from cockpit.engine.exports import export_path, safe_file_name
from cockpit.text.mentions import completion_query, find_mentions
from cockpit.text.textout import age, session_title
from cockpit.ui.agent_options import (
    OptionChoice,
    current_mode,
    current_model,
    mode_option_id,
    model_choices,
    named_choice,
    option_choices,
    option_value_name,
)
from cockpit.ui.completion import CompletionToken, completion_token, offset_of
from cockpit.ui.one_line import short_folder
from cockpit.ui.prompt_history import PromptHistory, PromptSearch
from cockpit.ui.session_states import GLYPHS, STATE_WORDS, RailState, rail_state
from cockpit.ui.status_rules import TURN_WORDS, usage_text
from cockpit.ui.transcript_window import Eviction, evict
from store import SessionRecord
from tests.support.helpers import session_record, status_text

ALL_STATES = (
    RailState.NEEDS_YOU,
    RailState.ERROR,
    RailState.UNREAD,
    RailState.WORKING,
    RailState.STARTING,
    RailState.IDLE,
    RailState.CLOSED,
)
ALL_STATUSES = (
    Status.STARTING,
    Status.READY,
    Status.WORKING,
    Status.CANCELLING,
    Status.WAITING,
    Status.CLOSED,
    Status.EXITED,
    Status.ERROR,
)


def record(
    *,
    title: str | None = "A session",
    modes: Mapping[str, Any] | None = None,
    config_options: tuple[Mapping[str, Any], ...] | None = None,
    usage: Mapping[str, Any] | None = None,
) -> SessionRecord:
    return session_record(
        agent="claude",
        command=("claude",),
        title=title,
        modes=modes,
        config_options=config_options,
        usage=usage,
    )


MODES = {
    "currentModeId": "plan",
    "availableModes": [
        {"id": "default", "name": "Default"},
        {"id": "plan", "name": "Plan"},
        {"id": "yolo"},
    ],
}
MODEL_OPTION = {
    "id": "model",
    "name": "Model",
    "type": "select",
    "category": "model",
    "currentValue": "opus",
    "options": [
        {"name": "Anthropic", "options": [{"value": "opus", "name": "Opus"}, {"value": "sonnet"}]},
        {"value": "local", "name": "Local model"},
    ],
}
MODE_OPTION = {
    "id": "agent-mode",
    "name": "Mode",
    "type": "select",
    "category": "mode",
    "currentValue": "ask",
    "options": [{"value": "ask", "name": "Ask"}, {"value": "code", "name": "Code"}],
}
THINKING_OPTION = {"id": "thinking", "name": "Thinking", "type": "boolean", "currentValue": True}


# -- the rail ---------------------------------------------------------------------------------


def test_every_rail_state_has_a_distinct_one_character_glyph_and_words() -> None:
    assert set(GLYPHS) == set(ALL_STATES) == set(STATE_WORDS)
    assert all(len(glyph) == 1 for glyph in GLYPHS.values())
    assert len(set(GLYPHS.values())) == len(GLYPHS)
    assert len(set(STATE_WORDS.values())) == len(STATE_WORDS)


@pytest.mark.parametrize(
    ("live", "stored", "pending", "latest", "read", "current", "expected"),
    [
        # a pending permission trumps everything, even a dead agent
        (Status.ERROR, Status.ERROR, 1, 9, 0, False, RailState.NEEDS_YOU),
        (Status.READY, Status.READY, 2, 0, 0, True, RailState.NEEDS_YOU),
        # then a dead agent, live or as stored while no agent runs
        (Status.ERROR, Status.READY, 0, 9, 0, False, RailState.ERROR),
        (Status.EXITED, Status.READY, 0, 0, 0, True, RailState.ERROR),
        (Status.CLOSED, Status.EXITED, 0, 0, 0, False, RailState.ERROR),
        (Status.CLOSED, Status.ERROR, 0, 9, 0, False, RailState.ERROR),
        # then what a running agent does
        (Status.WAITING, Status.WORKING, 0, 9, 0, False, RailState.NEEDS_YOU),
        (Status.WORKING, Status.WORKING, 0, 9, 0, False, RailState.WORKING),
        (Status.STARTING, Status.CLOSED, 0, 9, 0, False, RailState.STARTING),
        # a finished turn not looked at is unread, except for the session on screen
        (Status.READY, Status.READY, 0, 9, 3, False, RailState.UNREAD),
        (Status.READY, Status.READY, 0, 9, 3, True, RailState.IDLE),
        (Status.CLOSED, Status.CLOSED, 0, 9, 3, False, RailState.UNREAD),
        (Status.CLOSED, Status.CLOSED, 0, 9, 3, True, RailState.CLOSED),
        # all read
        (Status.READY, Status.READY, 0, 9, 9, False, RailState.IDLE),
        (Status.CLOSED, Status.READY, 0, 9, 9, False, RailState.CLOSED),
        (Status.CLOSED, Status.CLOSED, 0, 0, 0, False, RailState.CLOSED),
    ],
)
def test_rail_state(
    live: str, stored: str, pending: int, latest: int, read: int, current: bool, expected: str
) -> None:
    assert rail_state(live, stored, pending, latest > read, current) == expected


@given(
    live=st.sampled_from(ALL_STATUSES),
    stored=st.sampled_from(ALL_STATUSES),
    pending=st.integers(0, 5),
    latest=st.integers(0, 50),
    read=st.integers(0, 50),
    current=st.booleans(),
)
def test_rail_state_properties(
    live: str, stored: str, pending: int, latest: int, read: int, current: bool
) -> None:
    state = rail_state(live, stored, pending, latest > read, current)
    assert state in GLYPHS
    if pending:
        assert state == RailState.NEEDS_YOU
    if current or latest <= read:
        assert state != RailState.UNREAD
    if live in (Status.ERROR, Status.EXITED) and not pending:
        assert state == RailState.ERROR
    if live == Status.READY and not pending and (current or latest <= read):
        assert state == RailState.IDLE


def test_a_session_without_an_agent_is_never_shown_working_from_a_stale_stored_status() -> None:
    assert rail_state(Status.CLOSED, Status.WORKING, 0, False, False) == RailState.CLOSED


# -- ages and folders -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (-3, "now"),
        (0, "now"),
        (4.99, "now"),
        (5, "5s"),
        (42.9, "42s"),
        (59.99, "59s"),
        (60, "1m"),
        (5 * 60 + 59, "5m"),
        (3599.9, "59m"),
        (3600, "1h"),
        (3 * 3600 + 3599, "3h"),
        (86399, "23h"),
        (86400, "1d"),
        (2 * 86400 + 86399, "2d"),
        (400 * 86400, "400d"),
    ],
)
def test_age(seconds: float, expected: str) -> None:
    assert age(seconds) == expected


UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def age_seconds(text: str) -> int:
    """The age a text stands for, rounded down to its unit ("now" is 0)."""
    if text == "now":
        return 0
    match = re.fullmatch(r"([1-9][0-9]*)([smhd])", text)
    assert match is not None, text
    return int(match[1]) * UNITS[match[2]]


AGES = st.floats(min_value=-1e3, max_value=1e9, allow_nan=False)


@given(AGES, AGES)
def test_age_is_monotone(a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert age_seconds(age(low)) <= age_seconds(age(high))


@given(AGES)
@example(5.0)
@example(60.0)
@example(3600.0)
@example(86400.0)
def test_age_is_the_largest_fitting_unit_rounded_down_and_short(seconds: float) -> None:
    text = age(seconds)
    if seconds < 5:
        assert text == "now"
        return
    unit = UNITS[text[-1]]
    shown = age_seconds(text)
    assert shown <= seconds < shown + unit
    # the largest unit that fits: a number of minutes or hours below the next unit up
    assert {"s": 60, "m": 60, "h": 24, "d": 10**9}[text[-1]] > shown // unit >= 1
    assert len(text) <= 3 or (text.endswith("d") and len(text) <= len(str(shown // unit)) + 1)
    if seconds < 100 * 86400:
        assert len(text) <= 3


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/home/ann", "~"),
        ("/home/ann/src/cockpit", "~/src/cockpit"),
        ("/home/ann/a/b/c/d", "~/a/b/c/d"),
        ("/home/anne/src/cockpit", "src/cockpit"),  # a sibling of home is not home
        ("/srv/work/repos/cockpit", "repos/cockpit"),
        ("/srv/work/repos/cockpit/", "repos/cockpit"),
        ("/srv/repo", "/srv/repo"),
        ("/srv", "/srv"),
        ("/", "/"),
        ("relative/deep/path", "deep/path"),
    ],
)
def test_short_folder(path: str, expected: str) -> None:
    assert short_folder(path, home="/home/ann") == expected


def test_short_folder_defaults_to_the_users_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/zed")
    assert short_folder("/home/zed/code") == "~/code"
    assert short_folder("/a/b/c", home="") == "b/c"  # an empty home never matches


SEGMENTS = st.lists(
    st.text(st.characters(codec="utf-8", exclude_characters="/\0"), min_size=1),
    max_size=6,
)


@given(SEGMENTS, SEGMENTS)
def test_short_folder_properties(home_parts: list[str], parts: list[str]) -> None:
    home = "/" + "/".join(["home", *home_parts])
    under = home + ("/" + "/".join(parts) if parts else "")
    assert short_folder(under, home=home) == "~" + under[len(home) :]
    outside = "/" + "/".join(["srv", *parts])
    shown = short_folder(outside, home=home)
    assert outside.endswith(shown)
    assert len([part for part in shown.split(os.sep) if part]) <= 2


# -- the status line ----------------------------------------------------------------------------


def test_session_title_has_a_placeholder_before_the_first_prompt() -> None:
    assert session_title(record(title="Fix the bug")) == "Fix the bug"
    assert session_title(record(title=None)) == "New session"
    assert session_title(record(title="")) == "New session"


def option(value: Mapping[str, Any]) -> ConfigOption:
    """A config option as the agent sent it, read."""
    read = read_config_option({"id": "o", **value})
    assert isinstance(read, ConfigOption)
    return read


def test_option_value_name_reads_groups_and_falls_back_to_the_value() -> None:
    assert option_value_name(option(MODEL_OPTION)) == "Opus"
    assert option_value_name(option({**MODEL_OPTION, "currentValue": "local"})) == "Local model"
    assert option_value_name(option({**MODEL_OPTION, "currentValue": "sonnet"})) == "sonnet"
    assert option_value_name(option({**MODEL_OPTION, "currentValue": "gone"})) == "gone"
    assert option_value_name(option({"options": []})) is None


def test_current_mode_prefers_the_mode_option_then_the_modes() -> None:
    assert current_mode(record(modes=MODES, config_options=(MODE_OPTION,))) == "Ask"
    assert current_mode(record(modes=MODES)) == "Plan"
    assert current_mode(record(modes={**MODES, "currentModeId": "yolo"})) == "yolo"
    assert current_mode(record(modes={**MODES, "currentModeId": "unknown"})) == "unknown"
    assert current_mode(record(modes={"availableModes": []})) is None
    assert current_mode(record()) is None


def test_model_choices_are_the_model_options_values_alone() -> None:
    choices = model_choices(record(config_options=(MODE_OPTION, MODEL_OPTION, THINKING_OPTION)))
    assert [c.label for c in choices] == ["Model: Opus", "Model: sonnet", "Model: Local model"]
    assert {c.config_id for c in choices} == {"model"}
    assert [c.current for c in choices] == [True, False, False]
    by_id = {k: v for k, v in MODEL_OPTION.items() if k != "category"}
    assert len(model_choices(record(config_options=(by_id,)))) == 3
    assert model_choices(record(config_options=(MODE_OPTION, THINKING_OPTION))) == []
    assert model_choices(record()) == []


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("opus", "opus"),
        ("OPUS", "opus"),
        ("sonnet", "sonnet"),
        ("local model", "local"),
        ("local", "local"),  # the value itself, before "Local model" holds it
        ("loc", "local"),
        ("son", "sonnet"),
        ("gpt", None),
        ("", None),
        ("  ", None),
    ],
)
def test_named_choice(name: str, value: str | None) -> None:
    choices = model_choices(record(config_options=(MODEL_OPTION,)))
    chosen = named_choice(choices, name)
    assert (chosen.value if chosen else None) == value


def test_current_model_is_the_model_option() -> None:
    assert current_model(record(config_options=(MODE_OPTION, MODEL_OPTION))) == "Opus"
    by_id = {k: v for k, v in MODEL_OPTION.items() if k != "category"}
    assert current_model(record(config_options=(by_id,))) == "Opus"
    assert current_model(record(config_options=(MODE_OPTION,))) is None
    assert current_model(record()) is None


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (None, None),
        ({}, None),
        ({"used": 0, "size": 0}, None),
        ({"used": 999, "size": 1500}, "999/1.5k ctx"),
        ({"used": 12345, "size": 200500}, "12.3k/200.5k ctx"),
        ({"cost": {"amount": 0.4249, "currency": "USD"}}, "$0.42"),
        ({"cost": {"amount": 1}}, "$1.00"),
        ({"cost": {"amount": 3.5, "currency": "EUR"}}, "EUR 3.50"),
        ({"cost": {"amount": "free"}}, None),
        ({"used": 1500, "size": 8200, "cost": {"amount": 0.1}}, "1.5k/8.2k ctx · $0.10"),
    ],
)
def test_usage_text(usage: Mapping[str, Any] | None, expected: str | None) -> None:
    assert usage_text(read_usage(usage)) == expected


def test_usage_text_matches_its_documented_example() -> None:
    usage = {"used": 12300, "size": 200000, "cost": {"amount": 0.42, "currency": "USD"}}
    assert usage_text(read_usage(usage)) == "12.3k/200k ctx · $0.42"


def test_every_live_status_has_turn_words() -> None:
    assert set(TURN_WORDS) == set(ALL_STATUSES)
    for status, words in TURN_WORDS.items():
        assert status_text(record(), "A", status, 200) == f"{words} · A"


# -- prompt history -----------------------------------------------------------------------------


def test_history_walks_back_and_returns_to_the_draft() -> None:
    history = PromptHistory(["one", "  ", "two"])
    assert history.entries == ["one", "two"]  # blank prompts are not history
    assert history.newer() is None  # not browsing
    assert history.older("draft") == "two"
    assert history.older("ignored: already browsing") == "one"
    assert history.older("x") is None  # the oldest
    assert history.newer() == "two"
    assert history.newer() == "draft"
    assert history.newer() is None


def test_history_add_skips_blanks_and_repeats_and_stops_browsing() -> None:
    history = PromptHistory()
    assert history.older("draft") is None  # nothing to go back to
    history.add("one")
    history.add("one")
    history.add("   ")
    history.add("two")
    assert history.entries == ["one", "two"]
    assert history.older("") == "two"
    history.add("three")
    assert history.newer() is None  # sending stops browsing
    assert history.older("new draft") == "three"
    history.add("one")  # not a repeat of the last one: kept
    assert history.entries == ["one", "two", "three", "one"]


PROMPTS = st.lists(st.sampled_from(["a", "b", "c", " ", "", "long prompt\nline 2"]), max_size=8)


@given(PROMPTS, st.integers(0, 12), st.text(max_size=5))
def test_history_browsing_returns_to_the_draft(prompts: list[str], steps: int, draft: str) -> None:
    history = PromptHistory(prompts)
    entries = list(history.entries)
    assert all(entry.strip() for entry in entries)
    older = [history.older(draft) for _ in range(steps)]
    reached = min(steps, len(entries))
    assert older[:reached] == entries[::-1][:reached]
    assert all(result is None for result in older[reached:])
    newer = [history.newer() for _ in range(reached)]
    if reached:
        assert newer == [*entries[len(entries) - reached + 1 :], draft]
    assert history.newer() is None
    assert history.entries == entries


@given(
    PROMPTS,
    st.lists(
        st.one_of(
            st.tuples(st.just("older"), st.sampled_from(["draft", "other"])),
            st.tuples(st.just("newer"), st.just("")),
            st.tuples(st.just("add"), st.sampled_from(["a", "x", " "])),
        ),
        max_size=30,
    ),
)
def test_history_never_leaves_its_entries(
    prompts: list[str], actions: list[tuple[str, str]]
) -> None:
    history = PromptHistory()
    for prompt in prompts:
        history.add(prompt)
    drafts = {"draft", "other"}
    for action, argument in actions:
        if action == "older":
            result = history.older(argument)
        elif action == "newer":
            result = history.newer()
        else:
            history.add(argument)
            continue
        assert result is None or result in history.entries or result in drafts
    assert all(entry.strip() for entry in history.entries)
    assert all(a != b for a, b in zip(history.entries, history.entries[1:], strict=False))


# -- eviction -----------------------------------------------------------------------------------


def test_evict_nothing_while_within_the_limit() -> None:
    assert evict([1, 2, 3], frozenset(), 3, keep_bottom=True) == Eviction((), True)
    assert evict([1, 2, 3], frozenset(), 5, keep_bottom=False) == Eviction((), False)


def test_evict_near_the_bottom_drops_the_oldest_but_never_the_live_turn() -> None:
    assert evict([1, 2, 3, 4, 5], frozenset(), 3, keep_bottom=True) == Eviction((1, 2), True)
    assert evict([1, 2, 3, 4, 5], frozenset({1}), 3, keep_bottom=True) == Eviction((2, 3), True)
    assert evict([1, 2, 3, 4], frozenset({3, 4}), 3, keep_bottom=True) == Eviction((1,), True)


def test_a_live_turn_longer_than_the_limit_loses_its_oldest_near_the_bottom() -> None:
    """A hostile agent sent thousands of notices in one turn: every one stayed mounted,
    and laying them out took the TUI a minute."""
    assert evict([1, 2, 3], frozenset({1, 2, 3}), 1, keep_bottom=True) == Eviction((1, 2), True)
    live = frozenset({3, 4, 5, 6})
    assert evict([1, 2, 3, 4, 5, 6], live, 2, keep_bottom=True) == Eviction((1, 2, 3, 4), True)


def test_evict_far_up_drops_the_newest_but_never_the_live_turn() -> None:
    """Reading history far up, the live turn stays pinned: its frames keep landing."""
    assert evict([1, 2, 3, 4, 5], frozenset(), 3, keep_bottom=False) == Eviction((5, 4), False)
    assert evict([1, 2, 3, 4, 5], frozenset({5}), 3, keep_bottom=False) == Eviction((4, 3), False)
    assert evict([1, 2, 3], frozenset({1, 2, 3}), 1, keep_bottom=False) == Eviction((), False)


MOUNTED = st.lists(st.integers(0, 200), max_size=40, unique=True).map(sorted)


@given(MOUNTED, st.data(), st.integers(0, 45), st.booleans())
def test_evict_properties(
    mounted: list[int], data: st.DataObject, limit: int, keep_bottom: bool
) -> None:
    pinned = frozenset(data.draw(st.lists(st.sampled_from(mounted or [0]), max_size=10)))
    eviction = evict(mounted, pinned, limit, keep_bottom)
    excess = max(len(mounted) - limit, 0)
    assert eviction.from_top == keep_bottom
    assert len(set(eviction.seqs)) == len(eviction.seqs)
    assert set(eviction.seqs) <= set(mounted)
    unpinned = [seq for seq in mounted if seq not in pinned]
    if keep_bottom and len(unpinned) < excess:  # the live turn alone is over the limit
        assert list(eviction.seqs) == mounted[:excess]  # the oldest go, pinned or not
        return
    assert not pinned & set(eviction.seqs)  # the live turn is pinned otherwise
    assert len(eviction.seqs) == min(excess, len(unpinned))
    if keep_bottom:
        assert list(eviction.seqs) == unpinned[: len(eviction.seqs)]  # the oldest go
    else:
        assert list(eviction.seqs) == unpinned[::-1][: len(eviction.seqs)]  # the newest go
    kept = [seq for seq in mounted if seq not in eviction.seqs]
    if len(unpinned) >= excess:
        assert len(kept) == min(len(mounted), limit)


# -- completion tokens --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cursor", "expected"),
    [
        ("/", 1, CompletionToken("/", "", 0, 1)),
        ("/he", 3, CompletionToken("/", "he", 0, 3)),
        ("/help", 2, CompletionToken("/", "h", 0, 5)),
        ("/export notes.md", 3, CompletionToken("/", "ex", 0, 7)),
        ("@", 1, CompletionToken("@", "", 0, 1)),
        ("look at @src/ma", 15, CompletionToken("@", "src/ma", 8, 15)),
        ("@src/main.py", 5, CompletionToken("@", "src/", 0, 12)),  # the whole path is replaced
        ("(@src", 5, CompletionToken("@", "src", 1, 5)),
        ('see @"my fi', 11, CompletionToken("@", "my fi", 4, 11)),
        ('@"my file', 9, CompletionToken("@", "my file", 0, 9)),
        ("/new @cl", 8, CompletionToken("@", "cl", 5, 8)),
        ("line one\n@do", 12, CompletionToken("@", "do", 9, 12)),
    ],
)
def test_completion_token(text: str, cursor: int, expected: CompletionToken) -> None:
    assert completion_token(text, cursor) == expected


@pytest.mark.parametrize(
    ("text", "cursor"),
    [
        ("", 0),
        ("hello", 5),
        ("hello wor", 9),
        ("x /he", 5),  # a slash command is only the first word
        (" /he", 4),  # ... at the very start of the text
        ("hello\n/he", 9),  # ... of the prompt, not of a later line
        ("/help me", 8),  # past the command word
        ("mail ann@example.com", 20),  # an e-mail address is not a mention
        ("mail ann@example.com", 10),
        ("@done ", 6),  # after the token
        ('@"my file" ', 10),  # a closed quoted mention
        ("@src/a b", 8),
    ],
)
def test_no_completion_token(text: str, cursor: int) -> None:
    assert completion_token(text, cursor) is None


TEXTS = st.text(alphabet=st.sampled_from('ab/@ ."\n(),'), max_size=16)


@given(TEXTS, st.data())
def test_completion_token_properties(text: str, data: st.DataObject) -> None:
    cursor = data.draw(st.integers(0, len(text)))
    token = completion_token(text, cursor)
    if token is None:
        return
    assert 0 <= token.start <= cursor <= token.end <= len(text)
    if token.trigger == "/":
        assert token.start == 0
        assert text.startswith("/")
        assert not any(c.isspace() for c in text[:cursor])
        assert token.query == text[1:cursor]
        assert not any(c.isspace() for c in text[: token.end])
        assert token.end == len(text) or text[token.end].isspace()
    else:
        assert token.trigger == "@"
        assert text[token.start] == "@"
        mention = completion_query(text, cursor)
        assert mention is not None
        assert (token.start, token.query) == (mention.start, mention.path)


@given(
    st.text(alphabet="abc.-_+9", min_size=1, max_size=8),
    st.text(alphabet="abc.-", min_size=1, max_size=8),
    st.data(),
)
def test_an_email_address_is_never_a_mention(local: str, domain: str, data: st.DataObject) -> None:
    text = f"write to {local}@{domain}"
    cursor = data.draw(st.integers(0, len(text)))
    assert completion_token(text, cursor) is None


@given(st.text(alphabet="ab /\n", max_size=8), st.text(alphabet="ab/", max_size=6))
def test_slash_is_a_command_only_at_the_very_start(before: str, word: str) -> None:
    text = f"{before} /{word}"
    token = completion_token(text, len(text))
    assert token is None or token.trigger != "/"


@pytest.mark.parametrize(
    ("text", "cursor"), [("(@src)", 5), ("see @READ, then", 9), ('@"my file"', 3)]
)
def test_a_completion_token_inside_a_mention_covers_exactly_that_mention(
    text: str, cursor: int
) -> None:
    (mention,) = [m for m in find_mentions(text) if m.start < cursor <= m.end]
    token = completion_token(text, cursor)
    assert token is not None
    assert (token.start, token.end) == (mention.start, mention.end)


# -- offsets ------------------------------------------------------------------------------------


def test_offset_of() -> None:
    lines = ["ab", "", "cde"]
    assert offset_of(lines, 0, 0) == 0
    assert offset_of(lines, 0, 2) == 2
    assert offset_of(lines, 1, 0) == 3
    assert offset_of(lines, 2, 1) == 5
    assert "\n".join(lines)[5] == "d"


@given(st.text(alphabet="ab\n", max_size=30), st.data())
def test_offset_of_agrees_with_the_joined_text(text: str, data: st.DataObject) -> None:
    lines = text.split("\n")
    row = data.draw(st.integers(0, len(lines) - 1))
    column = data.draw(st.integers(0, len(lines[row])))
    offset = offset_of(lines, row, column)
    assert "\n".join(lines) == text
    before = text[:offset].split("\n")
    assert len(before) == row + 1
    assert before[-1] == lines[row][:column]
    assert text[offset:].startswith(lines[row][column:])


# -- options ------------------------------------------------------------------------------------


def test_mode_option_id() -> None:
    assert mode_option_id(record(config_options=(MODEL_OPTION, MODE_OPTION))) == "agent-mode"
    assert mode_option_id(record(config_options=(MODEL_OPTION,), modes=MODES)) is None
    assert mode_option_id(record()) is None


def test_option_choices_for_select_boolean_options_and_modes() -> None:
    chosen = option_choices(record(config_options=(MODEL_OPTION, THINKING_OPTION), modes=MODES))
    assert chosen == [
        OptionChoice("model", "opus", "Model: Opus", True),
        OptionChoice("model", "sonnet", "Model: sonnet", False),
        OptionChoice("model", "local", "Model: Local model", False),
        OptionChoice("thinking", False, "Thinking: off", False),  # the other value only
        OptionChoice(None, "default", "Mode: Default", False),
        OptionChoice(None, "plan", "Mode: Plan", True),
        OptionChoice(None, "yolo", "Mode: yolo", False),
    ]


def test_a_boolean_option_that_is_off_offers_on() -> None:
    off = {"id": "fast", "type": "boolean", "currentValue": False}
    assert option_choices(record(config_options=(off,))) == [
        OptionChoice("fast", True, "fast: on", False)
    ]


def test_modes_are_not_offered_twice_when_an_option_holds_the_mode() -> None:
    chosen = option_choices(record(config_options=(MODE_OPTION,), modes=MODES))
    assert chosen == [
        OptionChoice("agent-mode", "ask", "Mode: Ask", True),
        OptionChoice("agent-mode", "code", "Mode: Code", False),
    ]
    assert all(
        choice.config_id == mode_option_id(record(config_options=(MODE_OPTION,)))
        for choice in chosen
    )


def test_option_choices_skip_malformed_entries() -> None:
    odd = {"id": "x", "options": ["not a mapping", {"options": ["nor this", {"value": "v"}]}]}
    modes = {"availableModes": ["junk", {"id": "m"}], "currentModeId": "m"}
    assert option_choices(record(config_options=(odd,), modes=modes)) == [
        OptionChoice("x", "v", "x: v", False),
        OptionChoice(None, "m", "Mode: m", True),
    ]
    assert option_choices(record()) == []


@given(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=5, unique=True), st.data())
def test_exactly_one_select_value_is_current(values: list[str], data: st.DataObject) -> None:
    current = data.draw(st.sampled_from(values))
    option = {"id": "o", "options": [{"value": v} for v in values], "currentValue": current}
    chosen = option_choices(record(config_options=(option,)))
    assert [c.value for c in chosen] == values
    assert [c.value for c in chosen if c.current] == [current]


# -- exports ------------------------------------------------------------------------------------


def test_export_path() -> None:
    assert export_path("/work/p", "notes.md") == Path("/work/p/notes.md")
    assert export_path("/work/p", "out/notes.md") == Path("/work/p/out/notes.md")
    assert export_path("/work/p", "/tmp/notes.md") == Path("/tmp/notes.md")


def test_export_path_expands_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/zed")
    assert export_path("/work/p", "~/notes.md") == Path("/home/zed/notes.md")


NAME_PARTS = st.lists(
    st.text(st.characters(codec="utf-8", exclude_characters="/\0~"), min_size=1).filter(
        lambda part: part not in (".", "..")
    ),
    min_size=1,
    max_size=4,
)


@given(NAME_PARTS)
def test_export_path_keeps_relative_names_under_the_folder(parts: list[str]) -> None:
    folder = "/work/project"
    path = export_path(folder, "/".join(parts))
    assert path.is_relative_to(folder)
    assert path != Path(folder)


@given(NAME_PARTS)
def test_export_path_keeps_absolute_targets(parts: list[str]) -> None:
    target = "/" + "/".join(parts)
    assert export_path("/work/project", target) == Path(target)


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Fix the bug", "fix-the-bug"),
        ("  Fix: the *bug*!  ", "fix-the-bug"),
        ("../../etc/passwd", "etc-passwd"),
        ("C:\\Windows\\x", "c-windows-x"),
        ("Ünïcödé 42", "ünïcödé-42"),
        ("", "session"),
        ("!!!", "session"),
        ("---", "session"),
    ],
)
def test_safe_file_name(title: str, expected: str) -> None:
    assert safe_file_name(title) == expected


@given(st.text())
def test_safe_file_name_is_letters_digits_and_single_dashes(title: str) -> None:
    name = safe_file_name(title)
    assert name
    assert all(c.isalnum() or c == "-" for c in name)
    assert "/" not in name and os.sep not in name and "\\" not in name and "\0" not in name
    assert name not in (".", "..")
    assert not name.startswith("-") and not name.endswith("-")
    assert "--" not in name


def test_safe_file_name_fits_in_a_file_name() -> None:
    assert len((safe_file_name("word " * 100) + ".md").encode()) <= 255


def test_history_of_another_session_starts_browsing_afresh() -> None:
    """Up through a long history, then a switch to a session with a short one: the next
    Up used to index past its end (the key monkey's IndexError)."""
    history = PromptHistory([f"prompt {n}" for n in range(5)])
    for _ in range(2):
        history.older("typed")
    history.reset(["only one", "  "])
    assert history.entries == ["only one"]
    assert history.newer() is None  # not browsing any more
    assert history.older("draft") == "only one"
    assert history.older("draft") is None
    assert history.newer() == "draft"


# -- Ctrl+R: searching earlier prompts --------------------------------------------------------


def test_a_prompt_search_finds_the_newest_first_in_any_case() -> None:
    search = PromptSearch(["fix the table", "write a plan", "Table again", "fix the table"])
    assert search.matches == ["fix the table", "Table again", "write a plan"]  # each once
    search.type("TAB")
    assert search.matches == ["fix the table", "Table again"] and search.match == "fix the table"
    search.older()
    assert search.match == "Table again"
    search.older()  # stays on the oldest
    assert search.match == "Table again"
    search.newer()
    search.newer()  # stays on the newest
    assert search.match == "fix the table"
    search.older()
    search.type("l")  # more of the query: the newest match again
    assert search.match == "fix the table" and search.chosen == 0
    search.type("x")
    assert search.matches == [] and search.match is None
    search.older()
    search.newer()
    assert search.match is None
    search.erase()
    assert search.query == "TABl" and search.match == "fix the table"
    search.choose(1)
    assert search.match == "Table again"
    search.choose(7)  # out of range: no change
    assert search.match == "Table again"


@given(
    st.lists(st.text(alphabet="abc \n", max_size=6), max_size=8),
    st.lists(st.sampled_from(["a", "b", "c", " ", "erase", "older", "newer"]), max_size=12),
)
def test_a_prompt_search_always_offers_the_prompts_that_hold_the_query(
    prompts: list[str], steps: list[str]
) -> None:
    """Whatever is typed: the matches are exactly the prompts that hold the query, newest
    first, each once, and the chosen one is one of them."""
    search = PromptSearch(prompts)
    for step in steps:
        if step == "erase":
            search.erase()
        elif step in ("older", "newer"):
            getattr(search, step)()
        else:
            search.type(step)
        holding = [p for p in reversed(prompts) if search.query.lower() in p.lower()]
        assert search.matches == list(dict.fromkeys(holding))
        assert search.match is None if not holding else search.match in holding
        assert 0 <= search.chosen <= max(len(search.matches) - 1, 0)
