"""Text hygiene shared by the fold and the store: what makes two texts "the same"."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

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


def clean_data(value: Any) -> Any:
    """`value` (JSON data: mappings, lists, strings...) with every string in it, keys
    included, cleaned by `clean_text`. Returns `value` itself when nothing needed cleaning.

    An agent's ids and titles can carry lone surrogates as well as its text; the store binds
    them as keys and columns, which SQLite takes only as valid UTF-8.
    """
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, Mapping):
        items = [(clean_data(key), clean_data(item)) for key, item in value.items()]
        if all(
            new_key is key and new_item is item
            for (new_key, new_item), (key, item) in zip(items, value.items(), strict=True)
        ):
            return value
        return dict(items)
    if isinstance(value, list | tuple):
        cleaned = [clean_data(item) for item in value]
        if all(new is old for new, old in zip(cleaned, value, strict=True)):
            return value
        return cleaned
    return value


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
