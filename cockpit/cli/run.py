"""`cockpit run`: one prompt in a new session, its reply streamed to stdout, questions asked
on the terminal (or refused without one)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import TextIO

from cockpit.api import (
    EngineAPI,
    EngineEvent,
    Frame,
    FramesEvent,
    NotSaved,
    PermissionEvent,
    PermissionRequest,
    ProblemEvent,
    Row,
    SavingEvent,
    ShellRun,
    StartError,
    Status,
    StatusEvent,
    policy_choice,
    read_shell_run,
    read_worktree,
)
from cockpit.cli.arguments import reach_of, resolve_agent
from cockpit.cli.exits import (
    EXIT_AGENT,
    EXIT_OK,
    EXIT_SERVICE,
    EXIT_STORE,
    EXIT_USAGE,
    exit_message,
    run_exit,
    saving_message,
    service_gone,
)
from cockpit.cli.form_answers import form_lines
from cockpit.cli.sign_in import sign_in_on_terminal, ways
from cockpit.cli.worktrees import worktree_request
from cockpit.client import open_engine
from cockpit.text.sanitize import StreamCleaner, printable
from cockpit.text.textout import plan_lines, shell_ending, tool_line, tool_output
from cockpit.text.undecodable import prompt_words
from store import ViewTranscript


class StreamPrinter:
    """Prints a live session to a stream as it arrives: text as it streams, one line per
    tool call state, plans, decisions and notices."""

    def __init__(self, out: TextIO, session: str, *, sanitize: bool) -> None:
        self.out = out
        self.session = session
        self.sanitize = sanitize
        self.view = ViewTranscript()
        self._last_key: str | None = None
        self._tool_lines: dict[str, str] = {}
        self._notes: dict[str, str] = {}
        """The line printed for each notice, decision or error, by key."""
        self._renewed: dict[str, str] = {}
        """The last line of each one replaced since (a count that grew), for the end."""
        self._at_line_start = True
        self._cleaner = StreamCleaner()
        """On a terminal: an escape sequence cut between two chunks is held until it ends."""

    def write(self, text: str) -> None:
        if not text:
            return
        self.out.write(self._cleaner.feed(text) if self.sanitize else text)
        self._at_line_start = text.endswith("\n")
        self.out.flush()

    def _block(self, key: str, header: str = "") -> None:
        if self._last_key != key:
            self.out.write(self._cleaner.flush())  # the message before has ended
            if self._last_key is not None:
                self.write("\n" if self._at_line_start else "\n\n")
            self._last_key = key
            self.write(header)

    def frame(self, frame: Frame) -> None:
        """Print what one frame adds. Streamed text is printed as the fold reports it
        appended, never by reading the whole text back (that made a long reply cost the
        square of its length); a read that does not extend what was printed starts over
        on a new line."""
        change = self.view.fold(frame)
        if change is None or frame.kind == "user":
            return
        bubble, appended = change
        if frame.kind in ("agent", "thought"):
            self._block(frame.key, "(thinking) " if frame.kind == "thought" else "")
            self.write(appended if appended is not None else "\n" + bubble.text)
        elif frame.kind == "tool":
            line = tool_line(bubble.payload)
            if self._tool_lines.get(frame.key) != line:
                self._tool_lines[frame.key] = line
                self._block(f"{frame.key}:{line}", line)
                output = (
                    tool_output(bubble.payload)
                    if (bubble.payload or {}).get("status") in ("completed", "failed")
                    else ""
                )
                for text in output.splitlines()[:10]:
                    self.write(f"\n    {text}")
        elif frame.kind == "plan":
            self._block(
                f"plan:{frame.seq}:{len(self.view)}",
                "Plan:\n" + "\n".join(f"  {line}" for line in plan_lines(bubble.payload)),
            )
        else:
            mark = {"notice": "! ", "error": "ERROR: ", "permission": "* "}.get(frame.kind, "")
            line = mark + bubble.text
            if frame.key not in self._notes:
                self._notes[frame.key] = line
                self._block(frame.key, line)
            elif line != self._notes[frame.key]:
                self._renewed[frame.key] = line  # printed as it last stood, at the end

    def finish(self) -> None:
        for key, line in self._renewed.items():
            if line != self._notes[key]:
                self._block(f"{key}:renewed", line)
        self.out.write(self._cleaner.flush())
        if not self._at_line_start:
            self.write("\n")


def allowed_kinds(yes: bool, allow: str | None) -> list[str] | None:
    """What `cockpit run` allows without asking (`allow_automatically`): everything with
    --yes (None), the kinds --allow lists, or nothing ([]). Anything else goes to
    Cockpit's permission policy, and what that leaves to the user is asked on a terminal,
    or rejected when there is none."""
    if yes:
        return None
    return [kind for kind in (allow or "").split(",") if kind]


async def reject(engine: EngineAPI, request: PermissionRequest) -> None:
    """No one to ask: answer with the agent's narrowest reject option."""
    option = policy_choice(request.options, allow=False)
    chosen = str(option["optionId"]) if option else None
    await engine.answer_permission(request.id, chosen, decided_by="no terminal to ask")


async def read_line(stream: TextIO) -> str:
    """One line from a terminal, waiting in the event loop rather than in a thread, so an
    unanswered question never keeps Cockpit from exiting ("" at the end of input)."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    descriptor = stream.fileno()
    loop.add_reader(descriptor, lambda: None if ready.done() else ready.set_result(None))
    try:
        await ready
    finally:
        loop.remove_reader(descriptor)
    return stream.readline()


async def ask_on_terminal(
    engine: EngineAPI, request: PermissionRequest, turn: asyncio.Lock
) -> None:
    """Ask the user to pick one of the agent's options on the terminal: the question goes
    to stderr and the answer comes from stdin, so stdout may be a pipe (`| tee log`).
    Questions are asked one at a time."""
    async with turn:
        if request.id not in {pending.id for pending in engine.pending_permissions()}:
            return  # answered meanwhile (the turn was cancelled...)
        if request.form is not None:  # answered from another terminal (or the TUI)
            lines = form_lines(request.session, request.form)
            sys.stderr.write(printable("\n" + "\n".join(lines) + "\n"))
            return
        lines = [f"? The agent asks to: {request.title} [{request.kind}]"]
        lines += [f"  would change {diff.get('path')}" for diff in request.diffs()]
        lines += [
            f"  {number}. {option.get('name')} ({option.get('kind')})"
            for number, option in enumerate(request.options, start=1)
        ]
        sys.stderr.write(printable("\n" + "\n".join(lines) + "\n"))
        while True:
            sys.stderr.write("choose a number (Enter cancels): ")
            sys.stderr.flush()
            answer = (await read_line(sys.stdin)).strip()
            if not answer:  # Enter, or the end of input
                await engine.answer_permission(request.id, None)
                return
            if answer.isdigit() and 1 <= int(answer) <= len(request.options):
                await engine.answer_permission(
                    request.id, str(request.options[int(answer) - 1]["optionId"])
                )
                return


async def run_command(args: argparse.Namespace, home: Path) -> int:
    try:
        agent = resolve_agent(args)
        worktree = worktree_request(args)
    except ValueError as error:
        print(f"cockpit: {error.args[0]}", file=sys.stderr)
        return EXIT_USAGE
    prompt, notices = prompt_words(args.prompt)
    interactive = sys.stdin.isatty()  # the question goes to stderr: stdout may be a pipe
    asking = asyncio.Lock()
    allowed = allowed_kinds(args.yes, args.allow)
    try:
        engine = await open_engine(home, reach=reach_of(args))
    except ConnectionError as error:
        print(f"cockpit: {error}", file=sys.stderr)
        return EXIT_SERVICE
    for problem in engine.problems:  # the config of the engine that runs the agent
        print(f"cockpit: {printable(problem)}", file=sys.stderr)
    printer = StreamPrinter(sys.stdout, "", sanitize=sys.stdout.isatty())
    asks: set[asyncio.Task[None]] = set()
    cancels: set[asyncio.Task[bool]] = set()

    def listen(event: EngineEvent) -> None:
        if isinstance(event, FramesEvent) and event.session == printer.session:
            for frame in event.frames:
                printer.frame(frame)
        elif (
            isinstance(event, PermissionEvent)
            and not event.resolved
            and event.request.session == printer.session
        ):
            answering = (
                ask_on_terminal(engine, event.request, asking)
                if interactive
                else reject(engine, event.request)
            )
            task = asyncio.ensure_future(answering)
            asks.add(task)
            task.add_done_callback(asks.discard)
        elif isinstance(event, StatusEvent) and event.session == printer.session and args.verbose:
            print(f"[{event.status}] {printable(event.detail)}", file=sys.stderr)
        elif isinstance(event, ProblemEvent) and event.session in (None, printer.session):
            print(f"cockpit: {printable(event.message)}", file=sys.stderr)
        elif isinstance(event, SavingEvent) and event.problem is None:
            print("cockpit: the transcript is saved again", file=sys.stderr)

    engine.subscribe(listen)
    loop = asyncio.get_running_loop()
    interrupted = False

    def cancel(session: str) -> None:
        nonlocal interrupted
        interrupted = True
        task = asyncio.ensure_future(engine.cancel(session))
        cancels.add(task)  # kept until it is done
        task.add_done_callback(cancels.discard)

    try:
        try:
            record = await engine.create_session(
                agent, session_folder(args.cwd), run=True, worktree=worktree
            )
        except KeyError as error:  # no agent of that name where the agents run
            print(f"cockpit: {printable(str(error.args[0]))}", file=sys.stderr)
            return EXIT_USAGE
        except ValueError as error:  # no repository, no such base or branch, no git
            print(f"cockpit: {printable(str(error))}", file=sys.stderr)
            return EXIT_USAGE
        made = read_worktree(record.info)
        if made is not None:
            print(f"cockpit: working in {made.path} on branch {made.branch}", file=sys.stderr)
            await worktree_readied(engine, record.id)
        printer.session = record.id
        engine.watch([record.id])
        for notice in notices:
            await engine.add_notice(record.id, notice)
        if allowed != []:
            engine.allow_automatically(record.id, allowed)
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signal.SIGINT, cancel, record.id)
        here = interactive and not reach_of(args).via  # a login runs where the agents run

        async def signed_in() -> bool:
            """The agent asks to sign in, and the user did, on this terminal."""
            needed = await engine.sign_in(record.id) if interactive else None
            return needed is not None and await sign_in_on_terminal(
                engine, record.id, needed, here=here
            )

        try:
            try:
                await engine.start(record.id, handshake_timeout=args.timeout)
            except StartError:
                if not await signed_in():
                    raise
            # The engine stops the agent once the turn ends, even if this client is gone.
            stop_reason = await engine.prompt(record.id, prompt, then_stop=not args.keep)
            if stop_reason == "error" and await signed_in():  # it asked at the prompt
                stop_reason = await engine.prompt(record.id, prompt, then_stop=not args.keep)
        except (StartError, NotSaved):  # a prompt that could not be stored was never sent
            stop_reason = "error"
        printer.finish()
        status = engine.status(record.id)
        code = run_exit(
            stop_reason,
            agent_alive=status not in (Status.EXITED, Status.ERROR),
            interrupted=interrupted,
        )
        signing = await engine.sign_in(record.id) if code else None
        if signing is not None:
            code = EXIT_AGENT  # the agent cannot work until the user signs in
        failure = await engine.last_row(record.id, "error") if code else None
        print(f"cockpit: session {record.id}", file=sys.stderr) if args.verbose else None
    except ConnectionError as error:  # the service went away mid-run (killed, stopped)
        stopped = engine.service_stopped
        print(f"cockpit: {service_gone(stopped, error)}", file=sys.stderr)
        return EXIT_STORE if stopped is not None and stopped.store_gone else EXIT_SERVICE
    except NotSaved as error:  # the session itself could not be stored
        print(f"cockpit: the session could not be stored: {error}", file=sys.stderr)
        return EXIT_STORE
    except OSError as error:
        if error.errno is not None:  # the store or the system failed: `main` says which
            raise
        print(f"cockpit: {error}", file=sys.stderr)  # Cockpit's own: "... is not a folder"
        return EXIT_USAGE
    finally:
        with contextlib.suppress(Exception):
            loop.remove_signal_handler(signal.SIGINT)
        if allowed != [] and printer.session:  # --yes is this run's: the service's
            engine.allow_automatically(printer.session, [])  # later turns ask again
        last_write = await close_engine(engine)
    if engine.saving_failure is not None:
        why = str(last_write) if last_write is not None else engine.saving_failure
        lost = engine.unwritten() if last_write is not None else (0, 0)
        print(f"cockpit: {printable(saving_message(why, lost))}", file=sys.stderr)
        return EXIT_STORE
    if signing is not None:
        print(f"cockpit: {printable(ways(signing))}", file=sys.stderr)
    elif code != EXIT_OK:
        message = exit_message(code, stop_reason, failure.text if failure else "")
        print(f"cockpit: {printable(message)}", file=sys.stderr)
    return code


SETUP_POLL = 0.2
"""Seconds between looks at the worktree's first commands while they run."""


async def worktree_readied(engine: EngineAPI, session: str) -> None:
    """Say what the repository's `.cockpit.toml` left out, and wait for what it runs first
    (the setup) to end before the prompt goes: the agent starts on a readied worktree. A
    setup that fails is said, with its last lines; the run goes on."""
    rows = await engine.rows(session)
    for row in rows:
        if row.kind == "notice":
            print(f"cockpit: {printable(row.text)}", file=sys.stderr)
    keys = [row.key for row in rows if row.kind == "shell"]
    runs = shell_runs(rows, keys)
    for _, run in runs:
        print(f"cockpit: readying the worktree: {printable(run.command)}", file=sys.stderr)
    while any(run.running for _, run in runs):
        await asyncio.sleep(SETUP_POLL)
        runs = shell_runs(await engine.rows(session), keys)
    for row, run in runs:
        if run.state != "exited" or run.exit_code != 0:
            print(f"cockpit: {printable(run.command)}: {shell_ending(run)}", file=sys.stderr)
            for line in row.text.splitlines()[-5:]:
                print(f"  {printable(line)}", file=sys.stderr)


def shell_runs(rows: list[Row], keys: list[str]) -> list[tuple[Row, ShellRun]]:
    """The rows of these keys that hold a command's run, with it."""
    found = [(row, read_shell_run(row.payload)) for row in rows if row.key in keys]
    return [(row, run) for row, run in found if isinstance(run, ShellRun)]


def session_folder(cwd: str | None) -> str:
    """The folder `--cwd` names, made absolute here: the engine may run in the service,
    whose own folder is not the user's. A path that starts with `~` is the engine's to
    expand."""
    if cwd is None:
        return os.getcwd()
    return cwd if cwd.startswith("~") else os.path.abspath(cwd)


async def close_engine(engine: EngineAPI) -> NotSaved | None:
    """Close the engine; the error of a last write that failed (the disk is still full),
    which the caller reports, instead of a traceback."""
    try:
        await engine.close()
    except NotSaved as error:
        return error
    return None
