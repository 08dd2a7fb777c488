"""Text hygiene shared by the fold and the store: what makes two texts "the same"."""

from __future__ import annotations

import re

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """Return `text` with lone surrogates replaced by U+FFFD.

    JSON may carry `\\ud800` escapes and bytes decoded with `surrogateescape` carry
    `\\udc80`-style code points; neither can be stored as UTF-8. Everything else,
    NUL bytes and escape sequences included, is kept as sent: hiding them is the
    display's job, the store keeps what the agent said.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text)
    return text


def normalise_ws(text: str) -> str:
    """Collapse every run of whitespace to one space and strip both ends."""
    return " ".join(text.split())


def solid_len(text: str) -> int:
    """Count the characters of `text` that are not whitespace.

    Two texts that differ only in whitespace have equal solid lengths, so comparing
    this number first rejects almost every candidate re-send without normalising a
    long held text.
    """
    return sum(map(len, text.split()))


def utf8_len(text: str) -> int:
    """Size of `text` in UTF-8 bytes, the unit of the page byte budget."""
    return len(text.encode("utf-8"))
