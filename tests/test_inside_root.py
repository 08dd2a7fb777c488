"""Whether a path lies inside a session's root, as each place that asks answers it: the
policy's "inside the folder" (a read allowed without asking), fs/* confinement, the
mention index's links and the bundled Claude agent's tools. The table pins every answer
for the cases that tell such checks apart: a link out of the root, `..`, a sibling that
shares the root's name as a prefix, a trailing slash, `~`, the root itself, a relative
path."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from cockpit.agentkit.claude.tool_input import ToolFailure, resolve
from cockpit.engine.file_index.listing import _inside
from cockpit.engine.files import OutsideRoot, confine
from cockpit.engine.policy import inside


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`x/` holding the root `proj/` (a file, a folder, a link out), a sibling `proj-evil/`,
    a folder `outside/`, a link `proj-link` to the root, and the home folder (outside)."""
    x = tmp_path / "x"
    root = x / "proj"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("a")
    (x / "proj-evil").mkdir()
    (x / "proj-evil" / "secret").write_text("s")
    (x / "outside").mkdir()
    (x / "outside" / "secret").write_text("s")
    (x / "home").mkdir()
    os.symlink(x / "outside", root / "out")
    os.symlink(root, x / "proj-link")
    monkeypatch.setenv("HOME", str(x / "home"))
    return x


def policy_says(path: str, root: str) -> bool:
    return inside(path, Path(root))


def files_say(path: str, root: str) -> bool:
    try:
        confine(Path(root), path)
    except OutsideRoot:
        return False
    return True


def index_says(path: str, root: str) -> bool:
    return _inside(os.path.realpath(root), os.path.realpath(os.path.join(root, path)))


def agent_says(path: str, root: str) -> bool:
    try:
        resolve(root, path)
    except ToolFailure:
        return False
    return True


CHECKS: dict[str, Callable[[str, str], bool]] = {
    "policy": policy_says,
    "files": files_say,
    "index": index_says,
    "agent": agent_says,
}

ALL = frozenset(CHECKS)
NONE: frozenset[str] = frozenset()

TABLE = [
    # (case, path, root, the checks that say "inside")
    ("link out of the root", "{x}/proj/out/secret", "{x}/proj", NONE),
    ("link out, relative", "out/secret", "{x}/proj", NONE),
    ("the link itself", "out", "{x}/proj", NONE),
    (".. out of the root", "{x}/proj/../outside/secret", "{x}/proj", NONE),
    (".. out, relative", "../outside/secret", "{x}/proj", NONE),
    (".. to the sibling", "../proj-evil/secret", "{x}/proj", NONE),
    (".. staying in", "{x}/proj/sub/../a.txt", "{x}/proj", ALL),
    ("sibling with the same prefix", "{x}/proj-evil/secret", "{x}/proj", NONE),
    ("the sibling itself", "{x}/proj-evil", "{x}/proj", NONE),
    ("trailing slash on the path", "{x}/proj/sub/", "{x}/proj", ALL),
    ("trailing slash on the root", "{x}/proj/a.txt", "{x}/proj/", ALL),
    ("trailing slash, sibling", "{x}/proj-evil/secret", "{x}/proj/", NONE),
    ("~ (home outside the root)", "~", "{x}/proj", frozenset({"files", "index", "agent"})),
    ("~/ (home outside the root)", "~/notes", "{x}/proj", frozenset({"files", "index", "agent"})),
    ("~ with the root as home", "~/a.txt", "{x}/home", ALL),
    ("the root itself", "{x}/proj", "{x}/proj", ALL),
    ("the root as .", ".", "{x}/proj", ALL),
    ("relative", "sub/new.txt", "{x}/proj", ALL),
    ("absolute elsewhere", "/etc/passwd", "{x}/proj", NONE),
    (
        "root through a link, real path",
        "{x}/proj/a.txt",
        "{x}/proj-link",
        frozenset({"policy", "files", "index"}),
    ),
    ("root through a link, its own path", "{x}/proj-link/a.txt", "{x}/proj-link", ALL),
]


@pytest.mark.parametrize(("case", "path", "root", "expected"), TABLE, ids=[t[0] for t in TABLE])
def test_each_check_answers_as_pinned(
    place: Path, case: str, path: str, root: str, expected: frozenset[str]
) -> None:
    path, root = path.format(x=place), root.format(x=place)
    answers = {name for name, check in CHECKS.items() if check(path, root)}
    assert answers == expected, case
