"""An agent given as a command (`--agent-cmd`, for `cockpit run` and the TUI) takes the
settings of the registered agent whose program it runs, `--missing-file` sets the quirk
for any command, and a stored session reopens with the same settings. The matching rule
is tested pure; the rest through real subprocesses of the tiny agent standing in for
Gemini CLI (a `gemini` program on PATH)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.api import AgentSpec, Status
from cockpit.cli.main import tui_parser
from cockpit.cli.tui import tui_agent
from cockpit.engine.core import Engine
from cockpit.engine.registry import (
    agent_from_command,
    load_registry,
    matching_entry,
    program_index,
    resolve_program,
    with_overrides,
)
from cockpit.ui.app import CockpitApp
from cockpit.ui.transcript import TranscriptView
from tests.cli.test_cli import cockpit
from tests.engine.test_engine_restart import TINY
from tests.support.ui_helpers import NOW, ready, send, wait_until

EMPTY = "read: ''"
NOT_FOUND = "read failed:"


def entry(name: str, *command: str, **fields: object) -> AgentSpec:
    return AgentSpec(name=name, command=command, **fields)  # type: ignore[arg-type]


REGISTRY = {
    "demo": entry("demo", "/venv/bin/python3.11", "/cockpit/acp/demo_agent.py"),
    "gemini": entry(
        "gemini", "gemini", "--acp", title="Gemini CLI", missing_file="empty", env={"A": "1"}
    ),
    "gemini-pro": entry("gemini-pro", "gemini", "--acp", "-m", "pro", nice=3),
    "codex": entry("codex", "codex-acp"),
}


def no_files(word: str) -> str | None:
    return None


# -- the rule ------------------------------------------------------------------------------


def test_the_program_is_the_first_word_unless_an_interpreter_runs_it() -> None:
    assert program_index(["gemini", "--acp"]) == 0
    assert program_index(["/usr/bin/python3.11", "-u", "agent.py", "--x"]) == 2
    assert program_index(["node", "dist/index.js"]) == 1
    assert program_index(["env", "A=1", "-i", "gemini", "--acp"]) == 3
    assert program_index(["python3"]) == 0


def test_a_command_running_an_entrys_program_takes_its_settings() -> None:
    spec = agent_from_command("/opt/bin/gemini --acp --debug", REGISTRY, resolve=no_files)
    assert spec.missing_file == "empty"
    assert spec.env == {"A": "1"}
    assert spec.command == ("/opt/bin/gemini", "--acp", "--debug")
    assert spec.name == "/opt/bin/gemini --acp --debug"  # never a registered name
    assert spec.title == "Gemini CLI: /opt/bin/gemini --acp --debug"
    assert spec.source == "command line"
    assert spec.overrides == {}


def test_exactly_an_entrys_command_is_that_entry() -> None:
    assert agent_from_command("gemini --acp", REGISTRY, resolve=no_files) is REGISTRY["gemini"]
    assert agent_from_command("codex-acp", REGISTRY, resolve=no_files) is REGISTRY["codex"]


def test_among_entries_of_one_program_the_one_sharing_most_arguments_wins() -> None:
    assert (
        matching_entry(["gemini", "--acp", "-m", "pro", "-y"], REGISTRY) is REGISTRY["gemini-pro"]
    )
    assert matching_entry(["gemini", "--acp", "-y"], REGISTRY) is REGISTRY["gemini"]
    assert matching_entry(["gemini"], REGISTRY) is REGISTRY["gemini"]  # a tie: the first


def test_other_programs_and_scripts_known_only_by_name_get_the_defaults() -> None:
    assert matching_entry(["my-agent", "--acp"], REGISTRY) is None
    assert matching_entry(["geminix", "--acp"], REGISTRY) is None
    # a script's file name says little (index.js, main.py): only the same file matches
    assert matching_entry(["python3", "elsewhere/demo_agent.py"], REGISTRY) is None
    plain = agent_from_command("my-agent --acp", REGISTRY, resolve=no_files)
    assert (plain.missing_file, plain.name, plain.title) == ("error", "my-agent --acp", plain.name)


def test_the_same_file_once_resolved_matches() -> None:
    files = {"g": "/usr/lib/gemini/index.js", "gemini": "/usr/lib/gemini/index.js"}
    files |= {"acp/demo_agent.py": "/cockpit/acp/demo_agent.py"}
    files |= {"/cockpit/acp/demo_agent.py": "/cockpit/acp/demo_agent.py"}
    assert matching_entry(["g", "--acp"], REGISTRY, files.get) is REGISTRY["gemini"]
    assert matching_entry(["python3", "acp/demo_agent.py"], REGISTRY, files.get) is REGISTRY["demo"]


def test_a_link_to_an_entrys_program_is_resolved_on_disk(tmp_path: Path) -> None:
    real = tmp_path / "real-gemini"
    real.write_text("#!/bin/sh\n")
    real.chmod(0o755)
    (tmp_path / "g").symlink_to(real)
    registry = {"gemini": entry("gemini", str(real), "--acp", missing_file="empty")}
    spec = agent_from_command(f"{tmp_path / 'g'} --acp", registry)
    assert spec.missing_file == "empty"
    assert resolve_program(str(tmp_path / "nothing")) is None


def test_missing_file_is_set_for_any_command_over_the_entrys() -> None:
    given_spec = agent_from_command("my-agent", REGISTRY, missing_file="empty", resolve=no_files)
    assert (given_spec.missing_file, given_spec.overrides) == ("empty", {"missing_file": "empty"})
    over = agent_from_command("gemini --acp", REGISTRY, missing_file="error", resolve=no_files)
    assert over.missing_file == "error" and over.name == "gemini --acp"  # not the entry
    assert over.env == {"A": "1"}
    with pytest.raises(ValueError, match="missing_file must be"):
        agent_from_command("my-agent", missing_file="sometimes")
    with pytest.raises(ValueError, match="empty"):
        agent_from_command("  ")


def test_stored_settings_from_another_version_are_left_out() -> None:
    base = REGISTRY["codex"]
    assert with_overrides(base, {"missing_file": "maybe", "colour": "red"}) is base
    assert with_overrides(base, {"missing_file": "empty"}).missing_file == "empty"


words = st.text(alphabet=st.sampled_from("abc-=./"), min_size=1, max_size=6)


@given(name=st.sampled_from(sorted(REGISTRY)), extra=st.lists(words, max_size=4))
def test_an_entrys_command_with_any_arguments_keeps_the_entrys_settings(
    name: str, extra: list[str]
) -> None:
    registered = REGISTRY[name]
    files = {registered.command[program_index(registered.command)]: "/the/file"}
    argv = (*registered.command, *extra)
    spec = agent_from_command(argv, REGISTRY, resolve=files.get)
    assert spec.command == argv
    theirs = matching_entry(argv, REGISTRY, files.get)
    assert theirs is not None and theirs.command[0] == registered.command[0]
    assert (spec.missing_file, spec.env, spec.nice) == (
        theirs.missing_file,
        theirs.env,
        theirs.nice,
    )
    assert (spec is theirs) == (argv == theirs.command)


# -- through real subprocesses ---------------------------------------------------------------


@pytest.fixture
def gemini_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `gemini` program on PATH that is the tiny agent: a command running it matches the
    bundled Gemini CLI entry (missing_file = "empty", GEMINI_CLI_NO_RELAUNCH=true)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "gemini"
    program.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(TINY)} "$@"\n')
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    return program


def run(home: Path, project: Path, *args: str) -> str:
    result = cockpit(home, "run", "--cwd", str(project), *args, "read-missing")
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_command_running_gemini_reads_a_missing_file_as_empty(
    tmp_path: Path, project_dir: Path, gemini_on_path: Path
) -> None:
    home = tmp_path / "home"
    assert EMPTY in run(home, project_dir, "--agent-cmd", "gemini --acp")
    shown = run(home, project_dir, "--agent-cmd", f"{gemini_on_path} --acp --model x")
    assert EMPTY in shown and "GEMINI_CLI_NO_RELAUNCH=true" in shown  # the entry's env too
    assert NOT_FOUND in run(
        home, project_dir, "--agent-cmd", "gemini --acp", "--missing-file", "error"
    )


def test_any_other_command_gets_the_error_unless_the_flag_says_empty(
    tmp_path: Path, project_dir: Path
) -> None:
    home = tmp_path / "home"
    command = f"{sys.executable} {TINY}"
    assert "(code -32002)" in run(home, project_dir, "--agent-cmd", command)
    assert EMPTY in run(home, project_dir, "--agent-cmd", command, "--missing-file", "empty")
    misuse = cockpit(home, "run", "--missing-file", "empty", "hi")
    assert misuse.returncode == 2 and "--missing-file goes with --agent-cmd" in misuse.stderr


async def test_a_stored_session_of_a_command_reopens_with_its_settings(
    tmp_path: Path, project_dir: Path, gemini_on_path: Path
) -> None:
    """Created by `cockpit run` (one with the flag, one matching Gemini), reopened by a
    new engine that was given no command: the same settings, the same answers."""
    home = tmp_path / "home"
    command = f"{sys.executable} {TINY}"
    assert EMPTY in run(home, project_dir, "--agent-cmd", command, "--missing-file", "empty")
    assert EMPTY in run(home, project_dir, "--agent-cmd", "gemini --acp -m x")
    engine = await Engine.open(home, registry=load_registry(home / "config"))
    try:
        records = await engine.sessions()
        assert sorted(r.agent for r in records) == sorted([command, "gemini --acp -m x"])
        for record in records:
            spec = engine.agent_of(record)
            assert spec.missing_file == "empty", record.agent
            assert spec.command == record.command
            assert await engine.prompt(record.id, "read-missing") == "end_turn"
            last = (await engine.store.all_rows(record.id))[-1]
            assert last.text.startswith(EMPTY), last.text
    finally:
        await engine.close()


def tui_args(*argv: str) -> argparse.Namespace:
    return tui_parser().parse_args(list(argv))


def test_the_tui_takes_the_same_agent_arguments(tmp_path: Path) -> None:
    registry = load_registry(tmp_path)
    assert tui_agent(tui_args(".")) is None
    # A name is the engine's to look up: the service reads its own agents.toml.
    assert tui_agent(tui_args("--agent", "codex")) == "codex"
    assert tui_agent(tui_args("--agent", "added-since")) == "added-since"
    spec = tui_agent(tui_args("--agent-cmd", "gemini --acp -y", "--missing-file", "error"))
    # A command comes back as how it runs: the service's registry does not know it.
    assert isinstance(spec, AgentSpec)
    assert spec.name == "gemini --acp -y"
    assert spec.missing_file == "error"
    assert spec.env == registry.get("gemini").env
    assert registry.get("gemini").missing_file == "empty"  # the entry itself is untouched
    with pytest.raises(ValueError, match="--missing-file goes with --agent-cmd"):
        tui_agent(tui_args("--missing-file", "empty"))
    with pytest.raises(SystemExit):
        tui_args("--agent", "demo", "--agent-cmd", "x")


async def test_the_tui_opens_a_session_of_a_command_and_reopens_it_after_a_restart(
    tmp_path: Path, project_dir: Path, gemini_on_path: Path
) -> None:
    """`cockpit --agent-cmd "gemini --acp -y"`: the first session runs the command with
    Gemini's settings; opened again with no agent argument, it reopens with them."""
    home = tmp_path / "home"

    def app_for(*argv: str) -> CockpitApp:
        registry = load_registry(home / "config")
        chosen = tui_agent(tui_args(*argv, str(project_dir)))

        async def open_engine() -> Engine:
            return await Engine.open(home, registry=registry, clock=lambda: NOW)

        return CockpitApp(
            open_engine,
            folder=project_dir,
            agent=chosen,
            blink=False,
            settings_file=home / "config" / "settings.json",
            themes_dir=home / "config" / "themes",
        )

    async def read_missing(app: CockpitApp, started: bool) -> str:
        async with app.run_test(size=(100, 30)) as pilot:
            # a new session's agent starts with it; a reopened one's with the prompt
            await (ready(app) if started else wait_until(lambda: app.current is not None))
            session = app.current or ""
            view = app.query_one(TranscriptView)
            if not started:
                await wait_until(
                    lambda: any(bubble.kind == "agent" for bubble in view.model),
                    what="the first run's reply, read back",
                )
            replies = sum(bubble.kind == "agent" for bubble in view.model)
            await send(app, pilot, "read-missing")
            await wait_until(
                lambda: sum(bubble.kind == "agent" for bubble in view.model) > replies,
                what="this run's reply",
            )
            await wait_until(lambda: app.engine.status(session) == Status.READY)
            rows = await app.engine.rows(session)
            record = app.records[session]
            return f"{record.agent} | {rows[-1].text}"

    first = await read_missing(app_for("--agent-cmd", "gemini --acp -y"), started=True)
    assert first.startswith(f"gemini --acp -y | {EMPTY}"), first
    again = await read_missing(app_for(), started=False)
    assert again.startswith(f"gemini --acp -y | {EMPTY}"), again
