"""Completing a folder's path as a shell does (`cockpit.folder_completion`): how a typed
path is cut, which folders the engine sends back, and how the dialog completes the text
with them; the line of candidates under the field. Examples pin the habits (`~`, hidden
folders, one match gets its `/`); properties hold the rule for any names: a completion
goes on from what was typed, never past a folder that fits, and as far as they agree."""

from __future__ import annotations

import os

from hypothesis import assume, given
from hypothesis import strategies as st
from rich.cells import cell_len

from cockpit.folder_completion import (
    FOLDERS_LIMIT,
    absolute,
    completed,
    matching,
    reachable,
    split_partial,
    suggested,
)
from cockpit.ui.folder_field import candidates_line

NAME = st.text(alphabet="ab.-_ ~界", min_size=1, max_size=6)
"""A folder's name: few letters, so names share starts often; a dot, a space, `~`, wide."""
NAMES = st.lists(NAME, max_size=12, unique=True)
TYPED = st.builds(
    lambda head, stem: head + stem,
    st.sampled_from(["", "/", "/a/", "~/", "~/a b/", "../", "x/"]),
    st.text(alphabet="ab.-~", max_size=3),
)


# -- examples -------------------------------------------------------------------------


def test_a_typed_path_is_cut_after_its_last_slash() -> None:
    assert split_partial("~/src/co") == ("~/src/", "co")
    assert split_partial("/") == ("/", "")
    assert split_partial("/home/u/") == ("/home/u/", "")
    assert split_partial("proj") == ("", "proj")


def test_one_folder_is_completed_whole_with_its_slash() -> None:
    assert completed("~/src/co", ["cockpit"]) == "~/src/cockpit/"
    assert completed("/a/", ["only"]) == "/a/only/"


def test_several_folders_are_completed_as_far_as_they_agree() -> None:
    assert completed("/a/co", ["cockpit", "code", "cog"]) == "/a/co"  # nothing to add
    assert completed("/a/c", ["cockpit", "cockroach"]) == "/a/cock"
    assert completed("/a/", ["proj", "proj-old"]) == "/a/proj"


def test_nothing_fits_nothing_changes() -> None:
    assert completed("/a/zz", []) == "/a/zz"
    assert completed("/a/zz", ["other"]) == "/a/zz"  # a stale answer is not taken


def test_the_home_alone_is_completed_to_its_folder() -> None:
    assert completed("~", []) == "~/"
    # A folder here named like a home is reached as ./~x, never completed bare.
    assert completed("", ["~", "~_"]) == "" and suggested("", ["~x"]) is None
    assert completed("./", ["~x"]) == "./~x/"


def test_hidden_folders_only_when_a_dot_is_typed() -> None:
    names = [".git", ".cache", "src", "docs"]
    assert matching(names, "") == ["docs", "src"]
    assert matching(names, ".") == [".cache", ".git"]
    assert matching(names, ".g") == [".git"]


def test_a_long_listing_keeps_its_last_so_the_shared_start_stays_true() -> None:
    """60 folders `ab…` and one `ac`: cut at the first 50, they would all share `ab`, and
    Tab would complete past `ac`."""
    names = [f"ab{i:02}" for i in range(60)] + ["ac"]
    listed = matching(names, "a")
    assert len(listed) == FOLDERS_LIMIT
    assert listed[-1] == "ac"
    assert completed("/x/a", listed) == "/x/a"


def test_a_relative_path_is_asked_under_the_dialogs_folder() -> None:
    assert absolute("sub/x", "/home/u/proj") == "/home/u/proj/sub/x"
    assert absolute("", "/home/u/proj") == "/home/u/proj/"
    assert absolute("~/x", "/home/u/proj") == "~/x"
    assert absolute("/etc", "/home/u/proj") == "/etc"


def test_the_suggestion_is_the_first_folder_whole() -> None:
    assert suggested("/a/p", ["proj", "proj-old"]) == "/a/proj/"
    assert suggested("/a/proj/", ["src"]) == "/a/proj/src/"
    assert suggested("/a/p", []) is None


def test_the_line_lists_what_fits_and_counts_the_rest() -> None:
    names = ["alpha", "beta", "gamma", "delta"]
    assert candidates_line(names, 80).plain == "alpha/  beta/  gamma/  delta/"
    assert candidates_line(names, 28).plain == "alpha/  beta/  … 2 more"
    assert candidates_line([f"f{i:02}" for i in range(50)], 24).plain == "f00/  f01/  … 48+ more"
    assert candidates_line([], 40).plain == ""
    assert candidates_line(["a" * 50], 20).plain == "a" * 19 + "…"
    assert candidates_line(["evil\x1b[2Jname"], 40).plain == "evilname/"  # no escapes


# -- properties -----------------------------------------------------------------------


@given(typed=TYPED)
def test_a_cut_path_is_the_path(typed: str) -> None:
    head, stem = split_partial(typed)
    assert head + stem == typed
    assert "/" not in stem
    assert head == "" or head.endswith("/")


@given(typed=TYPED, base=st.sampled_from(["/", "/home/u", "/home/u/"]))
def test_the_path_asked_ends_in_the_name_typed(typed: str, base: str) -> None:
    """The engine's names go on the end of what the user typed: asking under the
    dialog's folder never changes the part being completed."""
    asked = absolute(typed, base)
    assert split_partial(asked)[1] == split_partial(typed)[1]
    assert asked.startswith(("/", "~"))


@given(names=NAMES, stem=st.text(alphabet="ab.", max_size=2), limit=st.integers(2, 8))
def test_a_listing_is_bounded_sorted_and_shares_what_every_match_shares(
    names: list[str], stem: str, limit: int
) -> None:
    listed = matching(names, stem, limit)
    every = sorted(
        name
        for name in names
        if name.startswith(stem) and (stem.startswith(".") or not name.startswith("."))
    )
    assert len(listed) == min(len(every), limit)
    assert listed == sorted(listed)
    assert set(listed) <= set(every)
    assert os.path.commonprefix(listed) == os.path.commonprefix(every)  # noqa: RUF071
    assert (len(listed) == 1) == (len(every) == 1)


@given(typed=TYPED, names=NAMES)
def test_a_completion_goes_on_from_the_text_and_never_past_a_folder_that_fits(
    typed: str, names: list[str]
) -> None:
    assume(typed != "~")  # the home folder, whatever the folder holds (a test of its own)
    done = completed(typed, names)
    assert done.startswith(typed)
    head, stem = split_partial(typed)
    fitting = [name for name in names if name.startswith(stem) and reachable(head, name)]
    for name in fitting:
        assert (head + name + "/").startswith(done)


@given(typed=TYPED, names=NAMES)
def test_a_completion_goes_as_far_as_the_folders_agree(typed: str, names: list[str]) -> None:
    """Past it, two folders that fit differ (or one ends); and Tab again adds nothing."""
    assume(typed != "~")  # the home folder, whatever the folder holds
    done = completed(typed, names)
    head, stem = split_partial(typed)
    fitting = [name for name in names if name.startswith(stem) and reachable(head, name)]
    if len(fitting) >= 2:
        reach = len(done) - len(head)
        assert len({name[reach : reach + 1] for name in fitting}) > 1
        assert completed(done, names) == done
    if len(fitting) == 1:
        assert done == head + fitting[0] + "/"


@given(typed=TYPED, names=NAMES)
def test_a_suggestion_goes_on_from_the_text(typed: str, names: list[str]) -> None:
    suggestion = suggested(typed, names)
    if suggestion is not None:
        assert suggestion.startswith(typed) and suggestion != typed
        assert suggestion.endswith("/")


@given(names=NAMES, width=st.integers(1, 80))
def test_the_line_of_candidates_fits_its_width(names: list[str], width: int) -> None:
    assert cell_len(candidates_line(names, width).plain) <= width
