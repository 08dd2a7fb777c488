"""Checkpoints in a real git work tree, without a session: what goes in (tracked and
untracked files, never ignored ones), what is never touched (HEAD, the branch, the index
the agent sees), what a turn changed, and putting the files back."""

from __future__ import annotations

from pathlib import Path

import pytest

from cockpit.engine.checkpoints import Checkpoints
from tests.support.checkpoint_repos import git, index_state, make_repository, make_worktree


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    repository = make_repository(tmp_path / "repo")
    make_worktree(repository, tmp_path / "wt")
    return tmp_path / "wt"


def files_of(folder: Path, commit: str) -> set[str]:
    return set(git(folder, "ls-tree", "-r", "--name-only", commit).split())


async def test_a_checkpoint_leaves_head_the_branch_and_the_index_as_they_were(
    worktree: Path,
) -> None:
    (worktree / "staged.txt").write_text("staged\n")
    git(worktree, "add", "staged.txt")
    (worktree / "README.md").write_text("changed, not staged\n")
    before = index_state(worktree)
    checkpoint = await Checkpoints("s1", worktree).take(1, "start")
    assert index_state(worktree) == before
    assert git(worktree, "rev-parse", "refs/cockpit/s1/1").strip() == checkpoint.commit
    assert files_of(worktree, checkpoint.commit) >= {"staged.txt", "README.md", "src/app.py"}
    assert git(worktree, "show", f"{checkpoint.commit}:README.md") == "changed, not staged\n"


async def test_untracked_files_go_in_and_ignored_ones_never(worktree: Path) -> None:
    (worktree / "new.txt").write_text("new\n")
    (worktree / ".env").write_text("SECRET=1\n")
    checkpoint = await Checkpoints("s1", worktree).take(1, "start")
    files = files_of(worktree, checkpoint.commit)
    assert "new.txt" in files and ".env" not in files
    assert git(worktree, "status", "--porcelain") == "?? new.txt\n"


async def test_a_turn_shows_its_own_changes_and_what_changed_outside_it(worktree: Path) -> None:
    book = Checkpoints("s1", worktree)
    await book.take(1, "start")
    (worktree / "README.md").write_text("turn one\n")
    await book.take(1, "end")
    (worktree / "by-hand.txt").write_text("typed by the user\n")
    await book.take(2, "start")
    (worktree / "src" / "app.py").unlink()
    (worktree / "logo.bin").write_bytes(b"\x89PNG\0\0")
    await book.take(2, "end")
    first = await book.changes(1)
    assert [(c.path, c.status, c.outside) for c in first] == [("README.md", "modified", False)]
    assert first[0].old_text == "# A project\n\nIt has a readme.\n"
    assert first[0].new_text == "turn one\n"
    second = {c.path: c for c in await book.changes(2)}
    assert second["by-hand.txt"].outside and second["by-hand.txt"].status == "added"
    assert second["by-hand.txt"].new_text == "typed by the user\n"
    assert not second["src/app.py"].outside and second["src/app.py"].status == "deleted"
    assert second["src/app.py"].old_text == "print('hello')\n"
    assert not second["logo.bin"].readable and second["logo.bin"].new_text is None
    assert [c.changed for c in await book.read_all()] == [0, 1, 1, 2]


async def test_a_restore_puts_files_back_keeps_ignored_ones_and_can_be_undone(
    worktree: Path,
) -> None:
    book = Checkpoints("s1", worktree)
    await book.take(1, "start")
    (worktree / "README.md").write_text("edited by the turn\n")
    (worktree / "src" / "new.py").write_text("new\n")
    (worktree / "src" / "app.py").unlink()
    (worktree / ".env").write_text("SECRET=1\n")
    await book.take(1, "end")
    before = index_state(worktree)

    plan = await book.plan("1")
    assert (plan.overwrite, plan.create, plan.delete) == (
        ("README.md",), ("src/app.py",), ("src/new.py",),
    )  # fmt: skip
    made, done = await book.restore("1", lambda: None)
    assert done == plan and made.phase == "restore" and made.id == "3"
    assert (worktree / "README.md").read_text() == "# A project\n\nIt has a readme.\n"
    assert (worktree / "src" / "app.py").read_text() == "print('hello')\n"
    assert not (worktree / "src" / "new.py").exists()
    assert (worktree / ".env").read_text() == "SECRET=1\n"
    assert index_state(worktree) == before
    assert git(worktree, "status", "--porcelain") == ""

    await book.restore(made.id, lambda: None)  # the undo
    assert (worktree / "README.md").read_text() == "edited by the turn\n"
    assert (worktree / "src" / "new.py").read_text() == "new\n"
    assert not (worktree / "src" / "app.py").exists()
    assert (worktree / ".env").read_text() == "SECRET=1\n"


async def test_an_ignored_file_the_checkpoint_holds_is_never_overwritten(worktree: Path) -> None:
    (worktree / "notes.txt").write_text("kept in the checkpoint\n")
    book = Checkpoints("s1", worktree)
    await book.take(1, "start")
    (worktree / ".gitignore").write_text(".env\nnotes.txt\n")
    (worktree / "notes.txt").write_text("the user's own, ignored now\n")
    plan = await book.plan("1")
    assert plan.kept == ("notes.txt",) and plan.overwrite == (".gitignore",)
    await book.restore("1", lambda: None)
    assert (worktree / "notes.txt").read_text() == "the user's own, ignored now\n"


async def test_a_refused_restore_changes_nothing(worktree: Path) -> None:
    book = Checkpoints("s1", worktree)
    await book.take(1, "start")
    (worktree / "README.md").write_text("edited\n")
    with pytest.raises(ValueError, match="A turn is running"):
        await book.restore("1", lambda: "A turn is running in this session.")
    assert (worktree / "README.md").read_text() == "edited\n"
    assert len(await book.read_all()) == 1


async def test_a_repository_with_no_commit_gets_checkpoints_too(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("a\n")
    checkpoint = await Checkpoints("s1", tmp_path).take(1, "start")
    assert checkpoint.changed == 1 and files_of(tmp_path, checkpoint.commit) == {"a.txt"}
