"""A worktree session's work reviewed and brought home, against real git repositories and
real agents, in the engine's own process and through a service: the changes it made
(committed, staged, unstaged, untracked; never ignored), a commit, a merge that
fast-forwards and one that makes a merge commit, a conflict that changes nothing, merges
refused into a dirty checkout or another branch, a discard that keeps ignored files and
is undone, a push to a bare remote, and review comments reaching the agent as one prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from cockpit.api import EngineAPI, SessionRecord, Status, WorktreeRequest, read_worktree
from cockpit.text.review import ReviewComment, review_prompt
from tests.support.git_repos import commit, git, make_repo
from tests.support.ui_service_helpers import Engines
from tests.support.waiting import eventually


async def worktree_session(engine: EngineAPI, repo: Path) -> SessionRecord:
    record = await engine.create_session("demo", repo, "Review me", worktree=WorktreeRequest())
    engine.allow_automatically(record.id)
    return record


def checkout_state(repo: Path) -> tuple[str, str, str]:
    """What the user's checkout is: its status, its HEAD, its branch."""
    return (
        git(repo, "status", "--porcelain", "--untracked-files=all"),
        git(repo, "rev-parse", "HEAD"),
        git(repo, "branch", "--show-current"),
    )


async def test_the_changes_list_committed_staged_unstaged_and_untracked_files(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {"README.md": "# A project\n", "gone.txt": "bye\n", ".gitignore": ".env\n"},
    )
    engine = await engines.factory()()
    try:
        record = await worktree_session(engine, repo)
        path = Path(record.cwd)
        assert await engine.worktree_changes(record.id) == []
        assert await engine.prompt(record.id, "tools") == "end_turn"  # demo-notes.md, untracked
        commit(path, {"src/app.py": "print('hi')\n"}, "committed on the branch")
        (path / "README.md").write_text("# A project\n\nEdited.\n")  # unstaged
        (path / "staged.txt").write_text("staged\n")
        git(path, "add", "staged.txt")
        (path / "gone.txt").unlink()
        (path / "picture.bin").write_bytes(b"\x89PNG\0\0\x01")
        (path / ".env").write_text("SECRET=1\n")  # ignored: never a change
        commit(repo, {"later.txt": "the base moved on\n"}, "not the session's")
        found = {change.path: change for change in await engine.worktree_changes(record.id)}
        assert set(found) == {
            "README.md", "demo-notes.md", "gone.txt", "picture.bin", "src/app.py", "staged.txt",
        }  # fmt: skip
        assert found["README.md"].status == "modified"
        assert found["README.md"].old_text == "# A project\n"
        assert found["README.md"].new_text == "# A project\n\nEdited.\n"
        assert found["src/app.py"].status == "added" and found["src/app.py"].old_text is None
        assert found["staged.txt"].new_text == "staged\n"
        assert found["gone.txt"].status == "deleted" and found["gone.txt"].old_text == "bye\n"
        assert found["demo-notes.md"].status == "added" and found["demo-notes.md"].new_text
        binary = found["picture.bin"]
        assert binary.binary and not binary.readable and binary.new_text is None
        plain = await engine.create_session("demo", repo)
        with pytest.raises(ValueError, match="no worktree"):
            await engine.worktree_changes(plain.id)
    finally:
        await engine.close()


async def test_commit_takes_everything_in_the_worktree(engines: Engines, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "one\n", ".gitignore": ".env\n"})
    engine = await engines.factory()()
    try:
        record = await worktree_session(engine, repo)
        path = Path(record.cwd)
        with pytest.raises(ValueError, match="Nothing to commit"):
            await engine.commit_worktree(record.id, "nothing")
        assert await engine.prompt(record.id, "tools") == "end_turn"
        (path / "README.md").write_text("two\n")
        (path / ".env").write_text("SECRET=1\n")
        with pytest.raises(ValueError, match="needs a message"):
            await engine.commit_worktree(record.id, "  ")
        said = await engine.commit_worktree(record.id, "Write the notes\n\nAnd the readme.")
        assert said.startswith(f"Committed on cockpit/review-me-{record.id}: ")
        assert said.endswith("Write the notes")
        assert git(path, "status", "--porcelain") == ""
        assert git(path, "log", "-1", "--format=%B") == "Write the notes\n\nAnd the readme."
        assert set(git(path, "show", "--name-only", "--format=", "HEAD").split()) == {
            "README.md", "demo-notes.md",
        }  # fmt: skip
        assert (path / ".env").exists()  # ignored: left alone, never committed
        assert [c.path for c in await engine.worktree_changes(record.id)] == [
            "README.md", "demo-notes.md",
        ]  # fmt: skip
        assert checkout_state(repo)[0] == ""  # the user's checkout never saw any of it
    finally:
        await engine.close()


async def test_a_merge_fast_forwards_when_the_base_stayed(engines: Engines, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    engine = await engines.factory()()
    try:
        record = await worktree_session(engine, repo)
        path = Path(record.cwd)
        assert await engine.prompt(record.id, "tools") == "end_turn"
        left = await engine.merge_worktree(record.id)
        assert not left.merged and left.refusal and "uncommitted" in left.refusal
        await engine.commit_worktree(record.id, "Notes")
        plan = await engine.merge_worktree(record.id, dry_run=True)
        assert (plan.merged, plan.how, plan.target, plan.refusal) == (
            False, "fast-forward", "main", None,
        )  # fmt: skip
        assert checkout_state(repo)[1] != git(path, "rev-parse", "HEAD")
        done = await engine.merge_worktree(record.id, fast_forward_only=True)
        assert (done.merged, done.how, done.target) == (True, "fast-forward", "main")
        assert done.commit == git(repo, "rev-parse", "HEAD") == git(path, "rev-parse", "HEAD")
        assert (repo / "demo-notes.md").exists()
        again = await engine.merge_worktree(record.id)
        assert not again.merged and again.refusal and "already holds" in again.refusal
    finally:
        await engine.close()


async def test_a_merge_makes_a_merge_commit_when_the_base_moved_on(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    engine = await engines.factory()()
    try:
        record = await worktree_session(engine, repo)
        path = Path(record.cwd)
        commit(path, {"mine.txt": "the session's\n"}, "the session's work")
        moved = commit(repo, {"theirs.txt": "the user's\n"}, "the user's work")
        refused = await engine.merge_worktree(record.id, fast_forward_only=True)
        assert not refused.merged and refused.refusal and "fast-forwarded" in refused.refusal
        assert git(repo, "rev-parse", "HEAD") == moved
        done = await engine.merge_worktree(record.id)
        assert (done.merged, done.how) == (True, "merge commit")
        parents = git(repo, "log", "-1", "--format=%P").split()
        assert parents == [moved, git(path, "rev-parse", "HEAD")]
        assert (repo / "mine.txt").read_text() == "the session's\n"
        assert git(repo, "status", "--porcelain") == ""
        assert f"Merge branch 'cockpit/review-me-{record.id}' into main" in git(
            repo, "log", "-1", "--format=%s"
        )
    finally:
        await engine.close()


async def test_a_conflict_is_shown_and_nothing_is_half_applied(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n", "b.txt": "two\n"})
    engine = await engines.factory()()
    try:
        record = await worktree_session(engine, repo)
        path = Path(record.cwd)
        commit(path, {"a.txt": "the session's one\n", "b.txt": "the session's two\n"}, "both")
        commit(repo, {"a.txt": "the user's one\n"}, "a clash")
        before = checkout_state(repo)
        result = await engine.merge_worktree(record.id)
        assert not result.merged and result.conflicts == ("a.txt",)
        assert result.refusal and "nothing was changed" in result.refusal
        assert checkout_state(repo) == before
        assert not (repo / ".git" / "MERGE_HEAD").exists()
        assert (repo / "b.txt").read_text() == "two\n"
    finally:
        await engine.close()


async def test_a_merge_is_refused_into_a_dirty_checkout_or_another_branch(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    engine = await engines.factory()()
    try:
        record = await worktree_session(engine, repo)
        commit(Path(record.cwd), {"b.txt": "new\n"}, "the session's work")
        (repo / "a.txt").write_text("the user's edit, not committed\n")
        before = checkout_state(repo)
        dirty = await engine.merge_worktree(record.id)
        assert not dirty.merged and dirty.refusal and "uncommitted changes" in dirty.refusal
        assert checkout_state(repo) == before
        assert (repo / "a.txt").read_text() == "the user's edit, not committed\n"
        git(repo, "checkout", "-q", "a.txt")
        git(repo, "checkout", "-q", "-b", "elsewhere")
        before = checkout_state(repo)
        other = await engine.merge_worktree(record.id)
        assert not other.merged and other.refusal
        assert "must have main checked out" in other.refusal and "elsewhere" in other.refusal
        assert checkout_state(repo) == before
        assert git(repo, "rev-parse", "main") == git(repo, "rev-parse", "elsewhere")
    finally:
        await engine.close()


async def test_discard_keeps_ignored_files_and_can_be_undone(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n", ".gitignore": ".env\n"})
    engine = await engines.factory()()
    try:
        record = await worktree_session(engine, repo)
        worktree = read_worktree(record.info)
        assert worktree is not None
        path = Path(record.cwd)
        (path / ".env").write_text("SECRET=1\n")
        commit(path, {"b.txt": "committed\n"}, "the session's commit")
        head = git(path, "rev-parse", "HEAD")
        assert await engine.prompt(record.id, "tools") == "end_turn"  # untracked notes
        (path / "a.txt").write_text("edited\n")
        index_before = git(path, "ls-files", "--stage")
        said = await engine.discard_worktree(record.id)
        assert f"refs/cockpit/{record.id}/discard-1" in said and "--undo" in said
        assert git(path, "rev-parse", "HEAD") == worktree.base_commit
        assert git(path, "status", "--porcelain") == ""
        assert not (path / "b.txt").exists() and not (path / "demo-notes.md").exists()
        assert (path / "a.txt").read_text() == "one\n"
        assert (path / ".env").read_text() == "SECRET=1\n"  # ignored: kept
        assert git(path, "rev-parse", f"refs/cockpit/{record.id}/discard-1^") == head
        assert await engine.worktree_changes(record.id) == []
        said = await engine.undo_discard(record.id)
        assert "undone" in said
        assert git(path, "rev-parse", "HEAD") == head
        assert git(path, "ls-files", "--stage") == index_before
        assert (path / "b.txt").read_text() == "committed\n"
        assert (path / "a.txt").read_text() == "edited\n"
        assert (path / "demo-notes.md").exists() and (path / ".env").exists()
        # the discard's ref is gone (the checkpoints of the turn stay)
        assert git(path, "for-each-ref", f"refs/cockpit/{record.id}/discard-*") == ""
        with pytest.raises(ValueError, match="no discard"):
            await engine.undo_discard(record.id)
    finally:
        await engine.close()


async def test_push_goes_to_a_bare_remote_and_a_missing_one_is_a_sentence(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    engine = await engines.factory()()
    try:
        record = await worktree_session(engine, repo)
        path = Path(record.cwd)
        commit(path, {"b.txt": "new\n"}, "work")
        with pytest.raises(ValueError, match="no remote 'origin'"):
            await engine.push_worktree(record.id)
        bare = tmp_path / "remote.git"
        git(tmp_path, "init", "-q", "--bare", str(bare))
        git(repo, "remote", "add", "origin", str(bare))
        branch = f"cockpit/review-me-{record.id}"
        said = await engine.push_worktree(record.id)
        assert said == f"Pushed {branch} to origin, which it now tracks."
        assert git(bare, "rev-parse", branch) == git(path, "rev-parse", "HEAD")
        assert git(path, "rev-parse", "--abbrev-ref", "@{upstream}") == f"origin/{branch}"
    finally:
        await engine.close()


async def test_review_comments_reach_the_agent_as_one_prompt(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    engine = await engines.factory()()
    try:
        record = await worktree_session(engine, repo)
        assert await engine.prompt(record.id, "tools") == "end_turn"
        (change,) = await engine.worktree_changes(record.id)
        assert change.new_text is not None
        first = change.new_text.splitlines()[0]
        prompt = review_prompt(
            [
                ReviewComment(change.path, 1, 1, "Say what the notes are for.", first),
                ReviewComment(change.path, 2, 4, "Too long.", "whatever"),
            ]
        )
        assert await engine.prompt(record.id, prompt) == "end_turn"
        users = [row for row in await engine.rows(record.id) if row.kind == "user"]
        assert users[-1].text == prompt
        assert users[-1].text.startswith("review:\n- demo-notes.md:1: Say what the notes are")
        assert len(users) == 2
    finally:
        await engine.close()


async def test_commit_and_discard_are_refused_while_a_turn_runs(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    engine = await engines.factory()()
    try:
        record = await worktree_session(engine, repo)
        (Path(record.cwd) / "notes.txt").write_text("mine\n")
        engine.send(record.id, "slow")
        await eventually(lambda: engine.status(record.id) == Status.WORKING)
        with pytest.raises(ValueError, match="A turn runs in this session"):
            await engine.commit_worktree(record.id, "too soon")
        with pytest.raises(ValueError, match="A turn runs in this session"):
            await engine.discard_worktree(record.id)
        assert (Path(record.cwd) / "notes.txt").exists()
        await engine.cancel(record.id)
    finally:
        await engine.close()


async def test_a_session_from_a_detached_head_has_no_branch_to_merge_into(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "checkout", "-q", "--detach")
    engine = await engines.factory()()
    try:
        record = await worktree_session(engine, repo)
        commit(Path(record.cwd), {"b.txt": "new\n"}, "work")
        before = checkout_state(repo)
        result = await engine.merge_worktree(record.id)
        assert not result.merged and result.refusal and "no base branch" in result.refusal
        assert checkout_state(repo) == before
    finally:
        await engine.close()
