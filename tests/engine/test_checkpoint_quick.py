"""The quick tree of a checkpoint against the sure one (`git add -A` into a copy of the
agent's index), in real git repositories: after any mix of edits, deletions, files
turned into folders and back, links, executable bits, ignore rules, nested repositories,
and the agent's own `git add` and commits, both name the same tree."""

from __future__ import annotations

import asyncio
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cockpit.engine.checkpoints import Checkpoints
from cockpit.engine.checkpoints.reading import MOST_PATHS, TreeReader
from tests.support.checkpoint_repos import git, make_repository, make_worktree

PATHS = ("a", "b.txt", "a/b", "a/c.py", "d/e/f", "d/e/g h", "d/x", "a/b/c", "[x]*.md")
"""Paths that run into each other: a file where a folder was and the other way round,
names pathspecs would read as patterns."""


def reader_of(worktree: Path, session: str = "s1", copied: tuple[str, ...] = ()) -> TreeReader:
    top = Path(git(worktree, "rev-parse", "--show-toplevel").strip())
    index, kept = git(
        worktree, "rev-parse", "--git-path", "index", "--git-path", f"cockpit-{session}.index"
    ).splitlines()
    return TreeReader(top, worktree / index, worktree / kept, copied)


def _clear(path: Path) -> None:
    """Make room for a file at `path`: remove what stands there or in its way."""
    for parent in reversed(path.parents):
        if parent.is_symlink() or parent.is_file():
            parent.unlink()
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def apply(worktree: Path, step: tuple[str, str, int]) -> None:
    """One thing an agent or the user does to the files or the index."""
    kind, name, number = step
    path = worktree / name
    if kind == "write":
        _clear(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"version {number}\n" * (number % 3 + 1))
    elif kind == "delete":
        _clear(path)
    elif kind == "link":
        _clear(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(f"target-{number}")
    elif kind == "execute" and path.is_file() and not path.is_symlink():
        path.chmod(path.stat().st_mode ^ stat.S_IXUSR)
    elif kind == "ignore":
        (worktree / ".gitignore").write_text(f".env\n{name}\n")
    elif kind == "stage":
        git(worktree, "add", "-A", "--", ".")
    elif kind == "commit":
        git(worktree, "add", "-A", "--", ".")
        git(worktree, "commit", "-q", "--allow-empty", "-m", f"step {number}")
    elif kind == "nested":
        _clear(path)
        path.mkdir(parents=True)
        git(path, "init", "-q")
        (path / "inside.txt").write_text(f"{number}\n")
        git(path, "add", "inside.txt")
        git(path, "commit", "-q", "-m", "nested")


STEPS = st.lists(
    st.tuples(
        st.sampled_from(
            ["write"] * 5 + ["delete"] * 2 + ["link", "execute", "ignore", "stage", "commit"]
        ),
        st.sampled_from(PATHS),
        st.integers(0, 9),
    ),
    min_size=1,
    max_size=12,
)


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    make_worktree(make_repository(tmp_path / "repo"), tmp_path / "wt")
    return tmp_path / "wt"


async def same_tree(reader: TreeReader) -> str:
    quick = await reader.quick()
    sure = await reader.sure()
    assert quick == sure
    return sure


def run_steps(folder: Path, rounds: list[list[tuple[str, str, int]]]) -> None:
    if folder.exists():
        shutil.rmtree(folder)
    make_worktree(make_repository(folder / "repo"), folder / "wt")
    worktree = folder / "wt"

    async def go() -> None:
        reader = reader_of(worktree)
        for steps in rounds:
            for step in steps:
                apply(worktree, step)
            await same_tree(reader)
            reader.refresh_soon()  # as after a checkpoint; sometimes still running next time
            if len(steps) % 2:
                await reader.settled()
        await reader.settled()

    asyncio.run(go())


@settings(max_examples=25)
@given(rounds=st.lists(STEPS, min_size=1, max_size=4))
def test_the_quick_tree_is_always_the_sure_one(
    tmp_path_factory: pytest.TempPathFactory, rounds: list[list[tuple[str, str, int]]]
) -> None:
    run_steps(tmp_path_factory.mktemp("quick"), rounds)


def test_nested_repositories_links_and_a_folder_for_a_file(tmp_path: Path) -> None:
    run_steps(
        tmp_path,
        [
            [("write", "a", 1), ("link", "d/x", 2), ("nested", "d/e", 3)],
            [("write", "a/b", 4), ("execute", "a/b", 0), ("stage", "", 0)],
            [("write", "a", 5), ("delete", "d/e", 0), ("write", "d/e/f", 6)],
            [("commit", "", 7), ("ignore", "a", 0), ("write", "[x]*.md", 8)],
        ],
    )


async def test_a_file_that_became_ignored_leaves_the_next_tree(worktree: Path) -> None:
    reader = reader_of(worktree)
    (worktree / "notes.txt").write_text("mine\n")
    first = await same_tree(reader)
    reader.refresh_soon()
    await reader.settled()
    (worktree / ".gitignore").write_text(".env\nnotes.txt\n")
    second = await same_tree(reader)
    assert "notes.txt" in git(worktree, "ls-tree", "--name-only", first)
    assert "notes.txt" not in git(worktree, "ls-tree", "--name-only", second)


async def test_the_copied_files_stay_out_of_the_quick_tree(worktree: Path) -> None:
    (worktree / "config").mkdir()
    (worktree / "config" / "local.toml").write_text("secret = 1\n")
    (worktree / "settings.json").write_text("{}\n")
    (worktree / "kept.txt").write_text("kept\n")
    reader = reader_of(worktree, copied=("config", "settings.json"))
    tree = await same_tree(reader)
    names = git(worktree, "ls-tree", "-r", "--name-only", tree).split()
    assert "kept.txt" in names and "settings.json" not in names
    assert not [name for name in names if name.startswith("config")]


def merged(worktree: Path, branch: str) -> bool:
    """Whether `git merge BRANCH` went through (False: it stopped on a conflict)."""
    done = subprocess.run(["git", "merge", "-q", branch], cwd=worktree, capture_output=True)
    return done.returncode == 0


async def test_a_merge_under_way_and_too_many_paths_take_the_sure_way(worktree: Path) -> None:
    reader = reader_of(worktree)
    for number in range(MOST_PATHS + 1):
        (worktree / f"many-{number}.txt").write_text(f"{number}\n")
    assert await reader.quick() is None
    git(worktree, "add", "-A")
    git(worktree, "commit", "-q", "-m", "many")
    git(worktree, "checkout", "-q", "-b", "other", "HEAD~1")
    (worktree / "many-1.txt").write_text("other\n")
    git(worktree, "add", "-A")
    git(worktree, "commit", "-q", "-m", "other")
    assert not merged(worktree, "cockpit/test")  # a conflict on many-1.txt
    assert await reader.quick() is None
    assert await reader.read() == await reader.sure()


async def test_the_kept_index_gets_the_untracked_cache_and_stays_in_the_git_folder(
    worktree: Path,
) -> None:
    book = Checkpoints("s1", worktree)
    await book.take(1, "start")
    await book.settled()
    kept = Path(git(worktree, "rev-parse", "--git-path", "cockpit-s1.index").strip())
    kept = kept if kept.is_absolute() else worktree / kept
    assert kept.is_file() and b"UNTR" in kept.read_bytes()
    assert git(worktree, "status", "--porcelain") == ""  # nothing new in the work tree
