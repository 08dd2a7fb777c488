"""The pure rules of reviewing a worktree session's work: review comments as one prompt,
git's lists read back (a diff's names and statuses, merge-tree's conflicted files, the
discard refs), a change's texts or why none, and the git version merging needs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cockpit.api import FileChange
from cockpit.engine.worktrees.changes import TEXT_BYTES, changed_file, name_status, untracked
from cockpit.engine.worktrees.discarding import discard_ref, last_number
from cockpit.engine.worktrees.git import MERGE_TREE_VERSION, too_old
from cockpit.engine.worktrees.merging import conflicted
from cockpit.text.review import ReviewComment, place, review_prompt, short_quote


def test_comments_become_one_prompt_with_places_and_quotes() -> None:
    prompt = review_prompt(
        [
            ReviewComment("src/app.py", 12, 12, "Name this better.", "    def f(x):"),
            ReviewComment("src/app.py", 20, 24, "Why a loop?\nUse a set.", "for a in b:"),
            ReviewComment("README.md", None, None, "Say how to run it."),
            ReviewComment("skipped.py", 1, 1, "   "),
        ]
    )
    assert prompt == (
        "review:\n"
        "- src/app.py:12: Name this better.\n"
        "  > def f(x):\n"
        "- src/app.py:20-24: Why a loop? Use a set.\n"
        "  > for a in b:\n"
        "- README.md: Say how to run it."
    )
    assert review_prompt([]) == "" and review_prompt([ReviewComment("a", 1, 1, "")]) == ""


def test_a_quote_is_one_short_printable_line() -> None:
    assert short_quote("x" * 100) == "x" * 59 + "…"
    assert short_quote("a\x1b[31mred\tb") == short_quote("a\x1b[31mred\tb").strip()
    assert "\x1b" not in short_quote("a\x1b[31mred")
    assert place(ReviewComment("p", 3, None, "t")) == "p:3"


@given(st.lists(st.text(min_size=1), max_size=5))
def test_every_comment_with_text_is_one_item(texts: list[str]) -> None:
    comments = [ReviewComment("f.py", 1, 1, text) for text in texts]
    prompt = review_prompt(comments)
    said = [text for text in texts if text.strip()]
    assert prompt.count("\n- f.py:1: ") == len(said)
    assert (prompt == "") == (not said)


def test_gits_lists_are_read_back() -> None:
    assert name_status(b"M\0a.txt\0A\0new dir/b.txt\0D\0gone\0T\0link\0") == [
        ("modified", "a.txt"), ("added", "new dir/b.txt"), ("deleted", "gone"),
        ("modified", "link"),
    ]  # fmt: skip
    assert untracked(b"x\0y z\0") == ["x", "y z"]
    assert conflicted(b"c63571c1\0a.txt\0a.txt\0b.txt\0") == ("a.txt", "b.txt")
    assert conflicted(b"c63571c1\0") == ()


def test_discards_are_numbered_per_session() -> None:
    refs = "\n".join(
        [
            discard_ref("s1", 1),
            discard_ref("s1", 12),
            "refs/cockpit/s1/turn-3",
            "refs/cockpit/s1/discard-x",
        ]
    )
    assert last_number(refs, "s1") == 12
    assert last_number(refs, "s2") == 0 and last_number("", "s1") == 0


def test_a_change_gives_its_texts_or_says_why_not() -> None:
    assert changed_file("a", "modified", b"one\n", b"two\n") == FileChange(
        "a", "modified", "one\n", "two\n"
    )
    assert changed_file("n", "added", None, b"new\n") == FileChange("n", "added", None, "new\n")
    binary = changed_file("p.png", "modified", b"\x89PNG\0", b"text")
    assert binary == FileChange("p.png", "modified", readable=False, binary=True)
    latin = changed_file("l.txt", "added", None, "café".encode("latin-1"))
    assert latin.binary and not latin.readable
    big = changed_file("big", "added", None, b"x" * (TEXT_BYTES + 1))
    assert not big.readable and not big.binary and big.new_text is None


def test_merging_needs_git_2_38() -> None:
    assert MERGE_TREE_VERSION == (2, 38)
    what = "Merging a worktree session's branch needs"
    assert too_old((2, 37), MERGE_TREE_VERSION, what) == (
        "Merging a worktree session's branch needs git 2.38 or newer; this machine has git 2.37."
    )
    assert too_old((2, 38), MERGE_TREE_VERSION, what) is None
    assert too_old((2, 30)) is None  # the rest of worktree sessions: 2.25
