"""Alt+letter (ESC, then the letter) spelled out before Textual's parser reads it, so that a
burst (Alt+W then Down in one read) is read as typed; sequences and pastes left whole."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cockpit.compat.textual_private import spell_out_alt_keys
from cockpit.text.alt_keys import PASTE_END, PASTE_START, alt_keys_spelled_out


def test_an_alt_letter_is_spelled_out_and_sequences_are_left() -> None:
    assert alt_keys_spelled_out("\x1bw\x1b[B") == ("\x1b[119;3u\x1b[B", False)
    assert alt_keys_spelled_out("\x1bW") == ("\x1b[87;3u", False)
    for sequence in ("\x1b[A", "\x1bOP", "\x1b]11;?\x07", "\x1bP>|x\x1b\\", "\x1b\x1b[B"):
        assert alt_keys_spelled_out(sequence) == (sequence, False)


def test_a_paste_is_left_as_pasted_across_reads() -> None:
    spelled, pasting = alt_keys_spelled_out(f"\x1bw{PASTE_START}a\x1bwb")
    assert (spelled, pasting) == (f"\x1b[119;3u{PASTE_START}a\x1bwb", True)
    spelled, pasting = alt_keys_spelled_out(f"c\x1bx{PASTE_END}\x1bq", pasting)
    assert (spelled, pasting) == (f"c\x1bx{PASTE_END}\x1b[113;3u", False)


@given(st.text(st.characters(blacklist_characters="\x1b")))
def test_text_without_an_escape_is_never_changed(text: str) -> None:
    assert alt_keys_spelled_out(text) == (text, False)


@given(st.text(st.sampled_from(["\x1b", "[", "w", "B", "2", "0", "~", "1", ";", "u"])))
def test_only_escape_letter_pairs_change(text: str) -> None:
    """Taking each spelled-out Alt key back gives the text read (outside a paste)."""
    spelled, _ = alt_keys_spelled_out(text)
    if PASTE_START not in text:
        back = spelled
        for code in range(0x20, 0x7F):
            back = back.replace(f"\x1b[{code};3u", f"\x1b{chr(code)}")
        assert back == text


def test_textual_s_driver_reads_alt_w_then_down_in_one_read() -> None:
    from textual.drivers import linux_driver

    spell_out_alt_keys()
    spell_out_alt_keys()  # once is enough
    parser = linux_driver.XTermParser()  # type: ignore[attr-defined]
    keys = [getattr(event, "key", None) for event in parser.feed("\x1bw\x1b[Bx")]
    assert keys == ["alt+w", "down", "x"]
