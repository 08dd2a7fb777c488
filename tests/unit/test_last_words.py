"""What a bridge command says on stderr under the screen (`cockpit.remote.last_words`):
split into clean lines however it arrives, in bounded memory, and read from a real
process to its end."""

from __future__ import annotations

import asyncio
import itertools

from hypothesis import given
from hypothesis import strategies as st

from cockpit.remote.last_words import LINE_LIMIT, LastWords, hear, one_line


def heard(chunks: list[bytes]) -> list[str]:
    words = LastWords()
    lines = [line for chunk in chunks for line in words.feed(chunk)]
    last = words.end()
    return [*lines, last] if last else lines


def cuts(data: bytes, points: list[int]) -> list[bytes]:
    """`data` cut at these points (in any order, repeats allowed)."""
    edges = [0, *sorted(p % (len(data) + 1) for p in points), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges)]


@given(
    st.lists(
        st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=60),
        max_size=8,
    ),
    st.lists(st.integers(0, 10_000), max_size=12),
    st.sampled_from([b"\n", b"\r\n", b"\r"]),
)
def test_lines_are_the_same_however_the_bytes_arrive(
    lines: list[str], points: list[int], end: bytes
) -> None:
    data = b"".join(line.encode() + end for line in lines)
    expected = [clean for line in lines if (clean := one_line(line.encode()))]
    assert heard(cuts(data, points)) == expected


@given(st.binary(max_size=3000), st.lists(st.integers(0, 10_000), max_size=12))
def test_memory_is_bounded_and_every_line_is_clean(data: bytes, points: list[int]) -> None:
    words = LastWords()
    for chunk in cuts(data, points):
        for line in words.feed(chunk):
            assert line and "\x1b" not in line and "\n" not in line and "\r" not in line
            assert len(line.encode()) <= 3 * LINE_LIMIT  # each byte at most one U+FFFD
        assert len(words._open) <= LINE_LIMIT


def test_a_line_longer_than_the_limit_keeps_its_end() -> None:
    words = LastWords()
    assert words.feed(b"x" * 10_000) == []
    assert words.feed(b" Connection refused\r\n") == [
        "x" * (LINE_LIMIT - len(" Connection refused")) + " Connection refused"
    ]


def test_escape_sequences_and_spaces_are_cleaned() -> None:
    words = LastWords()
    said = b"\x1b[31mssh:\x1b[0m  connect\tto host\x07 box\n\x1b]0;title\x07\n"
    assert words.feed(said) == ["ssh: connect to host box"]


async def test_a_real_command_is_heard_to_its_end() -> None:
    """ssh's lines end with CRLF; its last may have no line break at all."""
    script = (
        "printf 'Warning: Permanently added box\\r\\n' >&2;"
        " printf 'ssh: connect to host box port 22: Connection refused' >&2"
    )
    process = await asyncio.create_subprocess_exec(
        "sh", "-c", script, stderr=asyncio.subprocess.PIPE
    )
    assert process.stderr is not None
    said: list[str] = []
    await asyncio.wait_for(hear(process.stderr, said.append), 10)
    assert said == [
        "Warning: Permanently added box",
        "ssh: connect to host box port 22: Connection refused",
    ]
    assert await process.wait() == 0
