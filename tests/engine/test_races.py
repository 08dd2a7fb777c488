"""A race of real demo agents in a real repository, in process and through a service: one
prompt, three worktrees from one base, each turn's changes and the repository's approved
test compared; one kept (merged into the checkout), the others archived."""

from __future__ import annotations

from pathlib import Path

import pytest

from cockpit.api import Contender, EngineAPI, read_race, read_worktree
from tests.support.git_repos import git, make_repo
from tests.support.waiting import eventually

TEST = "test -f demo-notes.md"


async def standings_once_tested(engine: EngineAPI, race: str, count: int) -> list[Contender]:
    async def tested() -> bool:
        found = await engine.race_standings(race)
        return len(found) == count and all(c.test in ("passed", "failed") for c in found)

    await eventually(tested, 120, "every contender tested")
    return await engine.race_standings(race)


async def test_three_demo_agents_race_and_one_is_kept(engine: EngineAPI, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".cockpit.toml": f'test = "{TEST}"\n'})
    await engine.approve_command(str(repo), "test", TEST)
    made = await engine.race(["demo", "demo", "demo"], str(repo), "tools", allow=None)
    assert len(made) == 3
    entries = [read_race(record.info) for record in made]
    assert all(entry is not None for entry in entries)
    race = entries[0].id  # type: ignore[union-attr]
    assert {entry.id for entry in entries if entry} == {race}
    paths = {read_worktree(record.info).path for record in made}  # type: ignore[union-attr]
    assert len(paths) == 3
    standings = await standings_once_tested(engine, race, 3)
    assert [c.session for c in standings] == [record.id for record in made]
    for c in standings:
        assert (c.agent, c.files, c.test) == ("demo", 1, "passed"), c
        assert c.added > 0 and c.removed == 0 and c.seconds is not None and c.seconds >= 0
    assert not (repo / "demo-notes.md").exists()
    said = await engine.keep_contender(made[0].id)
    assert said[0].startswith("Committed") and said[1].startswith("Merged into main")
    assert [line.split()[0] for line in said[2:]] == ["Archived", "Archived"]
    assert (repo / "demo-notes.md").exists()
    assert git(repo, "status", "--porcelain") == ""
    after = await engine.race_standings(race)
    assert [c.worktree for c in after] == ["", "archived", "archived"]


async def test_a_refused_merge_archives_nothing(engine: EngineAPI, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    made = await engine.race(["demo", "demo"], str(repo), "tools", allow=None)
    race = read_race(made[0].info).id  # type: ignore[union-attr]

    async def ended() -> bool:
        found = await engine.race_standings(race)
        return all(c.seconds is not None for c in found)

    await eventually(ended, 120, "both turns to end")
    (repo / "README.md").write_text("the user's own edit\n")  # a dirty checkout
    with pytest.raises(ValueError, match="uncommitted"):
        await engine.keep_contender(made[0].id)
    assert [c.worktree for c in await engine.race_standings(race)] == ["", ""]
    plain = await engine.create_session("demo", repo)
    with pytest.raises(ValueError, match="in no race"):
        await engine.keep_contender(plain.id)


async def test_a_contender_still_working_is_not_kept(engine: EngineAPI, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    made = await engine.race(["demo", "demo"], str(repo), "slow", allow=None)
    await eventually(lambda: engine.status(made[0].id) == "working", 30, "the turn")
    with pytest.raises(ValueError, match="A turn runs in this session"):
        await engine.keep_contender(made[0].id)
    race = read_race(made[0].info).id  # type: ignore[union-attr]
    assert [c.worktree for c in await engine.race_standings(race)] == ["", ""]
    assert git(repo, "log", "--oneline").count("\n") == 0  # nothing merged
    for record in made:
        await engine.cancel(record.id)


async def test_an_unknown_agent_makes_no_contender(engine: EngineAPI, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with pytest.raises(KeyError):
        await engine.race(["demo", "no-such-agent"], str(repo), "tools")
    assert await engine.sessions() == []
    with pytest.raises(ValueError, match="not in a git repository"):
        await engine.race(["demo"], str(tmp_path), "tools")
