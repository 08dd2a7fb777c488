"""A finished Markdown block renders once per console and width: the cached lines are the
lines a fresh rendering gives, a streaming reply's open tail is never kept, and a bubble
mounted again (a session switched back to) renders nothing anew."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from textual.strip import Strip

import cockpit.ui.markdown_lines as markdown_lines
from cockpit.engine.core import Engine
from cockpit.ui.bubbles import AgentBubble
from cockpit.ui.markdown_lines import LONGEST_KEPT, finished_markdown, render_markdown
from cockpit.ui.transcript import TranscriptView
from store import Bubble
from tests.support.ui_helpers import add_session, fill, make_app, wait_until

BLOCKS = st.sampled_from(
    [
        "# A heading",
        "Some *emphasis* and `code` in a paragraph that is long enough to wrap somewhere.",
        "- one\n- two\n  - nested",
        "```python\nprint('hello')\n```",
        "| a | b |\n|---|---|\n| 1 | 2 |",
        "> a quote",
    ]
)


class Renders:
    """Counts the renderings that reach Rich."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        render = markdown_lines.render_markdown

        def counted(console: Console, markdown: str, width: int) -> list[Strip]:
            self.count += 1
            return render(console, markdown, width)

        monkeypatch.setattr(markdown_lines, "render_markdown", counted)


def texts(lines: list[Strip]) -> list[str]:
    return [line.text.rstrip() for line in lines]


@given(block=BLOCKS, width=st.integers(min_value=10, max_value=120))
def test_kept_lines_are_the_lines_a_fresh_rendering_gives(block: str, width: int) -> None:
    console = Console(width=200)
    fresh = render_markdown(console, block, width)
    assert finished_markdown(console, block, width) == fresh  # rendered, then kept
    assert finished_markdown(console, block, width) == fresh  # from the cache


def test_a_block_renders_once_per_console_and_width(monkeypatch: pytest.MonkeyPatch) -> None:
    renders = Renders(monkeypatch)
    console, other = Console(width=200), Console(width=200)
    for _ in range(3):
        finished_markdown(console, "# Title\n\nwords", 40)
    assert renders.count == 1
    finished_markdown(console, "# Title\n\nwords", 60)  # another width
    finished_markdown(other, "# Title\n\nwords", 40)  # another app's console
    assert renders.count == 3


def test_the_callers_copy_is_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    console = Console(width=200)
    first = finished_markdown(console, "a paragraph", 30)
    first.clear()
    assert texts(finished_markdown(console, "a paragraph", 30)) == ["a paragraph"]


def test_a_block_longer_than_the_limit_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    renders = Renders(monkeypatch)
    console = Console(width=200)
    huge = "\n".join(f"- item {n}" for n in range(LONGEST_KEPT + 1))
    finished_markdown(console, huge, 40)
    finished_markdown(console, huge, 40)
    assert renders.count == 2


async def test_a_session_shown_again_renders_none_of_its_replies_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    reply = "First paragraph of the answer.\n\n```python\nprint('x')\n```\n\nThe end."

    async def build(engine: Engine) -> None:
        for name in ("one", "two"):
            await add_session(engine, project, name, [("question", reply)] * 3)

    await fill(tmp_path / "home", build)
    renders = Renders(monkeypatch)
    app = make_app(tmp_path, project)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(TranscriptView)
        await wait_until(lambda: len(app.query(AgentBubble)) == 3, what="the first session")
        first = view.session
        await pilot.press("ctrl+down")
        await wait_until(lambda: view.session not in (None, first), what="the second session")
        await wait_until(lambda: len(app.query(AgentBubble)) == 3, what="its replies")
        await pilot.pause()
        after_both = renders.count
        assert after_both > 0
        await pilot.press("ctrl+up")
        await wait_until(lambda: view.session == first, what="the first session again")
        await wait_until(lambda: len(app.query(AgentBubble)) == 3, what="its replies again")
        await pilot.pause()
        assert renders.count == after_both


async def test_a_streaming_reply_keeps_only_its_sealed_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept: list[str] = []
    finished = markdown_lines.finished_markdown

    def noted(console: Console, markdown: str, width: int) -> list[Strip]:
        kept.append(markdown)
        return finished(console, markdown, width)

    monkeypatch.setattr("cockpit.ui.bubbles.finished_markdown", noted)
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)):
        bubble = AgentBubble(Bubble(key="k", seq=1, kind="agent", turn=1, text=""), live=True)
        await app.screen.mount(bubble)
        await bubble.append("first block\n\nsecond bl")
        bubble.lines(40)
        assert kept == []  # nothing sealed yet; the open tail is rendered, not kept
        await bubble.append("ock\n\nthe third, still open")
        bubble.lines(40)
        assert set(kept) == {"first block"}  # sealed by the line after it
        await bubble.finish()
        bubble.lines(40)
        assert set(kept) == {"first block", "second block\n\nthe third, still open"}
