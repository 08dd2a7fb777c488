"""The pure rules of `.cockpit.toml`: what it may ask, the paths it may copy in, the
pathspecs and patterns that keep those files out of git's work, the ports a session gets,
and the approvals kept by hash (a changed command is a new one)."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path, PurePosixPath

from hypothesis import given
from hypothesis import strategies as st

from cockpit.engine.worktrees.approvals import Approvals, approval_key
from cockpit.engine.worktrees.copying import copy_in
from cockpit.engine.worktrees.ports import HIGH, LOW, pick_ports, port_variables
from cockpit.engine.worktrees.project import (
    DEFAULT_PORTS,
    clean_spared,
    copy_problem,
    keep_out,
    parse_project,
)
from tests.support.git_repos import git, make_repo


def test_a_file_asks_for_copies_a_setup_a_test_and_ports() -> None:
    config = parse_project(
        'copy = [".env", "conf/local.json", ".env"]\nsetup = " make deps "\ntest = "make test"\n'
        "ports = 4\n"
    )
    assert config.copy == (".env", "conf/local.json")
    assert (config.setup, config.test, config.ports, config.problems) == (
        "make deps", "make test", 4, (),
    )  # fmt: skip
    assert parse_project("") == parse_project("# nothing asked\n")
    assert parse_project("").ports == DEFAULT_PORTS


def test_what_is_wrong_is_left_out_and_said() -> None:
    config = parse_project(
        'copy = ["/etc/passwd", "../up", ".git/config", 3, "ok"]\nsetup = 5\nports = 99\n'
        "colour = 1\n"
    )
    assert config.copy == ("ok",) and config.setup is None and config.ports == DEFAULT_PORTS
    said = " | ".join(config.problems)
    for words in ("'/etc/passwd' is not inside", "'../up' leaves", "'.git/config' is git's",
                  "3 is not a path", "`setup` must be a command", "`ports` must be",
                  "`colour` is not a setting"):  # fmt: skip
        assert words in said
    broken = parse_project("copy = [")
    assert broken.copy == () and "not valid TOML" in broken.problems[0]


@given(st.text(alphabet="ab./~-\\\0 ", max_size=12))
def test_a_path_copy_in_takes_lies_inside_the_repository(path: str) -> None:
    if copy_problem(path) is None:
        pure = PurePosixPath(path)
        assert not pure.is_absolute() and ".." not in pure.parts
        assert pure.parts and pure.parts[0] != ".git"
        root = Path("/repo")
        assert (root / path).resolve().is_relative_to(root)


def test_the_files_copied_in_stay_out_of_git_add_and_git_clean(tmp_path: Path) -> None:
    """Against git itself: names with a space, a star and a bracket taken literally."""
    repo = make_repo(tmp_path / "repo")
    copied = (".env", "a b*.txt", "conf/[x].json")
    for name in (*copied, "a b1.txt", "conf/x.json"):
        (repo / name).parent.mkdir(exist_ok=True)
        (repo / name).write_text("x\n")
    git(repo, "add", "-A", "--", *keep_out(copied))
    staged = git(repo, "diff", "--cached", "--name-only").splitlines()
    assert staged == ["a b1.txt", "conf/x.json"]
    git(repo, "reset", "-q")
    subprocess.run(["git", "clean", "-q", "-f", "-d", *clean_spared(copied)], cwd=repo, check=True)
    assert sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file() and
                  ".git" not in p.parts) == sorted([*copied, "README.md"])  # fmt: skip
    assert keep_out(()) == ["."] and clean_spared(()) == []


def test_ports_are_free_distinct_and_never_anothers() -> None:
    taken = set(range(LOW, LOW + 5000))
    busy = {LOW + 6000}
    ports = pick_ports(3, taken, random.Random(7), free=lambda port: port not in busy)
    assert len(set(ports)) == 3
    assert all(LOW <= p < HIGH and p not in taken and p not in busy for p in ports)
    assert pick_ports(2, set(), random.Random(1), free=lambda port: False) == ()
    assert port_variables((20001, 20002)) == {
        "COCKPIT_PORT": "20001", "COCKPIT_PORTS": "20001,20002",
    }  # fmt: skip
    assert port_variables(()) == {}


def test_an_approval_is_for_that_text_in_that_repository(tmp_path: Path) -> None:
    approvals = Approvals(tmp_path / "approved.json")
    assert not approvals.approved("/r", "setup", "make")
    approvals.approve("/r", "setup", "make")
    assert approvals.approved("/r", "setup", "make")
    assert not approvals.approved("/r", "setup", "make ")  # another text asks again
    assert not approvals.approved("/other", "setup", "make")
    assert not approvals.approved("/r", "test", "make")
    assert approval_key("/r", "setup", "make") != approval_key("/r", "setupmake", "")
    assert (tmp_path / "approved.json").stat().st_mode & 0o777 == 0o600
    (tmp_path / "approved.json").write_text("not json")
    assert not approvals.approved("/r", "setup", "make")  # a broken file approves nothing


def test_a_copy_never_writes_through_a_link_of_the_worktree(tmp_path: Path) -> None:
    """A folder the repository committed as a link out of it is not written through."""
    checkout, worktree, outside = tmp_path / "co", tmp_path / "wt", tmp_path / "out"
    for folder in (checkout / "conf", worktree, outside):
        folder.mkdir(parents=True)
    (checkout / "conf" / "local.json").write_text("{}")
    (checkout / "dir").mkdir()
    (checkout / "dir" / "f").write_text("f")
    (worktree / "conf").symlink_to(outside)
    done = copy_in(checkout, worktree, ("conf/local.json", "dir", "../x"))
    assert done.paths == ("dir",) and (worktree / "dir" / "f").read_text() == "f"
    assert list(outside.iterdir()) == []
    assert "would be written out of the worktree" in done.problems[0]
    assert "leaves the repository" in done.problems[1]
