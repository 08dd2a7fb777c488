"""A Claude turn's tool calls: each tool the model may call (reads, writes and edits
through the client's fs/*, commands in a client terminal, listings and searches run
here), the permission asked first when the mode says so, and the result logged and shown.

`ToolCalls` is the half of `Turn` (`turn.py`) that runs tools; the turn owns the state it
declares and runs the step loop that hands it the calls."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from acp.core import AgentSideConnection, RequestError
from acp.helpers import (
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_tool_call,
)
from acp.schema import AllowedOutcome, ToolCallLocation, ToolCallUpdate, ToolKind

from cockpit.agentkit.claude.config import (
    COMMAND_TIMEOUT,
    LIST_ENTRIES,
    LIST_SKIP,
    OUTPUT_BYTES,
    READ_LIMIT,
    READ_LINES,
)
from cockpit.agentkit.claude.instructions import CHANGES
from cockpit.agentkit.claude.mcp_tools import McpTool
from cockpit.agentkit.claude.session import Session
from cockpit.agentkit.claude.tool_input import (
    ToolFailure,
    argument_path,
    int_arg,
    relative,
    resolve,
    str_arg,
)
from cockpit.agentkit.errors import error_text
from cockpit.agentkit.permission_options import ALLOWING, PERMISSION_OPTIONS
from store import entries as log_entries


def clip(text: str, limit: int = READ_LIMIT) -> str:
    """`text` cut to `limit` characters, saying so."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... cut: {len(text) - limit} more characters]"


@dataclass
class Call:
    """A tool call the model made in this step."""

    id: str
    name: str
    input: dict[str, Any]
    title: str
    kind: ToolKind
    locations: list[str]


@dataclass
class Outcome:
    """What a tool returns to the model, and how the client shows it."""

    content: str
    ok: bool = True
    shown: list[Any] = field(default_factory=list)
    """ACP tool content for the final update (defaults to the text)."""
    replay: list[Any] | None = None
    """ACP tool content for a reload, when it differs (a terminal is gone by then)."""


class ToolCalls:
    """The tool half of a turn: runs the model's calls and logs their results."""

    session: Session
    conn: AgentSideConnection
    id: str
    step: int
    unanswered: dict[str, Call]
    """The calls of this step that have no result yet."""

    async def send(self, update: Any) -> None:
        """Send one session/update of this turn's session to the client."""
        await self.conn.session_update(session_id=self.session.id, update=update)

    async def run_tool(self, call: Call) -> None:
        """Run one tool call (asking first when the mode says so) and log its result."""
        try:
            outcome = await self.tool_outcome(call)
        except ToolFailure as failure:
            outcome = Outcome(str(failure), ok=False)
        except RequestError as error:
            outcome = Outcome(f"The client refused: {error_text(error)}", ok=False)
        await self.record_result(call, outcome)

    async def record_result(self, call: Call, outcome: Outcome, notify: bool = True) -> None:
        """Log a call's result (as the model will read it, and as a reload shows it), then
        show it to the client unless `notify` is off."""
        status: Literal["completed", "failed"] = "completed" if outcome.ok else "failed"
        shown = outcome.shown or [tool_content(text_block(clip(outcome.content, 4000)))]
        replay = outcome.replay if outcome.replay is not None else shown
        display = {
            "status": status,
            "content": [item.model_dump(by_alias=True, exclude_none=True) for item in replay],
        }
        self.unanswered.pop(call.id, None)
        await self.session.append(
            self.id,
            self.step,
            log_entries.tool_result(
                call.id, call.name, clip(outcome.content), not outcome.ok, display
            ),
        )
        if notify:
            await self.send(update_tool_call(call.id, status=status, content=shown))

    async def tool_outcome(self, call: Call) -> Outcome:
        """Run the call's tool; a ToolFailure for bad input, an unknown tool or plan mode."""
        name, arguments = call.name, call.input
        if "_unparsed" in arguments:
            raise ToolFailure("The tool input was not valid JSON; send it again.")
        if name in CHANGES and self.session.mode == "plan":
            raise ToolFailure(
                "Not allowed in plan mode: describe the change instead. The user can switch "
                "the session to another mode to let you apply it."
            )
        server_tool = self.session.servers.find(name)
        if server_tool is not None:
            return await self.call_server(call, server_tool)
        handler = {
            "read_file": self.read_file,
            "write_file": self.write_file,
            "edit_file": self.edit_file,
            "run_command": self.run_command,
            "list_files": self.list_files,
            "search": self.search,
        }.get(name)
        if handler is None:
            raise ToolFailure(f"There is no tool called {name!r}.")
        return await handler(call)

    async def call_server(self, call: Call, tool: McpTool) -> Outcome:
        """A tool of an MCP server the session was handed: asked first (the plan tool
        excepted: it only writes this session's plan in Cockpit), refused in plan mode."""
        if tool.asks:
            if self.session.mode == "plan":
                raise ToolFailure(
                    f"Not allowed in plan mode: {tool.name} of the MCP server {tool.server} "
                    "may change something. Describe what you would call it for instead."
                )
            shown = tool_content(
                text_block(f"{tool.title}\n{json.dumps(call.input, ensure_ascii=False)}")
            )
            if not await self.permission(call, [shown], call.input):
                return Outcome("The user rejected this call; the tool did not run.", ok=False)
        await self.progress(call)
        result = await self.session.servers.call(tool, call.input)
        return Outcome(result.text, ok=not result.is_error)

    async def progress(self, call: Call, *content: Any) -> None:
        """Mark the call in progress, replacing its content when some is given."""
        await self.send(
            update_tool_call(call.id, status="in_progress", content=list(content) or None)
        )

    async def permission(self, call: Call, content: list[Any], raw: dict[str, Any]) -> bool:
        """Ask the client; True when the user allowed it. A dismissed request counts as a
        rejection (a real cancel cancels this whole task instead)."""
        request = ToolCallUpdate(
            tool_call_id=call.id,
            title=call.title,
            kind=call.kind,
            status="pending",
            content=content,
            locations=[ToolCallLocation(path=p) for p in call.locations] or None,
            raw_input=raw,
        )
        response = await self.conn.request_permission(
            session_id=self.session.id, tool_call=request, options=PERMISSION_OPTIONS
        )
        outcome = response.outcome
        return isinstance(outcome, AllowedOutcome) and outcome.option_id in ALLOWING

    async def read_text(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        """Read a file through the client (fs/read_text_file)."""
        response = await self.conn.read_text_file(
            session_id=self.session.id, path=path, line=line, limit=limit
        )
        return response.content

    async def existing_text(self, path: str) -> str | None:
        """The current text of a file, or None when it does not exist yet."""
        try:
            return await self.read_text(path)
        except RequestError as error:
            if error.code == -32002:
                return None
            raise

    async def read_file(self, call: Call) -> Outcome:
        """The read_file tool: a file's lines, cut to READ_LINES unless a limit is given."""
        path = resolve(self.session.cwd, call.input.get("path"))
        offset = int_arg(call.input, "offset")
        limit = int_arg(call.input, "limit")
        await self.progress(call)
        text = await self.read_text(path, offset, limit or READ_LINES)
        lines = text.count("\n")
        note = ""
        if limit is None and lines >= READ_LINES:
            first = offset or 1
            note = f"\n[... showing lines {first}-{first + READ_LINES - 1}; use offset to read on]"
        summary = f"Read {lines} line(s) of {relative(self.session.cwd, path)}"
        return Outcome(clip(text) + note, shown=[tool_content(text_block(summary))])

    async def write_file(self, call: Call) -> Outcome:
        """The write_file tool: a whole file replaced or created, after asking."""
        path = resolve(self.session.cwd, call.input.get("path"))
        content = str_arg(call.input, "content", empty=True)
        old = await self.existing_text(path)
        return await self.change_file(call, path, old, content, "Wrote")

    async def edit_file(self, call: Call) -> Outcome:
        """The edit_file tool: one unique piece of text (or every one) replaced, after asking."""
        path = resolve(self.session.cwd, call.input.get("path"))
        old_text = str_arg(call.input, "old_text")
        new_text = str_arg(call.input, "new_text", empty=True)
        old = await self.existing_text(path)
        if old is None:
            raise ToolFailure(f"{relative(self.session.cwd, path)} does not exist; use write_file.")
        count = old.count(old_text)
        if count == 0:
            raise ToolFailure("old_text was not found in the file; read it again and retry.")
        if count > 1 and not call.input.get("replace_all"):
            raise ToolFailure(
                f"old_text appears {count} times; add surrounding lines to make it unique, "
                "or set replace_all."
            )
        return await self.change_file(call, path, old, old.replace(old_text, new_text), "Edited")

    async def change_file(
        self, call: Call, path: str, old: str | None, new: str, verb: str
    ) -> Outcome:
        """Write `new` to `path` through the client, showing the diff and asking first
        unless the session accepts edits."""
        diff = tool_diff_content(path, new, old)
        if self.session.mode != "accept" and not await self.permission(
            call, [diff], {"path": path}
        ):
            return Outcome("The user rejected this change; nothing was written.", ok=False)
        await self.progress(call, diff)
        await self.conn.write_text_file(session_id=self.session.id, path=path, content=new)
        lines = new.count("\n") + (0 if new.endswith("\n") or not new else 1)
        summary = f"{verb} {relative(self.session.cwd, path)} ({lines} line(s))."
        return Outcome(summary, shown=[diff, tool_content(text_block(summary))])

    async def run_command(self, call: Call) -> Outcome:
        """The run_command tool: a shell command in a client terminal, always asked first."""
        command = str_arg(call.input, "command")
        timeout = int_arg(call.input, "timeout_seconds") or COMMAND_TIMEOUT
        shown = tool_content(text_block(f"$ {command}"))
        if not await self.permission(call, [shown], {"command": command}):
            return Outcome("The user rejected this command; it did not run.", ok=False)
        return await self.in_terminal(call, "/bin/sh", ["-c", command], command, timeout)

    async def list_files(self, call: Call) -> Outcome:
        """The list_files tool: `find` under a folder, skipping LIST_SKIP, sorted and cut."""
        path = resolve(self.session.cwd, call.input.get("path"))
        depth = max(1, min(int_arg(call.input, "depth") or 3, 10))
        prune: list[str] = []
        for name in LIST_SKIP:
            prune += ["-o", "-name", name] if prune else ["-name", name]
        args = [argument_path(self.session.cwd, path), "-maxdepth", str(depth)]
        args += ["(", *prune, ")", "-prune", "-o", "-print"]
        outcome = await self.run_here("find", args, COMMAND_TIMEOUT)
        if not outcome.ok:
            head = outcome.content.partition("\n")[0]
            return Outcome(
                f"Could not list {relative(self.session.cwd, path)}: find failed. "
                + clip(outcome.content),
                ok=False,
                shown=[tool_content(text_block(f"find failed: {head}"))],
            )
        names = sorted(line for line in outcome.content.splitlines()[1:] if line.strip())
        listing = "\n".join(names[:LIST_ENTRIES])
        if len(names) > LIST_ENTRIES:
            listing += f"\n[... {len(names) - LIST_ENTRIES} more]"
        summary = f"{len(names)} entries"
        return Outcome(listing or "(empty)", outcome.ok, [tool_content(text_block(summary))])

    async def search(self, call: Call) -> Outcome:
        """The search tool: `grep -rnIE` under a file or folder, skipping LIST_SKIP."""
        pattern = str_arg(call.input, "pattern")
        path = resolve(self.session.cwd, call.input.get("path"))
        args = ["-rnIE", "--color=never"]
        args += [f"--exclude-dir={name}" for name in LIST_SKIP]
        glob = call.input.get("glob")
        if isinstance(glob, str) and glob.strip():
            args.append(f"--include={glob.strip()}")
        args += ["-e", pattern, "--", argument_path(self.session.cwd, path)]
        outcome = await self.run_here("grep", args, COMMAND_TIMEOUT, found=(0, 1))
        lines = outcome.content.splitlines()[1:]
        matches = [line for line in lines if line.strip()]
        summary = f"{len(matches)} matching line(s)"
        return Outcome(
            "\n".join(matches) or "No matches.",
            outcome.ok,
            [tool_content(text_block(summary))],
        )

    async def run_here(
        self, program: str, args: list[str], seconds: int, found: tuple[int, ...] = (0,)
    ) -> Outcome:
        """Run a listing or a search (find, grep: programs this agent composes itself and
        that change nothing) in the agent's own process, as real agents run their Glob and
        Grep tools: a client terminal is for the user's commands, and Cockpit asks before
        it runs one the agent did not ask for. The first line is the exit status."""
        process = await asyncio.create_subprocess_exec(
            program,
            *args,
            cwd=self.session.cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            output, _ = await asyncio.wait_for(process.communicate(), seconds)
        except TimeoutError:
            process.kill()
            await process.wait()
            return Outcome(f"Killed after {seconds} s.", ok=False)
        text = output[:OUTPUT_BYTES].decode("utf-8", "replace")
        head = f"Exit code {process.returncode}."
        if len(output) > OUTPUT_BYTES:
            head += " (later output was cut)"
        return Outcome(f"{head}\n{clip(text)}", process.returncode in found)

    async def in_terminal(
        self,
        call: Call,
        program: str,
        args: list[str],
        command: str | None,
        seconds: int,
        found: tuple[int, ...] = (0,),
    ) -> Outcome:
        """Run a program in a client terminal shown in the tool call; the outcome's first
        line is the exit status, the rest the output."""
        sid = self.session.id
        terminal = await self.conn.create_terminal(
            session_id=sid,
            command=program,
            args=args,
            cwd=self.session.cwd,
            output_byte_limit=OUTPUT_BYTES,
        )
        ref = tool_terminal_ref(terminal.terminal_id)
        await self.progress(call, ref)
        timed_out = False
        finished = False
        try:
            try:
                status = await asyncio.wait_for(
                    self.conn.wait_for_terminal_exit(
                        session_id=sid, terminal_id=terminal.terminal_id
                    ),
                    seconds,
                )
                code, signal_name = status.exit_code, status.signal
            except TimeoutError:
                timed_out = True
                await self.conn.kill_terminal(session_id=sid, terminal_id=terminal.terminal_id)
                code, signal_name = None, "killed"
            result = await self.conn.terminal_output(
                session_id=sid, terminal_id=terminal.terminal_id
            )
            finished = True
        finally:
            with contextlib.suppress(Exception):
                if not finished:
                    await self.conn.kill_terminal(session_id=sid, terminal_id=terminal.terminal_id)
                await self.conn.release_terminal(session_id=sid, terminal_id=terminal.terminal_id)
        if timed_out:
            head = f"Killed after {seconds} s."
        elif code is None:
            head = f"Ended by signal {signal_name}."
        else:
            head = f"Exit code {code}."
        output = result.output or ""
        if result.truncated:
            head += " (older output was cut)"
        ok = not timed_out and code in found
        text = f"{head}\n{clip(output)}"
        shown = [ref, tool_content(text_block(head))]
        label = f"$ {command}\n" if command else ""
        replay = [tool_content(text_block(f"{label}{clip(output, 4000)}{head}"))]
        return Outcome(text, ok, shown, replay)
