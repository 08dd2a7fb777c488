"""Whether a path lies inside a session's root: one check (`cockpit.inside_root`) for the
policy's "inside the folder" (a read allowed without asking), fs/* confinement, the
mention index's links and the bundled Claude agent's tools. The table pins its answer, and
each caller's, for the cases that tell such checks apart: a link out of the root, `..`, a
sibling that shares the root's name as a prefix, a trailing slash, `~`, the root itself, a
relative path. Where the four checks it replaced differed, it keeps the strictest answer:
`~` is the home folder (fs/*, the index and the agent took it as a folder named `~`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.agentkit.claude.tool_input import ToolFailure, resolve
from cockpit.engine.files import OutsideRoot, confine
from cockpit.engine.policy import Policy, decide
from cockpit.inside_root import inside, under


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
    """The policy allows a read of `path` without asking."""
    call = {"kind": "read", "locations": [{"path": path}], "title": "Read"}
    return decide(Policy(), call, Path(root), "global").action == "allow"


def files_say(path: str, root: str) -> bool:
    try:
        confine(Path(root), path)
    except OutsideRoot:
        return False
    return True


def agent_says(path: str, root: str) -> bool:
    try:
        resolve(root, path)
    except ToolFailure:
        return False
    return True


CALLERS: dict[str, Callable[[str, str], bool]] = {
    "policy": policy_says,
    "files": files_say,
    "agent": agent_says,
}

TABLE = [
    # (case, path, root, inside)
    ("link out of the root", "{x}/proj/out/secret", "{x}/proj", False),
    ("link out, relative", "out/secret", "{x}/proj", False),
    ("the link itself", "out", "{x}/proj", False),
    (".. out of the root", "{x}/proj/../outside/secret", "{x}/proj", False),
    (".. out, relative", "../outside/secret", "{x}/proj", False),
    (".. to the sibling", "../proj-evil/secret", "{x}/proj", False),
    (".. staying in", "{x}/proj/sub/../a.txt", "{x}/proj", True),
    ("sibling with the same prefix", "{x}/proj-evil/secret", "{x}/proj", False),
    ("the sibling itself", "{x}/proj-evil", "{x}/proj", False),
    ("trailing slash on the path", "{x}/proj/sub/", "{x}/proj", True),
    ("trailing slash on the root", "{x}/proj/a.txt", "{x}/proj/", True),
    ("trailing slash, sibling", "{x}/proj-evil/secret", "{x}/proj/", False),
    ("~ (home outside the root)", "~", "{x}/proj", False),
    ("~/ (home outside the root)", "~/notes", "{x}/proj", False),
    ("~ with the root as home", "~/a.txt", "{x}/home", True),
    ("the root itself", "{x}/proj", "{x}/proj", True),
    ("the root as .", ".", "{x}/proj", True),
    ("relative", "sub/new.txt", "{x}/proj", True),
    ("absolute elsewhere", "/etc/passwd", "{x}/proj", False),
    ("root through a link, real path", "{x}/proj/a.txt", "{x}/proj-link", True),
    ("root through a link, its own path", "{x}/proj-link/a.txt", "{x}/proj-link", True),
]

WRITTEN_OUTSIDE = {"root through a link, real path"}
"""Cases the agent's tools also refuse: they want a path inside the folder as written too,
since they show it relative to the folder."""


@pytest.mark.parametrize(("case", "path", "root", "expected"), TABLE, ids=[t[0] for t in TABLE])
def test_inside_answers_as_pinned(
    place: Path, case: str, path: str, root: str, expected: bool
) -> None:
    assert inside(path.format(x=place), root.format(x=place)) is expected


@pytest.mark.parametrize(("case", "path", "root", "expected"), TABLE, ids=[t[0] for t in TABLE])
def test_every_caller_answers_as_the_check(
    place: Path, case: str, path: str, root: str, expected: bool
) -> None:
    path, root = path.format(x=place), root.format(x=place)
    answers = {name: check(path, root) for name, check in CALLERS.items()}
    assert answers == {
        "policy": expected,
        "files": expected,
        "agent": expected and case not in WRITTEN_OUTSIDE,
    }


def test_a_sibling_sharing_the_roots_name_is_outside() -> None:
    """`/x/proj-evil` starts with the text of `/x/proj` but is not in it: the rule compares
    whole parts, not characters (a read there is asked, never allowed)."""
    assert not under("/x/proj-evil", "/x/proj")
    assert not under("/x/proj-evil/a.py", "/x/proj")
    assert not under("/x/proj2", "/x/proj/")
    assert under("/x/proj/a.py", "/x/proj")
    assert under("/x/proj", "/")
    assert not inside("/x/proj-evil/a.py", "/x/proj")
    call = {"kind": "read", "locations": [{"path": "/x/proj-evil/a.py"}], "title": "Read"}
    assert decide(Policy(), call, Path("/x/proj"), "global").action == "ask"


NAMES = st.sampled_from(["proj", "proj-evil", "proj2", "pro", "p", "a.py", "..", ".", ""])


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding `proj`, with no links under it (the real path is the written one)."""
    base = Path(os.path.realpath(tmp_path_factory.mktemp("tree")))
    (base / "proj").mkdir()
    return base


@given(
    parts=st.lists(NAMES, max_size=5),
    absolute=st.booleans(),
    slash=st.booleans(),
)
def test_inside_means_the_roots_parts_lead_the_paths(
    tree: Path, parts: list[str], absolute: bool, slash: bool
) -> None:
    """Over paths built from names that share a prefix with the root's (`proj-evil`,
    `proj2`, `pro`), `..` and `.`: a path is inside exactly when, once normalised, it
    begins with every part of the root."""
    root = tree / "proj"
    written = os.path.join(str(tree) if absolute else "", *parts) if parts else ""
    path = (written or ".") + ("/" if slash else "")
    normal = os.path.normpath(os.path.join(root, path))
    expected = Path(normal).parts[: len(root.parts)] == root.parts
    assert inside(path, root) is expected
