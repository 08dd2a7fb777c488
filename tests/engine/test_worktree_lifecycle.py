"""The lifecycle of worktree sessions against real git repositories, in the engine's own
process and through a service: an archive keeps the branch, the uncommitted work (binary
and untracked files too) and the ignored files, stops what ran in the worktree, and a
restore brings it all back; the cleanup sees merged branches (squash merges too), refuses
unmerged work without force, and takes Cockpit's refs with their session; a worktree
deleted by hand is missing and restores from its branch."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from cockpit.api import EngineAPI, WorktreeRequest, read_worktree
from tests.support.git_repos import commit, git, make_repo
from tests.support.ui_service_helpers import Engines
from tests.support.waiting import eventually

BINARY = bytes(range(256)) * 4


def processes_in(folder: Path) -> list[int]:
    """The processes whose working folder is `folder` (or lies in it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            where = os.readlink(entry / "cwd").removesuffix(" (deleted)")
        except OSError:
            continue
        if Path(where).is_relative_to(folder):
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def worktree_session(engine: EngineAPI, repo: Path, title: str = "Work") -> tuple[str, Path]:
    record = await engine.create_session("demo", repo, title, worktree=WorktreeRequest())
    return record.id, Path(record.cwd)


async def test_archive_keeps_the_work_and_restore_brings_it_back(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n", ".gitignore": ".env\nbuild/\n"})
    engine = await engines.factory()()
    try:
        session, path = await worktree_session(engine, repo)
        branch = git(path, "branch", "--show-current")
        commit(path, {"done.txt": "committed\n"}, "the agent's commit")
        (path / "a.txt").write_text("one, edited\n")
        (path / "new").mkdir()
        (path / "new" / "untracked.txt").write_text("untracked\n")
        (path / "picture.bin").write_bytes(BINARY)
        (path / ".env").write_text("TOKEN=kept\n")
        (path / "build").mkdir()
        (path / "build" / "output.o").write_bytes(b"made again by a build")
        said = await engine.archive_worktree(session)
        assert "uncommitted changes" in said and ".env" in said and branch in said
        assert not path.exists()
        assert git(repo, "branch", "--list", branch)  # the branch stays
        assert git(repo, "status", "--porcelain") == ""  # the checkout is untouched
        kept = engines.home / "worktree-archives" / session
        assert stat.S_IMODE(kept.stat().st_mode) == 0o700
        assert stat.S_IMODE((kept / "changes.patch").stat().st_mode) == 0o600
        (listed,) = await engine.worktrees()
        assert listed.archived
        (item,) = await engine.cleanup_plan()
        assert item.archived and not item.missing and not item.merged
        assert "uncommitted work kept by its archive" in item.unmerged
        with pytest.raises(ValueError, match="archived: restore its worktree first"):
            await engine.prompt(session, "hello")
        with pytest.raises(ValueError, match="archived already"):
            await engine.archive_worktree(session)
        said = await engine.restore_worktree(session)
        assert "uncommitted changes are back" in said
        assert (path / "a.txt").read_text() == "one, edited\n"
        assert (path / "new" / "untracked.txt").read_text() == "untracked\n"
        assert (path / "picture.bin").read_bytes() == BINARY
        assert (path / "done.txt").read_text() == "committed\n"
        assert (path / ".env").read_text() == "TOKEN=kept\n"  # a restore that keeps .env
        assert not (path / "build").exists()  # an ignored folder is made again by a build
        assert git(path, "branch", "--show-current") == branch
        assert not kept.exists()
        (listed,) = await engine.worktrees()
        assert not listed.archived and not listed.status.missing
        assert await engine.prompt(session, "hello") == "end_turn"  # it works again
    finally:
        await engine.close()


async def test_archive_stops_the_agent_and_the_users_commands(
    engines: Engines, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHELL", "/bin/sh")
    repo = make_repo(tmp_path / "repo")
    engine = await engines.factory()()
    try:
        session, path = await worktree_session(engine, repo)
        await engine.start(session)
        await engine.run_shell(session, "sleep 60")
        await eventually(lambda: len(processes_in(path)) >= 2, 10, "the agent and the sleep")
        running = processes_in(path)
        said = await engine.archive_worktree(session)
        assert "stopped its agent and your commands" in said
        await eventually(lambda: not any(alive(pid) for pid in running), 10, "all to stop")
        assert not path.exists()
    finally:
        await engine.close()


async def test_cleanup_refuses_unmerged_work_without_force(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    engine = await engines.factory()()
    try:
        committed, committed_path = await worktree_session(engine, repo, "Committed")
        commit(committed_path, {"work.txt": "work\n"}, "work not merged")
        dirty, dirty_path = await worktree_session(engine, repo, "Dirty")
        (dirty_path / "scratch.txt").write_text("untracked\n")
        plan = {item.session: item for item in await engine.cleanup_plan()}
        assert plan[committed].unmerged == ("1 commit not in main",)
        assert plan[dirty].merged and plan[dirty].unmerged == ("1 uncommitted file",)
        assert plan[dirty].size > 0 and plan[dirty].last_activity > 0
        assert await engine.cleanup_plan(merged_only=True) == []
        said = await engine.clean_worktrees([committed, dirty, "nobody"])
        assert said[0].startswith(f"Kept {git(committed_path, 'branch', '--show-current')}")
        assert "1 uncommitted file" in said[1] and "--force" in said[1]
        assert "no such session" in said[2]
        assert committed_path.exists() and dirty_path.exists()
        branch = git(dirty_path, "branch", "--show-current")
        said = await engine.clean_worktrees([dirty], force=True)
        assert said == [f"Removed {dirty}: the worktree {dirty_path}, the branch {branch}."]
        assert not dirty_path.exists() and not git(repo, "branch", "--list", branch)
        assert [item.session for item in await engine.cleanup_plan()] == [committed]
        with pytest.raises(ValueError, match="removed by a cleanup"):
            await engine.prompt(dirty, "hello")
    finally:
        await engine.close()


async def test_merged_and_squash_merged_branches_are_seen_as_merged(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    engine = await engines.factory()()
    try:
        merged, merged_path = await worktree_session(engine, repo, "Merged")
        commit(merged_path, {"m.txt": "merged\n"}, "to merge")
        squashed, squashed_path = await worktree_session(engine, repo, "Squashed")
        commit(squashed_path, {"s.txt": "first\n"}, "one step")
        commit(squashed_path, {"s.txt": "second\n", "t.txt": "more\n"}, "two steps")
        other, other_path = await worktree_session(engine, repo, "Other")
        commit(other_path, {"o.txt": "other\n"}, "not merged")
        commit(repo, {"a.txt": "main moved on\n"}, "main's own work")
        git(repo, "merge", "-q", "--no-edit", git(merged_path, "branch", "--show-current"))
        git(repo, "merge", "-q", "--squash", git(squashed_path, "branch", "--show-current"))
        git(repo, "commit", "-q", "-m", "squashed")
        commit(repo, {"later.txt": "later\n"}, "after the squash")
        plan = {item.session: item for item in await engine.cleanup_plan()}
        assert plan[merged].merged and plan[merged].unmerged == ()
        assert plan[squashed].merged and plan[squashed].unmerged == ()
        assert not plan[other].merged and plan[other].unmerged == ("1 commit not in main",)
        only = await engine.cleanup_plan(merged_only=True)
        assert {item.session for item in only} == {merged, squashed}
        said = await engine.clean_worktrees([merged, squashed])
        assert all(line.startswith("Removed") for line in said)
        assert not merged_path.exists() and not squashed_path.exists() and other_path.exists()
    finally:
        await engine.close()


async def test_cockpits_refs_go_with_their_session(engines: Engines, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    engine = await engines.factory()()
    try:
        session, path = await worktree_session(engine, repo)
        other, _ = await worktree_session(engine, repo, "Other")
        head = git(path, "rev-parse", "HEAD")
        for name in (f"refs/cockpit/{session}/turn-1", f"refs/cockpit/{session}/turn-2"):
            git(repo, "update-ref", name, head)
        git(repo, "update-ref", f"refs/cockpit/{other}/turn-1", head)
        (said,) = await engine.clean_worktrees([session])
        assert "2 refs of Cockpit's" in said
        left = git(repo, "for-each-ref", "--format=%(refname)", "refs/cockpit")
        assert left == f"refs/cockpit/{other}/turn-1"
    finally:
        await engine.close()


async def test_a_worktree_deleted_by_hand_is_missing_and_restores_from_its_branch(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    engine = await engines.factory()()
    try:
        session, path = await worktree_session(engine, repo)
        commit(path, {"kept.txt": "committed\n"}, "committed work")
        shutil.rmtree(path)
        (item,) = await engine.cleanup_plan()
        assert item.missing and not item.archived and item.unmerged == ("1 commit not in main",)
        with pytest.raises(ValueError, match="missing"):
            await engine.archive_worktree(session)
        said = await engine.restore_worktree(session)
        assert said.startswith(f"Restored {session}")
        assert (path / "kept.txt").read_text() == "committed\n"
        with pytest.raises(ValueError, match="nothing to restore"):
            await engine.restore_worktree(session)
        record = await engine.session(session)
        assert read_worktree(record.info) is not None
    finally:
        await engine.close()
