"""Bytes that are not UTF-8 in a prompt. `cockpit run --agent demo "$(printf 'think
\\xff.txt')"` crashed the run, locally and through the service, and `cockpit show` then
failed until the service restarted: the store kept the prompt it could not write in memory,
and every read of the session carried it. Now each such byte becomes U+FFFD, a notice says
where and how many, and the run goes on; the engine cleans what any client sends, and the
store takes no prompt it cannot write."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.api import AgentSpec, EngineAPI
from cockpit.cli.exits import EXIT_OK
from cockpit.text.undecodable import (
    REPLACEMENT,
    decode_bytes,
    lone_surrogates,
    prompt_words,
    replace_undecodable,
    replaced_notice,
)
from store.store import Store
from tests.engine.test_engine_restart import TINY
from tests.support.cli_modes import MODES, run_in
from tests.support.service_helpers import (
    COCKPIT_TIMEOUT,
    cockpit,
    cockpit_command,
    cockpit_env,
)
from tests.support.ui_service_helpers import ENGINES, Engines, engines_of

THINK = "think \udcff.txt"
"""`think \\xff.txt` as Python hands it to `main` (argv is decoded with surrogateescape)."""

# -- the rule ---------------------------------------------------------------------------------


@given(st.binary(max_size=64))
def test_bytes_become_text_that_can_be_stored_with_one_mark_per_bad_byte(data: bytes) -> None:
    text, replaced = decode_bytes(data)
    text.encode("utf-8")  # never raises
    try:
        assert (text, replaced) == (data.decode("utf-8"), 0)
    except UnicodeDecodeError:
        assert replaced > 0
        assert text.count(REPLACEMENT) - data.decode("utf-8", "ignore").count(REPLACEMENT) == (
            replaced
        )
        assert len(data.decode("utf-8", "ignore").encode()) + replaced == len(data)


@given(st.text(max_size=40))
def test_text_with_lone_surrogates_keeps_everything_else(text: str) -> None:
    cleaned, replaced = replace_undecodable(text)
    cleaned.encode("utf-8")
    assert replaced == lone_surrogates(text) == sum("\ud800" <= c <= "\udfff" for c in text)
    assert len(cleaned) == len(text)
    assert all(
        new == (REPLACEMENT if "\ud800" <= old <= "\udfff" else old)
        for old, new in zip(text, cleaned, strict=True)
    )


def test_the_notice_names_where_and_how_many() -> None:
    prompt, notices = prompt_words(["fix", "caf\udce9", "\udcff\udcfe"])
    assert prompt == f"fix caf{REPLACEMENT} {REPLACEMENT}{REPLACEMENT}"
    assert notices == [
        f"Argument 2 of the prompt held 1 byte that is not UTF-8: it became {REPLACEMENT} "
        "(U+FFFD).",
        f"Argument 3 of the prompt held 2 bytes that are not UTF-8: each became {REPLACEMENT} "
        "(U+FFFD).",
    ]
    assert prompt_words(["all", "fine"]) == ("all fine", [])
    assert replaced_notice("The file a.md", 1_200).startswith("The file a.md held 1,200 bytes")


# -- the store --------------------------------------------------------------------------------


async def test_the_store_takes_no_prompt_it_cannot_write(tmp_path: Path) -> None:
    """The cause of `show` failing: the prompt's row could not be written, stayed in memory
    unsaved, and every read of the session carried it."""
    store = await Store.open(tmp_path / "cockpit.db")
    try:
        record = await store.create_session(agent="demo", command=("demo",), cwd=str(tmp_path))
        await store.begin_turn(record.id, THINK, {"blocks": [{"text": "\ud800"}]})
        (row,) = await store.all_rows(record.id)
        assert row.text == f"think {REPLACEMENT}.txt"
        assert row.payload == {"blocks": [{"text": REPLACEMENT}]}
        assert store.failure is None
    finally:
        await store.close()
    reopened = await Store.open(tmp_path / "cockpit.db")
    try:
        assert [row.text for row in await reopened.all_rows(record.id)] == [row.text]
    finally:
        await reopened.close()


# -- the engine, whatever the client ----------------------------------------------------------


@pytest.fixture(params=ENGINES)
async def engines(
    request: pytest.FixtureRequest,
    isolated_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[Engines]:
    monkeypatch.delenv("COCKPIT_LOCAL", raising=False)
    async with engines_of(str(request.param), isolated_home, tmp_path / "project") as made:
        made.project.mkdir(parents=True, exist_ok=True)
        yield made


START_TIMEOUT = 60.0
"""Seconds the tiny agent may take to start (a fresh interpreter while the test process's
fork server is still importing, on a busy machine)."""

TINY_SPEC = AgentSpec(name="tiny", command=(sys.executable, TINY), title="tiny")


async def test_the_engine_cleans_what_a_client_sends(engines: Engines) -> None:
    """A client that sends lone surrogates as they came (the engine in this process, or
    JSON's escapes through the service): the agent gets U+FFFD, the session says so, and the
    session reads and takes the next prompt."""
    engine: EngineAPI = await engines.factory()()
    try:
        record = await engine.create_session(TINY_SPEC, engines.project)
        await engine.start(record.id, handshake_timeout=START_TIMEOUT)
        reason = await engine.prompt(record.id, "echo \udcff\udcfe")
        assert reason == "end_turn", await engine.rows(record.id)
        rows = await engine.rows(record.id)
        assert [(row.kind, row.text) for row in rows] == [
            ("user", f"echo {REPLACEMENT}{REPLACEMENT}"),
            ("notice", replaced_notice("The prompt", 2)),
            ("agent", "echo: 'echo \\ufffd\\ufffd'"),
        ]
        assert await engine.prompt(record.id, "echo again") == "end_turn"
        assert (await engine.page(record.id)).rows[-1].text == "echo: 'echo again'"
    finally:
        await engine.close()


# -- the command line -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_prompt_with_bytes_that_are_not_utf8_runs_and_shows(
    mode: str, cli_home: Path, project_dir: Path
) -> None:
    result = run_in(mode, cli_home, "run", "--cwd", str(project_dir), "--agent", "demo", THINK)
    assert result.returncode == EXIT_OK, result.stderr
    assert "Traceback" not in result.stderr
    notice = replaced_notice("Argument 1 of the prompt", 1)
    assert result.stdout.startswith(f"! {notice}\n")
    assert "(thinking)" in result.stdout  # the demo agent's `think` ran
    (session,) = [line.split()[0] for line in run_in(mode, cli_home, "ls").stdout.splitlines()]
    shown = run_in(mode, cli_home, "show", session)
    assert shown.returncode == 0, shown.stderr
    assert f"> think {REPLACEMENT}.txt" in shown.stdout
    assert shown.stdout.count("not UTF-8") == 1  # the command line's notice, not the engine's
    again = run_in(mode, cli_home, "run", "--cwd", str(project_dir), "--agent", "demo", "think")
    assert again.returncode == EXIT_OK, again.stderr


def test_send_file_with_bytes_that_are_not_utf8(cli_home: Path, project_dir: Path) -> None:
    bad = project_dir / "plan.md"
    bad.write_bytes(b"tour \xff\xfe \xc3")
    first = cockpit("run", "--cwd", str(project_dir), "--agent", "demo", "hello", home=cli_home)
    assert first.returncode == EXIT_OK, first.stderr
    session = cockpit("ls", home=cli_home).stdout.split()[0]
    sent = cockpit("send", session, "--file", str(bad), "--wait", home=cli_home)
    assert sent.returncode == EXIT_OK, sent.stderr
    shown = cockpit("show", session, home=cli_home).stdout
    assert f"! {replaced_notice(f'The file {bad}', 3)}" in shown
    assert f"> tour {REPLACEMENT}{REPLACEMENT} {REPLACEMENT}" in shown
    piped = subprocess.run(
        cockpit_command("send", session, "--file", "-"),
        input=b"tour \xff",
        env=cockpit_env(cli_home),
        capture_output=True,
        timeout=COCKPIT_TIMEOUT,
        check=False,
    )
    assert piped.returncode == EXIT_OK, piped.stderr
    shown = cockpit("show", session, home=cli_home).stdout
    assert f"! {replaced_notice('Standard input', 1)}" in shown
