"""A command shown as a person reads it, and still the same argv to a shell."""

from __future__ import annotations

import shlex

from hypothesis import given
from hypothesis import strategies as st

from cockpit.text.command_line import readable_command


def test_words_that_need_no_quotes_stay_bare() -> None:
    assert readable_command(["git", "commit", "-m", "fix"]) == "git commit -m fix"
    assert readable_command(["ls", "--color=auto", "a/b.py"]) == "ls --color=auto a/b.py"


def test_a_word_with_spaces_or_specials_is_single_quoted() -> None:
    assert readable_command(["sh", "-c", "ls -la | wc"]) == "sh -c 'ls -la | wc'"
    assert readable_command(["echo", ""]) == "echo ''"


def test_a_word_with_a_single_quote_is_double_quoted() -> None:
    argv = ["python3", "-c", "print('hello')"]
    assert readable_command(argv) == "python3 -c \"print('hello')\""


def test_a_word_double_quotes_would_change_falls_back_to_exact_quoting() -> None:
    argv = ["sh", "-c", "echo 'it' $HOME"]
    assert readable_command(argv) == shlex.join(argv)


@given(st.lists(st.text(st.characters(codec="utf-8", exclude_characters="\0"))))
def test_the_shell_reads_back_the_same_argv(argv: list[str]) -> None:
    assert shlex.split(readable_command(argv)) == argv
