"""One unit test per folding rule and per edge, on the pure functions of `store.fold_rules`."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store.fold_rules import (
    MIN_OVERLAP,
    RECAP_FLOOR,
    Growth,
    OpenRow,
    RecentRow,
    ReplayWindow,
    fold_recap,
    is_plain_delta,
    is_recap,
    merge_tool,
    message_key,
    new_text,
    overlap,
    plan_payload,
    recap_target,
    text_route,
    tool_key,
)
from store.text import clean_text, normalise_ws, solid_len

# Rule 2: what is new ----------------------------------------------------------------------


def test_snapshot_adds_only_its_tail() -> None:
    assert new_text("Hello wor", "Hello world, again") == "ld, again"


def test_exact_resend_adds_nothing() -> None:
    assert new_text("| a | b |\n|---|", "| a | b |\n|---|") == ""


def test_whitespace_only_resend_adds_nothing() -> None:
    held = "Here is the plan:\n\n1. read  the file\n2. edit it"
    assert new_text(held, "Here is the plan: 1. read the file\n2.   edit it\n") == ""


def test_a_short_resend_with_less_whitespace_adds_nothing() -> None:
    # Shorter than the row and than an overlap, yet not a delta: only its spacing differs.
    assert new_text("a  b", "a b") == ""
    assert not is_plain_delta("a b", 4, solid_len("a  b"), solid_len("a b"))


def test_a_snapshot_that_adds_only_whitespace_adds_it() -> None:
    # A snapshot before a whitespace re-send: the blank line is new, and the next delta
    # must land after it.
    assert new_text("Done.", "Done.\n\n") == "\n\n"


def test_whitespace_difference_inside_a_word_is_not_a_resend() -> None:
    assert new_text("abcdef", "abc def") == "abc def"


def test_genuine_delta_is_kept_whole() -> None:
    assert new_text("The quick brown", " fox") == " fox"


def test_first_chunk_of_a_row_is_all_new() -> None:
    assert new_text("", "  indented") == "  indented"


def test_overlap_of_sixteen_characters_is_stripped() -> None:
    held = "prefix text, then 0123456789abcdef"
    assert len("0123456789abcdef") == MIN_OVERLAP == 16
    assert new_text(held, "0123456789abcdef and more") == " and more"


def test_overlap_of_fifteen_characters_is_a_coincidence() -> None:
    held = "prefix text, then 0123456789abcde"
    incoming = "0123456789abcde and more"
    assert new_text(held, incoming) == incoming


def test_resend_of_exactly_the_last_sixteen_characters_adds_nothing() -> None:
    held = "prefix text, then 0123456789abcdef"
    assert new_text(held, held[-MIN_OVERLAP:]) == ""


def test_longest_overlap_wins() -> None:
    held = "xx abcabcabcabcabcabcabcabc"
    # Both an 18- and a 24-character overlap exist; the longest is the re-sent part.
    incoming = "abcabcabcabcabcabcabcabc!"
    assert overlap(held, incoming) == 24
    assert new_text(held, incoming) == "!"


def test_resend_of_the_held_end_adds_nothing() -> None:
    held = "A long reply that ends with this closing sentence."
    assert new_text(held, "ends with this closing sentence.") == ""


def test_plain_delta_shortcut_agrees_with_the_rule() -> None:
    held = "| col | col |\n|-----|"
    for piece in ("---", "|\n| ", "  ", "", "x"):
        if is_plain_delta(piece, len(held), solid_len(held), solid_len(piece)):
            assert new_text(held, piece) == piece


def test_plain_delta_shortcut_refuses_what_could_be_a_resend() -> None:
    assert not is_plain_delta("abc", 3, 3, 3)  # as long as the row: could be a snapshot
    assert not is_plain_delta("a b c d e f g h i j", 40, 10, 10)  # long enough to overlap


# Rule 3: recaps ------------------------------------------------------------------------------

LONG = "The build passed and every test is green now."


def test_equal_recap_folds() -> None:
    assert is_recap(LONG, "The build  passed and every test\nis green now.")


def test_twelve_character_resend_is_kept_twice() -> None:
    assert not is_recap("Thanks, done", "Thanks, done")


def test_floor_is_twenty_four_characters() -> None:
    exact = "x" * (RECAP_FLOOR - 1) + "y"
    short = exact[:-1]
    assert len(exact) == 24
    assert is_recap(exact, exact)
    assert not is_recap(short, short)


def test_floor_is_on_the_whitespace_normalised_text() -> None:
    # "ok" padded to 27 characters is still "ok": twice is two messages.
    assert not is_recap("ok" + " " * 25, "ok" + "\n" * 25)
    padded = "abcdefghij klmnopq rstu" + "\n" * 10  # 23 characters once normalised
    assert not is_recap(padded, "abcdefghij klmnopq rstu vwx")


def test_floor_applies_to_the_shorter_text() -> None:
    part = "abcdefghij klmnopq rstu"  # 23 characters, contained in the longer one
    assert len(part) == 23
    assert not is_recap(part + " vwx", part)


@pytest.mark.parametrize("row_is_shorter", [True, False])
def test_sixty_percent_coverage_in_both_directions(row_is_shorter: bool) -> None:
    longer = "0123456789" * 5  # 50 characters
    covering = longer[:30]  # exactly 60%
    not_covering = longer[:29]  # 58%
    if row_is_shorter:
        assert is_recap(covering, longer)
        assert not is_recap(not_covering, longer)
    else:
        assert is_recap(longer, covering)
        assert not is_recap(longer, not_covering)


def test_containment_is_required_not_just_similarity() -> None:
    assert not is_recap(LONG, LONG.replace("green", "red"))


def test_recap_covered_by_the_row_adds_nothing() -> None:
    assert fold_recap(LONG + " More detail follows here.", LONG) == Growth("")


def test_recap_extending_the_row_appends_its_tail() -> None:
    assert fold_recap(LONG, LONG + " Also lint.") == Growth(" Also lint.")


def test_recap_wrapping_the_row_replaces_it() -> None:
    wrapped = "Summary: " + LONG
    assert fold_recap(LONG, wrapped) == Growth(wrapped, replace=True)


def test_recap_target_is_same_kind_same_turn_newest_first() -> None:
    recent = [
        RecentRow("agent:2:@9", "agent", 2, LONG),
        RecentRow("thought:2:@8", "thought", 2, LONG),
        RecentRow("agent:1:@3", "agent", 1, LONG),
    ]
    assert recap_target(recent, "agent", 2, LONG) == "agent:2:@9"
    assert recap_target(recent, "thought", 2, LONG) == "thought:2:@8"
    assert recap_target(recent, "agent", 3, LONG) is None
    assert recap_target(recent, "agent", 2, "ok") is None


def test_recap_target_prefers_the_newest_of_two_matching_rows() -> None:
    recent = [
        RecentRow("agent:2:m2", "agent", 2, LONG + " And lint."),
        RecentRow("agent:2:m1", "agent", 2, LONG),
    ]
    assert recap_target(recent, "agent", 2, LONG + " And lint. And docs.") == "agent:2:m2"


# Keys and adjacency ----------------------------------------------------------------------


def test_message_ids_are_namespaced_by_kind_and_turn() -> None:
    assert message_key("agent", 3, "m1") != message_key("thought", 3, "m1")
    assert message_key("agent", 3, "m1") != message_key("agent", 4, "m1")
    assert tool_key("call_1") == "tool:call_1"


def test_id_less_chunk_extends_the_open_row_of_its_kind_and_turn() -> None:
    open_row = OpenRow("agent:1:@5", "agent", 1, named=False)
    assert text_route(open_row, "agent", 1, None) == "agent:1:@5"
    assert text_route(open_row, "thought", 1, None) is None
    assert text_route(open_row, "agent", 2, None) is None
    assert text_route(None, "agent", 1, None) is None


def test_id_less_chunk_is_never_glued_onto_a_named_row() -> None:
    named = OpenRow("agent:1:m1", "agent", 1, named=True)
    assert text_route(named, "agent", 1, None) is None
    assert text_route(named, "agent", 1, "m1") == "agent:1:m1"
    assert text_route(None, "agent", 1, "m2") == "agent:1:m2"


# Rule 4: tools and plans -----------------------------------------------------------------------


def test_tool_update_before_start_creates_the_payload() -> None:
    payload = merge_tool(
        None, {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "pending"}
    )
    assert payload == {"toolCallId": "t", "status": "pending"}


def test_tool_lists_replace_and_other_fields_merge() -> None:
    start = {
        "toolCallId": "t",
        "title": "Edit",
        "kind": "edit",
        "status": "pending",
        "content": [{"type": "diff", "path": "a", "newText": "1"}],
        "locations": [{"path": "a"}, {"path": "b"}],
        "_meta": {"a": 1},
    }
    merged = merge_tool(
        start,
        {
            "toolCallId": "t",
            "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "ok"}}],
            "locations": [{"path": "c"}],
            "title": None,
            "_meta": {"b": 2},
        },
    )
    assert merged["title"] == "Edit"
    assert merged["kind"] == "edit"
    assert merged["status"] == "completed"
    assert merged["content"] == [{"type": "content", "content": {"type": "text", "text": "ok"}}]
    assert merged["locations"] == [{"path": "c"}]
    assert merged["_meta"] == {"a": 1, "b": 2}


def test_later_meta_values_win_key_by_key() -> None:
    start = {"toolCallId": "t", "_meta": {"a": 1, "b": 1}}
    merged = merge_tool(merge_tool(None, start), {"toolCallId": "t", "_meta": {"b": 2, "c": 3}})
    assert merged["_meta"] == {"a": 1, "b": 2, "c": 3}


def test_repeated_start_merges() -> None:
    start = {"toolCallId": "t", "title": "Run", "status": "pending"}
    assert merge_tool(merge_tool(None, start), start) == start


def test_plan_replaces_the_whole_list() -> None:
    entries = [{"content": "a", "priority": "high", "status": "pending"}]
    assert plan_payload(entries) == {"entries": entries, "revision": 0, "author": "agent"}
    assert plan_payload(entries, 3, "tool", "why") == {
        "entries": entries, "revision": 3, "author": "tool", "explanation": "why",
    }  # fmt: skip


@given(
    st.lists(st.one_of(st.integers(), st.text(), st.none(), st.dictionaries(st.text(), st.text())))
)
def test_a_plan_keeps_only_the_entries_that_are_objects(entries: list[object]) -> None:
    kept = [entry for entry in entries if isinstance(entry, dict)]
    assert plan_payload(entries)["entries"] == kept
    assert plan_payload(7)["entries"] == plan_payload("entries")["entries"] == []


# Rule 5: the replay window -------------------------------------------------------------------


def test_replay_is_dropped_when_the_transcript_is_stored() -> None:
    assert not ReplayWindow.decide(stored_rows=12).keep
    assert not ReplayWindow.decide(stored_rows=1).keep  # a lone prompt is a transcript too
    assert ReplayWindow.decide(stored_rows=0).keep


def test_kept_replay_opens_a_turn_per_user_message() -> None:
    keep, drop = ReplayWindow(True), ReplayWindow(False)
    assert keep.turn_for("user", extends_open_row=False, turn=2) == 3
    assert keep.turn_for("user", extends_open_row=True, turn=2) == 2
    assert keep.turn_for("agent", extends_open_row=False, turn=2) == 2
    assert drop.turn_for("user", extends_open_row=False, turn=2) == 2


# Text hygiene -------------------------------------------------------------------------------


def test_lone_surrogates_become_replacement_characters() -> None:
    raw = b"ok \xff\xfe end".decode("utf-8", "surrogateescape")
    cleaned = clean_text(raw)
    cleaned.encode("utf-8")
    assert cleaned == "ok \ufffd\ufffd end"
    assert clean_text("\ud800x") == "\ufffdx"
    assert clean_text("nul \x00 and \x1b[31mred\x1b[0m") == "nul \x00 and \x1b[31mred\x1b[0m"


def test_normalise_ws() -> None:
    assert normalise_ws("  a \n\t b  ") == "a b"
