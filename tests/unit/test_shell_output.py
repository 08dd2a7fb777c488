"""The rules of what a command the user ran keeps of its output: head and tail within the
bound, secret values masked (never a piece of one left at a cut), and the text that
carries it to the agent."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from cockpit.engine.shell_output import (
    LEFT_OUT,
    ShellOutput,
    attachment_text,
    head_and_tail,
    mask,
    secret_values,
)

SECRETS = {"GITHUB_TOKEN": "ghp_abcdef123456", "DB_PASSWORD": "hunter2-hunter2"}


def test_only_secret_named_variables_of_some_length_are_masked() -> None:
    assert secret_values(
        {"GITHUB_TOKEN": "ghp_abcdef123456", "HOME": "/home/u", "DEBUG_TOKEN": "1", "PATH": "x"}
    ) == {"GITHUB_TOKEN": "ghp_abcdef123456"}


def test_mask_names_the_variable() -> None:
    text = "token=ghp_abcdef123456 pw=hunter2-hunter2."
    assert mask(text, SECRETS) == "token=[masked GITHUB_TOKEN] pw=[masked DB_PASSWORD]."


def test_the_longest_value_is_masked_first() -> None:
    secrets = {"A_TOKEN": "abcdefgh", "B_TOKEN": "abcdefgh-and-more"}
    assert mask("abcdefgh-and-more abcdefgh", secrets) == "[masked B_TOKEN] [masked A_TOKEN]"


def test_short_output_is_kept_whole() -> None:
    output = ShellOutput({}, head=10, tail=10)
    output.add(b"hello\n")
    output.add(b"world\n", final=True)
    assert output.shown() == ("hello\nworld\n", 0)


def test_long_output_keeps_head_and_tail_and_counts_the_rest() -> None:
    output = ShellOutput({}, head=4, tail=4)
    output.add(b"0123456789abcdef", final=True)
    assert output.shown() == ("0123" + LEFT_OUT.format(count=8) + "cdef", 8)


def test_a_character_split_between_writes_is_whole() -> None:
    output = ShellOutput({})
    data = "é€".encode()
    for byte in data:
        output.add(bytes([byte]))
    output.add(b"", final=True)
    assert output.shown() == ("é€", 0)


FILLER = b"\x00 \n.,;:!"
"""Output around the secrets, of no character any secret has: whatever of a secret shows
in what is kept is a leak."""

pieces = st.lists(
    st.binary(max_size=30).map(lambda data: bytes(FILLER[b % len(FILLER)] for b in data))
    | st.sampled_from([b"ghp_abcdef123456", b"hunter2-hunter2", b"hunter2-hunter2-hunter2"]),
)
"""What a command writes: filler, and whole secrets (overlapping ones too)."""


@given(pieces, st.integers(1, 30), st.integers(1, 30))
def test_no_secret_and_no_piece_of_one_is_ever_shown(
    writes: list[bytes], head: int, tail: int
) -> None:
    output = ShellOutput(SECRETS, head=head, tail=tail)
    for data in writes:
        output.add(data)
    output.add(b"", final=True)
    shown, left_out = output.shown()
    bare = re.sub(r"\[masked [A-Z_]+\]", "", shown).replace(LEFT_OUT.format(count=left_out), "")
    leaked = set(bare) & set("".join(SECRETS.values()))
    assert not leaked, (shown, leaked)
    whole = b"".join(writes).decode()
    if left_out == 0:
        assert shown == mask(whole, SECRETS)
    assert output.total == len(whole)


def test_overlapping_secrets_are_masked_as_one_stretch() -> None:
    assert mask("x hunter2-hunter2-hunter2 y", SECRETS) == "x [masked DB_PASSWORD] y"


@given(st.text(max_size=200), st.integers(0, 50), st.integers(0, 50))
def test_head_and_tail_keeps_both_ends(text: str, head: int, tail: int) -> None:
    shown, left_out = head_and_tail(text, head, tail)
    if len(text) <= head + tail:
        assert (shown, left_out) == (text, 0)
    else:
        assert left_out == len(text) - head - tail
        assert shown.startswith(text[:head]) and shown.endswith(text[len(text) - tail :])


@given(st.text(max_size=300), st.text(min_size=1, max_size=40))
def test_the_attachment_fence_cannot_be_closed_by_the_output(output: str, command: str) -> None:
    text = attachment_text(command, output, "exit 0")
    lines = text.split("\n")
    fence = lines[1]
    assert set(fence) == {"`"} and len(fence) >= 3 and lines[-1] == fence
    inner = "\n".join(lines[2:-1])
    assert fence not in inner
    assert f"$ {command}" in text and "(exit 0)" in lines[0]
