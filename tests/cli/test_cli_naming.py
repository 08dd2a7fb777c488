"""`cockpit show` (and every command that takes a session) finds it by the start of its id
or by its title, says which sessions an ambiguous name fits; `cockpit ls` heads its
columns on a terminal only. Both with `--local` and through a running service."""

from __future__ import annotations

import contextlib
import os
import pty
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from store.store import Store
from tests.support.helpers import new_session
from tests.support.service_helpers import (
    cockpit,
    cockpit_command,
    cockpit_env,
    services_stopped,
    spawn_cockpit,
)

TITLES = ("Fix the greeting", "Fix the tests", "Write the README")


async def titled_sessions(home: Path) -> dict[str, str]:
    """A store with a session under each of TITLES, each with one prompt: title -> id."""
    home.mkdir(parents=True, exist_ok=True)
    ids: dict[str, str] = {}
    async with await Store.open(home / "cockpit.db") as store:
        for title in TITLES:
            session = await new_session(store)
            await store.update_session(session, title=title)
            await store.begin_turn(session, f"prompt of {title}")
            ids[title] = session
    return ids


@contextlib.contextmanager
def running_service(home: Path) -> Iterator[None]:
    """The store's service, started in the foreground of a process of its own."""
    with services_stopped(home):
        service = spawn_cockpit("service", home=home)
        deadline = time.monotonic() + 30
        while cockpit("service", "status", home=home).returncode != 0:
            assert service.poll() is None, service.communicate()
            assert time.monotonic() < deadline, "the service did not start"
            time.sleep(0.2)
        try:
            yield
        finally:
            service.terminate()
            service.communicate(timeout=30)


REACHES = ((), ("--local",))
"""Attached to the store's service (the default), and with the engine in the command."""


def reached(reach: tuple[str, ...], home: Path) -> contextlib.AbstractContextManager[None]:
    """A service running for the commands attached to it; nothing for `--local`."""
    return contextlib.nullcontext() if reach else running_service(home)


async def test_show_finds_a_session_by_its_title(isolated_home: Path) -> None:
    ids = await titled_sessions(isolated_home)
    for reach in REACHES:
        with reached(reach, isolated_home):
            named = {
                "Write the README": "Write the README",
                "write the": "Write the README",
                ids["Fix the tests"][:5]: "Fix the tests",
            }
            for name, title in named.items():
                shown = cockpit(*reach, "show", name, home=isolated_home)
                assert shown.returncode == 0, shown.stderr
                assert f"prompt of {title}" in shown.stdout


async def test_an_ambiguous_title_exits_2_listing_the_matches(isolated_home: Path) -> None:
    ids = await titled_sessions(isolated_home)
    for reach in REACHES:
        with reached(reach, isolated_home):
            shown = cockpit(*reach, "show", "fix", home=isolated_home)
            assert shown.returncode == 2
            assert shown.stdout == ""
            lines = shown.stderr.splitlines()
            assert lines[0] == (
                "cockpit: 2 sessions have a title starting 'fix'; name one by its id:"
            )
            assert sorted(lines[1:]) == sorted(
                f"  {ids[title]}  {title}" for title in ("Fix the greeting", "Fix the tests")
            )
            missing = cockpit(*reach, "show", "nothing like it", home=isolated_home)
            assert missing.returncode == 2
            assert missing.stderr == (
                "cockpit: no session with an id or a title starting 'nothing like it'\n"
            )


def on_a_terminal(args: tuple[str, ...], home: Path) -> str:
    """What `cockpit ARGS` writes to a terminal (a pseudo-terminal as its stdout)."""
    primary, secondary = pty.openpty()
    try:
        process = subprocess.run(
            cockpit_command(*args),
            env=cockpit_env(home),
            cwd=home.parent,
            stdin=subprocess.DEVNULL,
            stdout=secondary,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
        assert process.returncode == 0, process.stderr
        os.close(secondary)
        secondary = -1
        output = b""
        with contextlib.suppress(OSError):  # EIO once everything written is read
            while chunk := os.read(primary, 65536):
                output += chunk
        return output.decode().replace("\r\n", "\n")
    finally:
        os.close(primary)
        if secondary >= 0:
            os.close(secondary)


async def test_ls_heads_its_columns_on_a_terminal_only(isolated_home: Path) -> None:
    await titled_sessions(isolated_home)
    for reach in REACHES:
        with reached(reach, isolated_home):
            shown = on_a_terminal((*reach, "ls"), isolated_home).splitlines()
            piped = cockpit(*reach, "ls", home=isolated_home).stdout.splitlines()
            as_json = cockpit(*reach, "ls", "--json", home=isolated_home).stdout
            # The same lines under the header (their ages may have moved on).
            assert [line.split()[0] for line in shown[1:]] == [line.split()[0] for line in piped]
            assert len(piped) == len(TITLES)
            header = shown[0]
            assert header.split() == ["ID", "STATUS", "AGENT", "AGE", "TITLE", "[FOLDER]"]
            first = piped[0]
            for column, value in (("STATUS", "closed"), ("TITLE", "Write the README")):
                assert header.index(column) == first.index(value)
            assert as_json.lstrip().startswith("[")
