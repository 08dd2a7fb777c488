"""Escape sequences from agents never reach a terminal raw."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cockpit.text.sanitize import HOLD_LIMIT, StreamCleaner, printable


def test_sequences_are_removed_and_text_kept() -> None:
    text = (
        "red: \x1b[31mred\x1b[0m title: \x1b]0;pwned\x07 clip: \x1b]52;c;aGk=\x1b\\ "
        "bell\x07 clear\x1b[2J\x1b[H keypad\x1b= c1:\x9b31m nul\x00 del\x7f tab\tnl\nend\r\n"
    )
    assert printable(text) == "red: red title:  clip:  bell clear keypad c1: nul del tab\tnl\nend\n"


@given(st.text())
def test_output_has_no_control_characters(text: str) -> None:
    cleaned = printable(text)
    assert "\x1b" not in cleaned and "\x9b" not in cleaned
    assert all(c in "\t\n" or not (ord(c) < 32 or 0x7F <= ord(c) <= 0x9F) for c in cleaned)


INVISIBLE = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u2060\ufeff"


@given(st.text(alphabet=st.characters(blacklist_categories=["Cc"], blacklist_characters=INVISIBLE)))
def test_plain_text_is_untouched(text: str) -> None:
    assert printable(text) == text


def test_trojan_source_reordering_is_shown() -> None:
    """The classic early-return attack: an override makes a comment look like code."""
    line = 'if access_level != "user\u202e \u2066// Check if admin\u2069 \u2066":'
    assert printable(line) == (
        'if access_level != "user<U+202E> <U+2066>// Check if admin<U+2069> <U+2066>":'
    )
    assert printable("zero\u200bwidth\ufeff") == "zero<U+200B>width<U+FEFF>"


def test_joiners_stay_for_emoji_and_scripts() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert printable(family) == family
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # ZWNJ inside a word
    assert printable(persian) == persian


@given(st.text())
def test_output_has_no_invisible_reordering(text: str) -> None:
    assert not any(c in INVISIBLE for c in printable(text))


ESCAPY = st.text(alphabet="\x1b\x9b\x07\\[]P_;0123456789mHab \r\n\u202e", max_size=60)


@given(ESCAPY, st.data())
def test_text_cleaned_in_pieces_is_the_text_cleaned_whole(text: str, data: st.DataObject) -> None:
    """However a reply is cut into chunks, what the screen shows of it is `printable` of the
    whole (before, an OSC cut between two chunks showed its title as text)."""
    cuts = sorted(data.draw(st.sets(st.integers(0, len(text)), max_size=12)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    cleaner = StreamCleaner()
    shown = "".join(cleaner.feed(piece) for piece in pieces) + cleaner.flush()
    assert shown == printable(text)


def test_a_title_cut_between_chunks_never_shows() -> None:
    cleaner = StreamCleaner()
    pieces = ["a ti", "tle \x1b]0;", "pwne", "d\x07 and", " more \x1b[3", "1mred"]
    shown = [cleaner.feed(piece) for piece in pieces]
    assert "pwn" not in "".join(shown)
    assert "".join(shown) + cleaner.flush() == "a title  and more red"
    assert shown[2] == ""  # held back while the sequence had not ended


def test_an_escape_that_never_ends_is_not_held_past_the_limit() -> None:
    cleaner = StreamCleaner()
    assert cleaner.feed("\x1b]0;") == ""
    assert cleaner.feed("x" * (HOLD_LIMIT + 1)) == ""  # cleaned as it is: the OSC eats it
    assert cleaner.feed("after") == "after"  # nothing held any more
