"""The pure rules of a race: where a contender's test stands, what a contender is called
and committed as, how `/race` and `--keep` read what was typed, and the comparison's
lines."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cockpit.api import Contender, ShellRun
from cockpit.cli.race import agent_names, chosen, settled, table
from cockpit.engine.races import commit_message, contender_title, verdict
from cockpit.records import RaceEntry, read_race
from cockpit.ui.races import race_arguments

RUNNING = RaceEntry("r1", "fix it", 100.0)
ENDED = RaceEntry("r1", "fix it", 100.0, 160.0, "sh-1")


def test_a_test_state_follows_its_run_else_what_the_repository_asks() -> None:
    assert verdict("make test", True, ENDED, ShellRun("make test", "exited", 0)) == "passed"
    assert verdict("make test", True, ENDED, ShellRun("make test", "exited", 2)) == "failed"
    assert verdict("make test", True, ENDED, ShellRun("make test", "killed")) == "failed"
    assert verdict("make test", True, ENDED, ShellRun("make test")) == "running"
    assert verdict("make test", True, RUNNING, None) == "waiting"
    assert verdict("make test", False, RUNNING, None) == "not approved"
    assert verdict(None, False, RUNNING, None) == "none"


def test_a_race_entry_reads_back_and_anything_else_is_none() -> None:
    info = {"race": {"id": "r1", "prompt": "fix it", "at": 100.0, "ended": 160.0, "test": "sh-1"}}
    assert read_race(info) == ENDED
    assert read_race({"race": {"id": "r1", "prompt": "fix it", "at": 100}}) == RaceEntry(
        "r1", "fix it", 100
    )
    bad: list[object] = [
        None,
        {},
        {"race": []},
        {"race": {"id": "", "prompt": "x", "at": 1}},
        {"race": {"id": "r", "prompt": 3, "at": 1}},
        {"race": {"id": "r", "prompt": "x"}},
    ]
    assert [read_race(info) for info in bad] == [None] * len(bad)


def test_names_and_messages() -> None:
    assert contender_title("codex", 2, "make the failing tests pass again please now") == (
        "race 2 · codex · make the failing tests pass again…"
    )
    assert commit_message("  fix the login\nand more") == "Race: fix the login"
    assert commit_message("   ") == "Race"


@given(st.text(max_size=40))
def test_slash_race_takes_agents_then_a_prompt(typed: str) -> None:
    asked = race_arguments(typed)
    if asked is not None:
        agents, prompt = asked
        assert agents and all(name and "," not in name and " " not in name for name in agents)
        assert prompt and prompt == prompt.strip()


def test_slash_race_and_agents_lists() -> None:
    assert race_arguments("demo,demo tools now") == (["demo", "demo"], "tools now")
    assert race_arguments("demo") is None and race_arguments("") is None
    assert agent_names(" a, b,,a ") == ["a", "b", "a"]


def test_keep_names_a_number_or_an_agent_only_one_has() -> None:
    standings = [Contender("s1", "codex", "ready"), Contender("s2", "demo", "ready"),
                 Contender("s3", "demo", "ready")]  # fmt: skip
    assert chosen(standings, "2") == standings[1]
    assert chosen(standings, "codex") == standings[0]
    assert chosen(standings, "demo") is None and chosen(standings, "4") is None
    assert chosen(standings, "0") is None


def test_the_comparison_lines_up_and_knows_when_it_is_settled() -> None:
    standings = [
        Contender("s1", "codex", "ready", 3, 40, 2, "passed", 95.4, 18000, 0.41),
        Contender("s2", "demo", "working", test="waiting"),
    ]
    lines = table(standings)
    assert lines[0].split() == ["#", "agent", "session", "status", "files", "lines", "test",
                                "time", "cost"]  # fmt: skip
    assert lines[1].split() == ["1", "codex", "s1", "ready", "3", "+40", "-2", "passed", "95s",
                                "18,000", "tok", "0.41", "USD"]  # fmt: skip
    assert lines[2].split()[-2:] == ["-", "-"]
    assert not settled(standings)
    assert settled([standings[0], Contender("s2", "demo", "ready", test="failed", seconds=3)])
    assert not settled([Contender("s3", "demo", "closed")]), "its turn has not begun"
