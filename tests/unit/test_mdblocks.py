"""The block splitter behind streamed Markdown: lossless, chunking-independent, and it never
seals a block that could still change."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cockpit.ui.mdblocks import BlockSplitter, split_blocks
from store.workload import benchmark_reply

LINES = st.sampled_from(
    [
        "",
        " ",
        "Text here.",
        "  indented",
        "- item",
        "1. first",
        "| a | b |",
        "|---|---|",
        "```python",
        "```",
        "~~~",
        "    code",
        "# Heading",
        "> quote",
    ]
)


@st.composite
def documents(draw: st.DrawFn) -> str:
    return "\n".join(draw(st.lists(LINES, max_size=40))) + draw(st.sampled_from(["", "\n", "\n\n"]))


@given(documents(), st.lists(st.integers(min_value=1, max_value=7), max_size=200))
def test_any_chunking_gives_the_same_blocks_and_loses_nothing(text: str, steps: list[int]) -> None:
    splitter = BlockSplitter()
    sealed: list[str] = []
    index = 0
    for step in steps:
        sealed += splitter.feed(text[index : index + step])
        index += step
    sealed += splitter.feed(text[index:])
    assert "".join(sealed) + splitter.tail == text
    assert (sealed, splitter.tail) == split_blocks(text)


@given(documents(), documents())
def test_a_sealed_block_is_final_whatever_follows(text: str, more: str) -> None:
    sealed, _ = split_blocks(text)
    longer, _ = split_blocks(text + more)
    assert longer[: len(sealed)] == sealed


def test_blocks_end_at_a_blank_line_before_an_unindented_line() -> None:
    text = "# Title\n\nPara one\nstill one\n\n- a\n- b\n\n  more of b\n\nLast"
    sealed, tail = split_blocks(text)
    assert sealed == ["# Title\n\n", "Para one\nstill one\n\n"]  # "Last" may still become anything
    assert tail == "- a\n- b\n\n  more of b\n\nLast"
    sealed, tail = split_blocks(text + "\n")
    assert sealed[-1] == "- a\n- b\n\n  more of b\n\n"
    assert tail == "Last\n"


def test_blank_lines_inside_a_code_fence_do_not_split() -> None:
    text = "```python\na = 1\n\nb = 2\n```\n\nafter\n"
    sealed, tail = split_blocks(text)
    assert sealed == ["```python\na = 1\n\nb = 2\n```\n\n"]
    assert tail == "after\n"


def test_the_benchmark_reply_splits_into_many_blocks() -> None:
    sealed, tail = split_blocks(benchmark_reply())
    assert len(sealed) > 50
    assert tail.endswith("<<< END OF THE BENCHMARK REPLY >>>\n")
