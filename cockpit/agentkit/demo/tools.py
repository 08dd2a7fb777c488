"""The demo scenarios that call tools through the client: reading a file, an edit that
asks permission, commands in client terminals (a short one, a slow build, a flood past
the output limit) and attempts to reach files outside the session folder."""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable

from acp.core import RequestError
from acp.helpers import text_block, tool_content, tool_diff_content, tool_terminal_ref
from acp.schema import ToolCallLocation, ToolCallUpdate, ToolKind

from cockpit.agentkit.demo.turn import Turn, TurnCancelled
from cockpit.agentkit.errors import error_text

READ_LINES = 10
NOTES_FILE = "demo-notes.md"
DECISIONS = {"allow": "allowed once", "allow-always": "always allowed", "accept": "accept mode"}
"""The permission outcomes that allow a tool to run, as the summary words them."""

NOTES_TEXT = (
    "# Demo notes\n\n"
    "Written by the Cockpit demo agent after asking for permission.\n\n"
    "- It read a file, asked before this edit, and then ran one command.\n"
    "- Delete this file whenever you like.\n"
)
TERMINAL_ARGS = ["-c", "print('hello from the terminal')"]

BUILD_ARGS = [
    "-c",
    "import time\nfor step in range(1, 6):\n"
    "    print(f'build step {step} of 5', flush=True)\n    time.sleep(0.3)\nprint('built')",
]
"""A command that prints for about a second and a half: its card shows the output live."""

OUTPUT_LIMIT = 4096
"""The `outputByteLimit` the demo agent asks for on its terminals."""
FLOOD_LINES = 400
FLOOD_ARGS = [
    "-c",
    f"for n in range(1, {FLOOD_LINES + 1}):\n"
    f"    print(f'flood line {{n:03d}} of {FLOOD_LINES}: ' + 'x' * 30)",
]
"""A command that prints about 20 KB, five times the output limit."""


def first_file(cwd: str) -> str | None:
    """The file the read tool shows: README.md, else the first regular file by name."""
    readme = os.path.join(cwd, "README.md")
    if os.path.isfile(readme):
        return readme
    try:
        names = sorted(entry.name for entry in os.scandir(cwd) if entry.is_file())
    except OSError:
        return None
    return os.path.join(cwd, names[0]) if names else None


def local_text(path: str) -> str | None:
    """The current text of `path`, or None when it does not exist (a diff's old text)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def make_escape_link(cwd: str) -> str:
    """Create `<cwd>/escape-link` pointing at cwd's parent unless it exists; say what happened."""
    link = os.path.join(cwd, "escape-link")
    if os.path.lexists(link):
        return f"`{link}` already existed"
    try:
        os.symlink(os.path.dirname(os.path.abspath(cwd)), link)
    except OSError as error:
        return f"could not create `{link}`: {error}"
    return f"created `{link}` pointing at the parent folder"


async def tool_read(turn: Turn) -> str:
    """Read the first lines of a file of the session folder through the client."""
    path = first_file(turn.session.cwd)
    call_id = turn.call_id()
    if path is None:
        await turn.say("First I would read a file, but this folder has none.")
        await turn.start_tool(call_id, "Read (nothing to read)", "read", turn.session.cwd)
        await turn.finish_tool(call_id, True, "Nothing to read: the folder holds no file.")
        return "found nothing to read"
    name = os.path.basename(path)
    await turn.say(f"First I will read `{name}`.")
    await turn.start_tool(call_id, f"Read {name}", "read", path)
    await turn.progress(call_id)
    try:
        text = await turn.read_file(path, limit=READ_LINES)
    except RequestError as error:
        await turn.finish_tool(call_id, False, error_text(error))
        return f"could not read `{name}`"
    lines = text.splitlines()[:READ_LINES]
    await turn.finish_tool(call_id, True, "\n".join(lines))
    return f"read {len(lines)} line(s) of `{name}`"


async def tool_edit(turn: Turn) -> str:
    """Write demo-notes.md through the client after asking permission (not in accept mode)."""
    path = os.path.join(turn.session.cwd, NOTES_FILE)
    diff = tool_diff_content(path, NOTES_TEXT, local_text(path))
    call_id = turn.call_id()
    title = f"Write {NOTES_FILE}"
    await turn.start_tool(call_id, title, "edit", path, [diff])
    decision = "accept"
    if turn.session.mode != "accept":
        call = ToolCallUpdate(
            tool_call_id=call_id,
            title=title,
            kind="edit",
            status="pending",
            content=[diff],
            locations=[ToolCallLocation(path=path)],
        )
        decision = await turn.ask_permission(call)
    if decision == "cancelled":
        raise TurnCancelled  # no tool update: the client marks the call cancelled itself
    if decision not in DECISIONS:
        await turn.finish_tool(call_id, False, "You rejected the edit; nothing was written.")
        return f"did not write `{NOTES_FILE}`: you rejected it"
    await turn.progress(call_id)
    try:
        await turn.write_file(path, NOTES_TEXT)
    except RequestError as error:
        await turn.finish_tool(call_id, False, error_text(error), diff)
        return f"could not write `{NOTES_FILE}`"
    await turn.finish_tool(call_id, True, f"Wrote {len(NOTES_TEXT)} characters.", diff)
    return f"wrote `{NOTES_FILE}` ({DECISIONS[decision]})"


async def tool_execute(
    turn: Turn, args: list[str] = TERMINAL_ARGS, title: str = "Run a command"
) -> str:
    """Run a command in a client terminal after asking permission (always asked)."""
    call_id = turn.call_id()
    command = f"{sys.executable} {' '.join(args)}"
    await turn.start_tool(call_id, title, "execute")
    call = ToolCallUpdate(
        tool_call_id=call_id,
        title=title,
        kind="execute",
        status="pending",
        content=[tool_content(text_block(command))],
        raw_input={"command": sys.executable, "args": args},
    )
    decision = await turn.ask_permission(call)
    if decision == "cancelled":
        raise TurnCancelled
    if decision not in DECISIONS:
        await turn.finish_tool(call_id, False, "You rejected the command; nothing ran.")
        return "did not run the command: you rejected it"
    if not turn.can("terminal"):
        await turn.finish_tool(call_id, False, "The client offers no terminal.")
        return "could not run the command: the client offers no terminal"
    try:
        code, output = await run_in_terminal(turn, call_id, args)
    except RequestError as error:
        await turn.finish_tool(call_id, False, error_text(error))
        return "could not run the command"
    return f"ran a command (exit code {code}, output {output.strip()!r})"


async def run_in_terminal(turn: Turn, call_id: str, args: list[str]) -> tuple[int | None, str]:
    """Create a client terminal, embed it in the tool call, wait, collect, release."""
    conn = turn.conn
    sid = turn.session_id
    terminal = await conn.create_terminal(
        session_id=sid,
        command=sys.executable,
        args=args,
        cwd=turn.session.cwd,
        output_byte_limit=OUTPUT_LIMIT,
    )
    embedded = tool_terminal_ref(terminal.terminal_id)
    await turn.progress(call_id, embedded)
    try:
        status = await conn.wait_for_terminal_exit(session_id=sid, terminal_id=terminal.terminal_id)
        result = await conn.terminal_output(session_id=sid, terminal_id=terminal.terminal_id)
    finally:
        await conn.release_terminal(session_id=sid, terminal_id=terminal.terminal_id)
    code = status.exit_code
    await turn.finish_tool(call_id, code == 0, result.output or "(no output)", embedded)
    return code, result.output


async def run_tools(turn: Turn) -> None:
    """Three tool calls (read, edit, execute), a sentence before each, then a summary."""
    done = [await tool_read(turn)]
    turn.check()
    await turn.say(f"Now I will write a few notes to `{NOTES_FILE}`.")
    done.append(await tool_edit(turn))
    turn.check()
    await turn.say("Last, I will run a short command in a terminal.")
    done.append(await tool_execute(turn))
    await turn.say("Summary: I " + "; I ".join(done) + ".")


async def run_build(turn: Turn) -> None:
    """One command that takes a while and prints as it goes."""
    await turn.say("Building the project.")
    result = await tool_execute(turn, BUILD_ARGS, "Build the project")
    await turn.say(f"Done: I {result}.")


async def run_flood(turn: Turn) -> None:
    """One command whose output is five times the terminal's output limit."""
    await turn.say("Running a command that prints far more than the terminal keeps.")
    result = await tool_execute(turn, FLOOD_ARGS, "Print 20 KB")
    if result.startswith("ran a command"):
        result = f"ran it; the terminal kept only the last {OUTPUT_LIMIT:,} bytes of its output"
    await turn.say(f"Done: I {result}.")


async def run_permission(turn: Turn) -> None:
    """One edit that waits for the permission answer, then says what was decided."""
    await turn.say(f"I would like to write `{NOTES_FILE}`; I am asking first.")
    result = await tool_edit(turn)
    await turn.say(f"Decision received: I {result}.")


async def attempt_outside(
    turn: Turn, kind: ToolKind, title: str, path: str, action: Callable[[], Awaitable[str]]
) -> str:
    """Report one attempt to leave the session folder as a tool call; describe the outcome."""
    call_id = turn.call_id()
    await turn.start_tool(call_id, title, kind, path)
    try:
        result = await action()
    except RequestError as error:
        await turn.finish_tool(call_id, False, error_text(error))
        return f"- {title}: refused: {error_text(error)}\n"
    await turn.finish_tool(call_id, True, f"Not refused: {result}")
    return f"- {title}: **not refused** ({result})\n"


async def run_outside(turn: Turn) -> None:
    """Try to read and write outside the session folder through the client."""
    cwd = turn.session.cwd
    await turn.say("I will now try to reach files outside this session's folder.")
    link_note = make_escape_link(cwd)

    async def read(path: str) -> str:
        return f"read {len(await turn.read_file(path))} characters"

    async def write(path: str) -> str:
        await turn.write_file(path, "written by the Cockpit demo agent\n")
        return "wrote the file"

    up = os.path.join(cwd, "..", "outside.txt")
    linked = os.path.join(cwd, "escape-link", "outside.txt")
    target = "/tmp/cockpit-demo-outside.txt"
    report = [
        await attempt_outside(turn, "read", f"Read {up}", up, lambda: read(up)),
        await attempt_outside(
            turn, "read", "Read /etc/hostname", "/etc/hostname", lambda: read("/etc/hostname")
        ),
        await attempt_outside(turn, "edit", f"Write {target}", target, lambda: write(target)),
        await attempt_outside(turn, "read", f"Read {linked}", linked, lambda: read(linked)),
    ]
    await turn.say(f"What happened ({link_note}):\n\n" + "".join(report))
