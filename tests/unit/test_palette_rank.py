"""How the palette ranks its entries against what is typed (`cockpit.ui.palette_rank`):
a typed word that begins a word of an entry ranks above letters found scattered."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from textual.fuzzy import FuzzySearch

from cockpit.ui.palette_rank import FIRST_WORD, INSIDE, NO_MATCH, SCATTERED, WORDS, rank

ENTRIES = [
    "New session…",
    "Rename session",
    "Close session",
    "Inbox",
    "Show or hide the session rail",
    "Jump to newest output",
    "Change theme",
    "Keys and help",
    "Quit",
    "New session with Cockpit demo agent",
    "New session with Claude (built-in)",
    "Session: fix the parser",
]


def best(query: str) -> str:
    """The entry ranked first for `query` (the first of equals, as the palette keeps)."""
    return max(ENTRIES, key=lambda entry: rank(query, entry).score)


def ranked(query: str) -> list[str]:
    scores = {entry: rank(query, entry).score for entry in ENTRIES}
    return sorted((e for e in ENTRIES if scores[e] > 0), key=lambda e: -scores[e])


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("theme", "Change theme"),
        ("them", "Change theme"),
        ("THEME", "Change theme"),
        ("quit", "Quit"),
        ("keys", "Keys and help"),
        ("help", "Keys and help"),
        ("ren", "Rename session"),
        ("rail", "Show or hide the session rail"),
        ("demo", "New session with Cockpit demo agent"),
        ("with demo", "New session with Cockpit demo agent"),
        ("demo new", "New session with Cockpit demo agent"),
        ("claude", "New session with Claude (built-in)"),
        ("parser", "Session: fix the parser"),
        ("new", "New session…"),  # the shorter of two that begin with the word
    ],
)
def test_the_entry_a_word_names_comes_first(query: str, first: str) -> None:
    assert best(query) == first


def test_theme_ranks_the_theme_entry_above_letters_scattered_through_an_agent() -> None:
    """What the user saw: "theme" put "New session with Cockpit demo agent" first."""
    assert ranked("theme") == ["Change theme", "New session with Cockpit demo agent"]


def test_the_tiers() -> None:
    assert FIRST_WORD <= rank("change", "Change theme").score < FIRST_WORD + 1
    assert WORDS <= rank("theme", "Change theme").score < WORDS + 1
    assert INSIDE <= rank("hem", "Change theme").score < INSIDE + 1
    assert SCATTERED < rank("cte", "Change theme").score < SCATTERED + 1
    assert rank("xyz", "Change theme") == NO_MATCH
    assert rank("", "Change theme") == NO_MATCH
    assert rank("  ", "Change theme") == NO_MATCH


def test_a_whole_word_typed_ranks_above_the_start_of_one() -> None:
    assert rank("new", "New session").score > rank("new", "Newest session").score


def test_the_offsets_are_what_to_highlight() -> None:
    assert rank("theme", "Change theme").offsets == (7, 8, 9, 10, 11)
    assert rank("with demo", "New session with Cockpit demo agent").offsets == (
        12, 13, 14, 15, 25, 26, 27, 28,
    )  # fmt: skip
    assert rank("hem", "Change theme").offsets == (8, 9, 10)


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
entries = st.lists(words, min_size=1, max_size=6).map(" ".join)
queries = st.text(alphabet="abcdefghij :/…-", max_size=12)


def begins_a_word(typed: str, entry: str) -> bool:
    return any(word.startswith(typed) for word in re.findall(r"\w+", entry.lower()))


@given(entries, entries, st.data())
def test_a_word_of_an_entry_ranks_it_above_one_it_does_not_begin_a_word_of(
    entry: str, other: str, data: st.DataObject
) -> None:
    """A whole word of `entry`, or the start of one, typed: `entry` ranks above any entry
    where that is only found inside a word or scattered."""
    word = data.draw(st.sampled_from(entry.split()))
    typed = word[: data.draw(st.integers(1, len(word)))]
    if not begins_a_word(typed, other):
        assert rank(typed, entry).score > rank(typed, other).score


@given(entries, entries, st.data())
def test_the_start_of_the_first_word_ranks_above_the_start_of_a_later_one(
    entry: str, other: str, data: st.DataObject
) -> None:
    first = entry.split()[0]
    typed = first[: data.draw(st.integers(1, len(first)))]
    if not other.split()[0].startswith(typed):
        assert rank(typed, entry).score > rank(typed, other).score


@given(queries, entries)
def test_a_match_has_every_letter_typed_and_offsets_inside_the_entry(
    query: str, entry: str
) -> None:
    score, offsets = rank(query, entry)
    assert 0 <= score < FIRST_WORD + 1
    if score:
        letters = {c for c in query.lower() if c.isalnum()}
        assert letters <= set(entry.lower())
        assert offsets and all(0 <= offset < len(entry) for offset in offsets)
        assert list(offsets) == sorted(set(offsets))
    else:
        assert offsets == ()


@given(queries, entries)
def test_the_query_inside_the_entry_always_matches(query: str, entry: str) -> None:
    """What Textual's palette found, Cockpit's finds too: the query as a part of the
    entry, or its letters in order. Only spaces typed are no query at all (Textual's would
    match a space in the entry)."""
    if not query.strip():
        return
    if query.strip().lower() in entry.lower():
        assert rank(query, entry).score >= INSIDE
    if FuzzySearch().match(query, entry)[0]:
        assert rank(query, entry).score > 0
