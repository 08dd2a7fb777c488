"""Cockpit's own files are not the agent's: its store, config, logs and runtime folder are
refused to `fs/*` and as a terminal's folder wherever the session's root is (`cockpit ~`
holds them all); terminals start without Cockpit's secrets, and the policy sees every
command an agent runs through `terminal/create`."""

from __future__ import annotations

import asyncio
import os
import shlex
import sqlite3
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.api import AgentSpec
from cockpit.engine.files import CockpitsOwn, confine, read_text, write_text
from cockpit.engine.policy import Policy, decide, title_paths
from cockpit.engine.registry import parse_agents
from cockpit.engine.terminals import command_lines, terminal_env
from cockpit.paths import config_dir, own_folders, runtime_dir
from cockpit.text.secret_names import is_secret
from tests.engine.test_engine_restart import TINY
from tests.support.engine_helpers import allow_all, open_engine, rows_of

TINY_SPEC = AgentSpec(name="tiny", command=(sys.executable, TINY))


def test_own_folders_are_the_store_the_config_and_the_runtime_folder(tmp_path: Path) -> None:
    environ = {"COCKPIT_HOME": str(tmp_path / "home")}
    folders = own_folders(tmp_path / "home", environ)
    assert folders == (tmp_path / "home", config_dir(environ), runtime_dir(environ))
    assert own_folders(tmp_path / "data", {}) == (
        tmp_path / "data",
        config_dir({}),
        runtime_dir({}),
    )


@given(
    st.lists(
        st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=8),
        min_size=0,
        max_size=4,
    )
)
def test_nothing_under_an_own_folder_is_confined_in(parts: list[str]) -> None:
    root = Path("/tmp/cockpit-root-never-made")
    own = root / ".local" / "share" / "cockpit"
    path = os.path.join(".local", "share", "cockpit", *parts)
    with pytest.raises(CockpitsOwn):
        confine(root, path, [own])
    assert confine(root, os.path.join("src", *parts), [own]) == root.joinpath("src", *parts)


def test_reads_writes_and_links_into_cockpits_folder_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "home"
    own = root / ".config" / "cockpit"
    own.mkdir(parents=True)
    (own / "policy.toml").write_text("[permissions]\n")
    (root / "link").symlink_to(own / "policy.toml")
    for path in (
        ".config/cockpit/policy.toml",
        str(own / "policy.toml"),
        "link",
        ".config/cockpit",
    ):
        with pytest.raises(CockpitsOwn):
            read_text(root, path, own=[own])
    for path in (".config/cockpit/agents.toml", "link", ".config/cockpit/new/x.toml"):
        with pytest.raises(CockpitsOwn):
            write_text(root, path, "[agents.demo]\n", own=[own])
    assert (own / "policy.toml").read_text() == "[permissions]\n"
    assert sorted(p.name for p in own.iterdir()) == ["policy.toml"]
    write_text(root, ".config/other.toml", "fine", own=[own])
    assert read_text(root, ".config/other.toml", own=[own]) == "fine"


async def test_an_agent_in_a_root_holding_cockpit_home_cannot_touch_the_store_or_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cockpit ~`: the store, the policy and the agents file all lie inside the root. The
    agent read cockpit.db and the log, overwrote cockpit.db ("file is not a database") and
    wrote policy.toml and agents.toml."""
    root = tmp_path / "user"
    home = root / ".cockpit"
    monkeypatch.setenv("COCKPIT_HOME", str(home))
    async with open_engine(home) as (engine, _):
        (home / "config").mkdir(exist_ok=True)
        (home / "config" / "policy.toml").write_text("[permissions]\nexecute = 'ask'\n")
        record = await engine.create_session(TINY_SPEC, root)
        words = [
            "read=.cockpit/cockpit.db",
            "read=.cockpit/config/policy.toml",
            f"read={home}/logs/{record.id}.log",
            "write=.cockpit/cockpit.db",
            "write=.cockpit/config/policy.toml",
            "write=.cockpit/config/agents.toml",
            "write=.cockpit/run/cockpit.sock",
            "write=notes.txt",
        ]
        for word in words:
            assert await asyncio.wait_for(engine.prompt(record.id, word), 20) == "end_turn"
        rows = await rows_of(engine, record.id)
    replies = [r.text for r in rows if r.kind == "agent"]
    assert replies[:7] == [
        *["read failed: Invalid params"] * 3,
        *["write failed: Invalid params"] * 4,
    ]
    assert replies[7] == "wrote"
    refused = [r.text for r in rows if r.text.startswith("Refused the agent's")]
    assert len(refused) == 7 and all("is in Cockpit's own folder" in t for t in refused)
    assert (home / "config" / "policy.toml").read_text() == "[permissions]\nexecute = 'ask'\n"
    assert not (home / "config" / "agents.toml").exists()
    with sqlite3.connect(home / "cockpit.db") as db:  # still a database, with the session
        assert db.execute("select count(*) from sessions").fetchone() == (1,)
    assert (root / "notes.txt").read_text() == "tiny"


def test_secret_names() -> None:
    secrets = ["ANTHROPIC_API_KEY", "OPENAI_APIKEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"]
    secrets += ["DB_PASSWORD", "GOOGLE_APPLICATION_CREDENTIALS", "token", "SSH_PRIVATE_KEY"]
    assert all(is_secret(name) for name in secrets)
    plain = ["PATH", "HOME", "TOKENIZERS_PARALLELISM", "KEYBOARD", "COCKPIT_HOME", "TERM"]
    assert not any(is_secret(name) for name in plain)


@given(st.dictionaries(st.from_regex(r"[A-Z_]{1,12}", fullmatch=True), st.text(max_size=4)))
def test_a_terminal_keeps_everything_but_the_secrets(environ: dict[str, str]) -> None:
    kept = terminal_env(environ)
    assert kept == {k: v for k, v in environ.items() if not is_secret(k)}
    assert terminal_env(environ, keep=environ.keys()) == environ


def test_an_entry_names_the_secrets_its_terminals_keep() -> None:
    agents, problems = parse_agents(
        '[agents.x]\ncommand = ["x"]\nterminal_env = ["GITHUB_TOKEN"]\n', "agents.toml"
    )
    assert not problems and agents["x"].terminal_env == ("GITHUB_TOKEN",)
    _, problems = parse_agents('[agents.x]\ncommand = ["x"]\nterminal_env = "A"\n', "a.toml")
    assert problems == ["a.toml:1: agent 'x': terminal_env must be a list of variable names"]


def test_the_lines_a_command_may_have_been_asked_as() -> None:
    assert command_lines(["/bin/sh", "-c", "ls -la"]) == ["/bin/sh -c 'ls -la'", "ls -la"]
    assert command_lines(["python", "-c", "print(1)"]) == ["python -c 'print(1)'"]
    assert command_lines(["git", "status"]) == ["git status"]
    # The line Cockpit shows (and an agent may have written) matches too.
    quoted = ["python3", "-c", "print('hello')"]
    assert command_lines(quoted) == [shlex.join(quoted), "python3 -c \"print('hello')\""]


async def test_a_terminal_the_agent_did_not_ask_for_is_put_to_the_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any command ran in the root without a permission check, with the whole environment."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    monkeypatch.setenv("PLAIN_SETTING", "visible")
    project = tmp_path / "project"
    project.mkdir()
    async with open_engine(tmp_path / "home") as (engine, recorder):
        record = await engine.create_session(TINY_SPEC, project)
        turn = asyncio.ensure_future(engine.prompt(record.id, "term=env"))
        await recorder.wait_for(lambda: bool(recorder.asked))
        (request,) = recorder.asked
        assert request.title == "Run /bin/sh -c env" and request.kind == "execute"
        await engine.answer_permission(request.id, "skip")
        assert await asyncio.wait_for(turn, 20) == "end_turn"
        rows = await rows_of(engine, record.id)
        assert rows[-1].text == "terminal failed: Invalid params"
        assert any(r.kind == "permission" and r.text.startswith("Rejected") for r in rows)
        # Asked and allowed by the agent's own request: it runs with no second question.
        turn = asyncio.ensure_future(engine.prompt(record.id, "ask-term=env"))
        await recorder.wait_for(lambda: len(recorder.asked) == 2)
        await engine.answer_permission(recorder.asked[1].id, "yes")
        assert await asyncio.wait_for(turn, 20) == "end_turn"
        output = (await rows_of(engine, record.id))[-1].text
        assert len(recorder.asked) == 2
    assert output.startswith("exit 0:") and "PLAIN_SETTING=visible" in output
    assert "ANTHROPIC_API_KEY" not in output and "sk-secret" not in output


async def test_cockpits_own_question_shows_the_command_as_a_person_reads_it(
    tmp_path: Path,
) -> None:
    """A word with a quote in it is double-quoted, not wrapped in `'"'"'`."""
    project = tmp_path / "project"
    project.mkdir()
    async with open_engine(tmp_path / "home") as (engine, recorder):
        record = await engine.create_session(TINY_SPEC, project)
        turn = asyncio.ensure_future(engine.prompt(record.id, "term=echo'hello'"))
        await recorder.wait_for(lambda: bool(recorder.asked))
        (request,) = recorder.asked
        assert request.title == "Run /bin/sh -c \"echo'hello'\""
        assert request.call.command == "/bin/sh -c \"echo'hello'\""
        await engine.answer_permission(request.id, "skip")
        assert await asyncio.wait_for(turn, 20) == "end_turn"


async def test_a_reject_rule_for_execute_refuses_every_terminal(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    async with open_engine(tmp_path / "home") as (engine, recorder):
        record = await engine.create_session(TINY_SPEC, project)
        await engine.set_session_policy(record.id, "execute", "reject")
        turn = engine.prompt(record.id, "term=true")
        assert await asyncio.wait_for(turn, 20) == "end_turn"
        rows = await rows_of(engine, record.id)
        assert not recorder.asked
    assert rows[-1].text == "terminal failed: Invalid params"
    (decision,) = [r for r in rows if r.kind == "permission"]
    assert decision.text.startswith("Rejected") and "execute = reject" in decision.text


async def test_an_allow_rule_or_policy_runs_the_command(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    async with open_engine(tmp_path / "home", auto_answer=allow_all) as (engine, _):
        record = await engine.create_session(TINY_SPEC, project)
        assert await asyncio.wait_for(engine.prompt(record.id, "term=pwd"), 20) == "end_turn"
        rows = await rows_of(engine, record.id)
        assert rows[-1].text == f"exit 0: {project}"
        await engine.set_session_policy(record.id, "execute", "allow")
        assert await asyncio.wait_for(engine.prompt(record.id, "term=true"), 20) == "end_turn"
        rows = await rows_of(engine, record.id)
    assert rows[-1].text.rstrip() == "exit 0:"
    assert len([r for r in rows if r.kind == "permission"]) == 1  # allow_all's; none for the rule


def test_title_paths() -> None:
    assert title_paths("rm -rf ~") == ["~"]
    assert title_paths("Read `/etc/passwd`, then ./a and ../b") == ["/etc/passwd", "./a", "../b"]
    assert title_paths("Read src/app.py") == []


def test_the_policy_checks_what_it_can_of_a_read_not_its_kind() -> None:
    """A `read` titled "rm -rf ~" was allowed: the kind is only the agent's claim."""
    root = Path("/work/project")
    inside = [{"path": "/work/project/a.py"}]
    read = {"kind": "read", "locations": inside, "title": "rm -rf ~"}
    assert decide(Policy(), read, root, "global").reason == "read outside the session's folder"
    run = {"kind": "read", "locations": inside, "title": "Read", "rawInput": {"command": "rm"}}
    assert decide(Policy(), run, root, "global").reason == "read that carries a command"
    fine = {"kind": "read", "locations": inside, "title": "Read ./a.py", "rawInput": {"path": "a"}}
    assert decide(Policy(), fine, root, "global").action == "allow"


async def test_a_question_the_agent_stopped_waiting_for_is_closed_with_a_true_row(
    tmp_path: Path,
) -> None:
    """It stayed "waiting for your answer" after the agent ended its turn."""
    project = tmp_path / "project"
    project.mkdir()
    async with open_engine(tmp_path / "home") as (engine, recorder):
        record = await engine.create_session(TINY_SPEC, project)
        turn = engine.prompt(record.id, "ask-and-leave")
        assert await asyncio.wait_for(turn, 20) == "end_turn"
        assert recorder.asked and recorder.resolved == [(recorder.asked[0].id, None)]
        assert not engine.pending_permissions(record.id)
        assert engine.status(record.id) == "ready"
        rows = await rows_of(engine, record.id)
    (decision,) = [r for r in rows if r.kind == "permission"]
    assert decision.text == "Unanswered: Delete the notes (the agent ended its turn first)"


def test_a_worktree_in_cockpits_data_folder_is_the_agents_and_nothing_else(
    tmp_path: Path,
) -> None:
    """The root `~` holds the data folder and a worktree in it: only the worktree is let
    through, never the store, the logs or `run/` beside it."""
    data = tmp_path / ".cockpit"
    worktree = data / "worktrees" / "repo" / "fix-1a2b"
    worktree.mkdir(parents=True)
    (data / "cockpit.db").write_text("store")
    assert confine(tmp_path, str(worktree / "a.py"), [data], [worktree]) == worktree / "a.py"
    for path in ("cockpit.db", "logs/x.log", "run/s.sock", "worktrees/repo/other/a.py"):
        with pytest.raises(CockpitsOwn):
            confine(tmp_path, str(data / path), [data], [worktree])
    write_text(worktree, "new/b.py", "x", own=[data], allowed=[worktree])
    assert read_text(worktree, "new/b.py", own=[data], allowed=[worktree]) == "x"
