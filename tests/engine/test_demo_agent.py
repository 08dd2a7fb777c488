"""The demo agent's scenarios that need checks of their own: the benchmark reply, a
command whose output passes the terminal's limit, and the keys the tour promises."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest
from rich.text import Text

from cockpit.agentkit.demo import history
from cockpit.agentkit.demo.texts import TOUR_INTRO
from cockpit.paths import ForeignFolder
from cockpit.records import ToolCall
from cockpit.ui.app import CockpitApp
from cockpit.ui.tool_card import ToolCard
from store.workload import benchmark_reply
from tests.support.engine_helpers import allow_all, assert_live_equals_stored, open_engine, rows_of


async def test_bench_streams_the_workload_reply_whole(tmp_path: Path, project_dir: Path) -> None:
    async with open_engine(tmp_path / "home") as (engine, recorder):
        record = await engine.create_session("demo", project_dir)
        assert await engine.prompt(record.id, "bench 2000") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert [r.kind for r in rows] == ["user", "agent"]
        assert rows[1].text == benchmark_reply(2000)
        assert_live_equals_stored(recorder, record.id, rows)


async def test_a_command_past_the_output_limit_keeps_the_tail(
    tmp_path: Path, project_dir: Path
) -> None:
    async with open_engine(tmp_path / "home", auto_answer=allow_all) as (engine, recorder):
        record = await engine.create_session("demo", project_dir)
        assert await engine.prompt(record.id, "flood") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
        (tool,) = [r for r in rows if r.kind == "tool"]
        assert tool.payload is not None and tool.payload["status"] == "completed"
        (terminal_id, output), *_ = tool.payload["terminalOutput"].items()
        assert output["truncated"] is True
        assert output["exitStatus"] == {"exitCode": 0, "signal": None}
        kept = output["output"]
        assert 4000 <= len(kept.encode()) <= 4096
        assert kept.endswith("flood line 400 of 400: " + "x" * 30 + "\n")
        assert "flood line 001 " not in kept
        # The card shows the end of the output and says the start was cut.
        bubble = recorder.view(record.id).get(tool.key)
        assert bubble is not None
        card = ToolCard(bubble)
        assert isinstance(card.call, ToolCall)
        rendered = card._terminal(card.call.terminal(terminal_id))
        assert isinstance(rendered, Text)
        shown = rendered.plain
        assert shown.startswith("… earlier output not shown\n")
        assert "flood line 400 of 400" in shown and shown.endswith("[exit 0]")
        assert "terminal kept only the last 4,096 bytes" in rows[-1].text


def test_the_tour_names_the_keys_the_app_binds() -> None:
    tour = TOUR_INTRO
    keys = tour.split("## Keys", 1)[1].split("##", 1)[0]
    named = {key.lower() for key in re.findall(r"\*\*([^*]+)\*\*", keys)}
    assert {"ctrl+n", "ctrl+up", "ctrl+down", "ctrl+o", "ctrl+g", "esc", "f1"} <= named
    bound = {
        key for binding in CockpitApp.BINDINGS for key in getattr(binding, "key", "").split(",")
    }
    app_keys = named - {"enter", "esc", "1-9", "ctrl+p", "ctrl+q"}  # composer and Textual's
    assert app_keys <= bound, app_keys - bound


def test_the_demo_history_folder_under_tmp_refuses_a_planted_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run outside Cockpit, the demo agent keeps histories under the temporary folder,
    where another user can plant `cockpit-demo-UID` first: a link there is refused, and
    what it leads to is left as it was (it used to be chmodded and written in)."""
    monkeypatch.delenv("COCKPIT_DATA_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    theirs.chmod(0o755)
    (tmp_path / f"cockpit-demo-{os.getuid()}").symlink_to(theirs)
    with pytest.raises(ForeignFolder, match="link"):
        history.data_root()
    assert list(theirs.iterdir()) == []
    assert theirs.stat().st_mode & 0o777 == 0o755


def test_the_demo_history_folder_is_made_owner_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COCKPIT_DATA_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = history.data_root()
    assert folder == tmp_path / f"cockpit-demo-{os.getuid()}" / "demo-agent"
    assert folder.stat().st_mode & 0o777 == 0o700
    assert folder.parent.stat().st_mode & 0o777 == 0o700
