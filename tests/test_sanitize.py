"""Escape sequences from agents never reach a terminal raw."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cockpit.sanitize import printable


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


@given(st.text(alphabet=st.characters(blacklist_categories=["Cc"])))
def test_plain_text_is_untouched(text: str) -> None:
    assert printable(text) == text
