"""Text a user gives that is not valid Unicode: bytes that are not UTF-8 in a prompt (Python
hands them to a program in its arguments as lone surrogates, one per byte) or in a file. They
cannot be stored or sent to an agent (the run crashed, and the session's unsaved prompt then
broke every read of it), so each becomes U+FFFD, and the user is told where and how many."""

from __future__ import annotations

from store.text import clean_text

REPLACEMENT = "\ufffd"


def lone_surrogates(text: str) -> int:
    """How many lone surrogates `text` holds (each a byte that was not UTF-8, when the text
    came from the command line or a file read with `surrogateescape`)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return sum(1 for character in text if "\ud800" <= character <= "\udfff")
    return 0


def replace_undecodable(text: str) -> tuple[str, int]:
    """`text` with each lone surrogate replaced by U+FFFD, and how many were replaced."""
    count = lone_surrogates(text)
    return (clean_text(text), count) if count else (text, 0)


def decode_bytes(data: bytes) -> tuple[str, int]:
    """`data` as UTF-8 text, each byte that is not part of a valid character replaced by
    U+FFFD (one per byte, so the count is of bytes), and how many were replaced."""
    return replace_undecodable(data.decode("utf-8", "surrogateescape"))


def replaced_notice(where: str, count: int) -> str:
    """The notice row that says `where` held `count` bytes that are not UTF-8."""
    if count == 1:
        return f"{where} held 1 byte that is not UTF-8: it became {REPLACEMENT} (U+FFFD)."
    return f"{where} held {count:,} bytes that are not UTF-8: each became {REPLACEMENT} (U+FFFD)."


def prompt_words(words: list[str]) -> tuple[str, list[str]]:
    """The prompt a command line's words make, and a notice for each word that held bytes
    that are not UTF-8 (the words are numbered from 1, as the user typed them)."""
    cleaned = [replace_undecodable(word) for word in words]
    notices = [
        replaced_notice(f"Argument {number} of the prompt", count)
        for number, (_, count) in enumerate(cleaned, start=1)
        if count
    ]
    return " ".join(text for text, _ in cleaned), notices
