"""The `cockpit` command line: headless runs, listing, showing and exporting sessions.

Exit codes of `cockpit run` (the reason is on stderr whenever it is not 0):

- 0: the turn ended normally (`end_turn`);
- 1: the agent stopped for another reason (`max_tokens`, `refusal`, or `cancelled` when it
  cancelled the turn by itself, as Codex does when its question is answered "abort");
- 2: a usage error, a store written by a newer Cockpit or a session another Cockpit is
  writing (one line on stderr, no traceback);
- 3: the agent cannot start or dies;
- 4: the agent failed the turn (it answered the prompt with a JSON-RPC error) and is
  still running;
- 5: the transcript could not be written at some point of the run (the disk was full),
  whatever the turn did: stderr said so at once, and says at the end whether everything
  was saved after all or what was lost;
- 130: the user's Ctrl-C cancelled the turn.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import contextlib
import io
import json
import logging
import os
import signal
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

from cockpit import __version__
from cockpit.api import (
    EngineEvent,
    FramesEvent,
    PermissionEvent,
    PermissionRequest,
    ProblemEvent,
    SavingEvent,
    Status,
    StatusEvent,
)
from cockpit.cli.chunk_log import add_parser as add_inspect_parser
from cockpit.cli.chunk_log import inspect_command
from cockpit.engine.core import Engine
from cockpit.engine.permissions import policy_choice
from cockpit.engine.registry import (
    DEFAULT_AGENT,
    MISSING_FILE_POLICIES,
    AgentSpec,
    Registry,
    agent_from_command,
    load_registry,
)
from cockpit.engine.session import StartError, describe
from cockpit.paths import agents_dir, data_dir, private_dir
from cockpit.text.sanitize import StreamCleaner, printable
from cockpit.text.textout import (
    plan_lines,
    tool_line,
    tool_output,
    transcript_markdown,
    transcript_text,
)
from cockpit.ui.viewmodel import age
from store import Frame, Row, SchemaError, SessionBusy, ViewTranscript

EXIT_OK, EXIT_STOPPED, EXIT_USAGE, EXIT_AGENT, EXIT_FAILED, EXIT_CANCELLED = 0, 1, 2, 3, 4, 130
EXIT_STORE = 5
"""The transcript could not be written at some point of the run (the disk was full)."""
EXIT_PIPE = 141
"""What reads the output closed it first (128 + SIGPIPE, as a shell reports such a death)."""


def run_exit(stop_reason: str, *, agent_alive: bool, interrupted: bool) -> int:
    """The exit code of `cockpit run` for how its turn ended: `stop_reason` ("error" when
    the agent failed the turn or died), whether the agent still runs, and whether the
    user pressed Ctrl-C. A turn that ends normally is 0 even after a Ctrl-C the agent
    did not heed; an agent that is gone is 3 whatever else happened."""
    if stop_reason == "end_turn":
        return EXIT_OK
    if not agent_alive:
        return EXIT_AGENT
    if interrupted:
        return EXIT_CANCELLED
    return EXIT_FAILED if stop_reason == "error" else EXIT_STOPPED


def exit_message(code: int, stop_reason: str, failure: str) -> str:
    """What `cockpit run` says on stderr when it does not exit 0; `failure` is the error
    the session recorded for the turn, if any (its first line is enough)."""
    why = failure.strip().splitlines()[0] if failure.strip() else ""
    if code == EXIT_FAILED:
        return f"the agent failed the turn: {why or 'it answered the prompt with an error'}"
    if code == EXIT_AGENT:
        return f"the turn ended with stop reason 'error': {why or 'the agent is gone'}"
    if code == EXIT_CANCELLED:
        return f"the turn ended with stop reason {stop_reason!r} (Ctrl-C)"
    if stop_reason == "cancelled":
        return "the turn ended with stop reason 'cancelled' (the agent cancelled it by itself)"
    return f"the turn ended with stop reason {stop_reason!r}"


def saving_message(failure: str, lost: tuple[int, int]) -> str:
    """What `cockpit run` says at its end when a write failed during the run: that
    everything was written once the disk had room again, or what its last write could not
    save (`lost`: messages and their characters, held in memory until Cockpit exited)."""
    messages, characters = lost
    if not messages:
        return f"the transcript could not be saved for a while ({failure}); all of it is saved now"
    what = "1 message" if messages == 1 else f"{messages} messages"
    return (
        f"the transcript could not be saved ({failure}): {what} ({characters:,} characters) "
        "could not be stored in full"
    )


def demo_scenarios() -> dict[str, str]:
    """The demo agent's scenario words, read from its source without running it."""
    path = agents_dir() / "demo_agent.py"
    if not path.is_file():
        return {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "SCENARIOS" for t in targets):
            found = ast.literal_eval(value)
            return {str(word): str(what) for word, what in found.items()}
    return {}


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
            self._block(frame.key, mark + bubble.text)

    def finish(self) -> None:
        self.out.write(self._cleaner.flush())
        if not self._at_line_start:
            self.write("\n")


def make_policy(yes: bool, allow: set[str]) -> Callable[[PermissionRequest], str | None]:
    """What `cockpit run` allows without asking: everything with --yes, the kinds listed by
    --allow. Anything else goes to Cockpit's permission policy, and what that leaves to the
    user is asked on a terminal, or rejected when there is none."""

    def policy(request: PermissionRequest) -> str | None:
        if yes or request.kind in allow:
            option = policy_choice(request.options, allow=True)
            return str(option["optionId"]) if option is not None else None
        return None

    return policy


async def reject(engine: Engine, request: PermissionRequest) -> None:
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


async def ask_on_terminal(engine: Engine, request: PermissionRequest, turn: asyncio.Lock) -> None:
    """Ask the user to pick one of the agent's options on the terminal: the question goes
    to stderr and the answer comes from stdin, so stdout may be a pipe (`| tee log`).
    Questions are asked one at a time."""
    async with turn:
        if request.id not in {pending.id for pending in engine.pending_permissions()}:
            return  # answered meanwhile (the turn was cancelled...)
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


def resolve_agent(args: argparse.Namespace, registry: Registry) -> AgentSpec:
    """The agent a command line names: `--agent NAME`, or `--agent-cmd "CMD ARGS"` (with
    the settings of the registered agent whose program it runs, and `--missing-file`);
    KeyError or ValueError, saying why, when there is none."""
    if args.agent_cmd:
        return agent_from_command(args.agent_cmd, registry.agents, missing_file=args.missing_file)
    if args.missing_file is not None:
        raise ValueError(
            "--missing-file goes with --agent-cmd (set a registered agent's missing_file in"
            " agents.toml in Cockpit's config folder)"
        )
    return registry.get(args.agent or DEFAULT_AGENT)


def add_agent_arguments(command: argparse.ArgumentParser, agent_help: str) -> None:
    """`--agent`, `--agent-cmd` and `--missing-file`, the same for `cockpit run` and the TUI."""
    chosen = command.add_mutually_exclusive_group()
    chosen.add_argument("--agent", help=agent_help)
    chosen.add_argument(
        "--agent-cmd",
        metavar="CMD",
        help=(
            'any ACP agent command, e.g. "my-agent --acp"; one that runs a registered'
            " agent's program takes that agent's settings"
        ),
    )
    command.add_argument(
        "--missing-file",
        choices=sorted(MISSING_FILE_POLICIES),
        help=(
            "with --agent-cmd: how the agent's read of a file that does not exist is"
            " answered: 'error' (ACP's resource not found) or 'empty' content, for agents"
            " that read a file before they create it (default: the matching registered"
            " agent's, else error)"
        ),
    )


async def run_command(args: argparse.Namespace, home: Path) -> int:
    registry = load_registry()
    for problem in registry.problems:
        print(f"cockpit: {problem} (the bundled agents are still available)", file=sys.stderr)
    try:
        spec = resolve_agent(args, registry)
    except (KeyError, ValueError) as error:
        print(f"cockpit: {error.args[0]}", file=sys.stderr)
        return EXIT_USAGE
    interactive = sys.stdin.isatty()  # the question goes to stderr: stdout may be a pipe
    asking = asyncio.Lock()
    policy = make_policy(args.yes, set(filter(None, (args.allow or "").split(","))))
    engine = await Engine.open(
        home, registry=registry, policy=policy, handshake_timeout=args.timeout
    )
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
        record = await engine.create_session(spec, args.cwd or os.getcwd())
        printer.session = record.id
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signal.SIGINT, cancel, record.id)
        try:
            stop_reason = await engine.prompt(record.id, " ".join(args.prompt))
        except StartError:
            stop_reason = "error"
        except sqlite3.Error:  # the prompt could not be stored, so it was never sent
            stop_reason = "error"
        printer.finish()
        status = engine.status(record.id)
        code = run_exit(
            stop_reason,
            agent_alive=status not in (Status.EXITED, Status.ERROR),
            interrupted=interrupted,
        )
        failure = await engine.store.last_of_kind(record.id, "error") if code else None
        print(f"cockpit: session {record.id}", file=sys.stderr) if args.verbose else None
    except (NotADirectoryError, FileNotFoundError) as error:
        print(f"cockpit: {error}", file=sys.stderr)
        return EXIT_USAGE
    except sqlite3.Error as error:  # the session itself could not be stored
        print(f"cockpit: the session could not be stored: {describe(error)}", file=sys.stderr)
        return EXIT_STORE
    finally:
        with contextlib.suppress(Exception):
            loop.remove_signal_handler(signal.SIGINT)
        last_write = await close_engine(engine)
    if engine.saving_failure is not None:
        why = describe(last_write) if last_write is not None else engine.saving_failure
        lost = engine.store.unwritten() if last_write is not None else (0, 0)
        print(f"cockpit: {printable(saving_message(why, lost))}", file=sys.stderr)
        return EXIT_STORE
    if code != EXIT_OK:
        message = exit_message(code, stop_reason, failure.text if failure else "")
        print(f"cockpit: {printable(message)}", file=sys.stderr)
    return code


async def close_engine(engine: Engine) -> sqlite3.Error | None:
    """Close the engine; the error of a last write that failed (the disk is still full),
    which the caller reports, instead of a traceback."""
    try:
        await engine.close()
    except sqlite3.Error as error:
        return error
    return None


async def ls_command(args: argparse.Namespace, home: Path) -> int:
    engine = await Engine.open(home)
    try:
        sessions = await engine.sessions()
    finally:
        await engine.close()
    if args.json:
        print(json.dumps([_session_json(s) for s in sessions], indent=2))
        return EXIT_OK
    if not sessions:
        print('No sessions yet. Start one with: cockpit run "your prompt"')
        return EXIT_OK
    now = time.time()
    for s in sessions:
        title = printable(s.title or "(untitled)")
        print(f"{s.id}  {s.status:<8} {s.agent:<12} {age(now - s.updated):>4}  {title}  [{s.cwd}]")
    return EXIT_OK


def _session_json(record: Any) -> dict[str, Any]:
    data = asdict(record)
    data["command"] = list(record.command)
    return data


def _row_json(row: Row) -> dict[str, Any]:
    return {
        "seq": row.seq,
        "key": row.key,
        "kind": row.kind,
        "role": row.role,
        "turn": row.turn,
        "text": row.text,
        "payload": row.payload,
        "created": row.created,
        "updated": row.updated,
    }


async def show_command(args: argparse.Namespace, home: Path) -> int:
    engine = await Engine.open(home)
    try:
        try:
            record = await engine.find_session(args.session)
        except KeyError as error:
            print(f"cockpit: {error.args[0]}", file=sys.stderr)
            return EXIT_USAGE
        rows = await engine.store.all_rows(record.id)
    finally:
        await engine.close()
    if args.json:
        print(
            json.dumps(
                {"session": _session_json(record), "rows": [_row_json(r) for r in rows]}, indent=2
            )
        )
    elif args.md:
        text = transcript_markdown(rows, record.title or f"Session {record.id}")
        sys.stdout.write(printable(text) if sys.stdout.isatty() else text)
    else:
        text = transcript_text(rows)
        sys.stdout.write(printable(text) if sys.stdout.isatty() else text)
    return EXIT_OK


def agents_command(args: argparse.Namespace) -> int:
    registry = load_registry()
    rows: list[dict[str, Any]] = []
    for spec in registry.agents.values():
        rows.append(
            {
                "name": spec.name,
                "title": spec.label,
                "command": list(spec.command),
                "available": spec.executable() is not None,
                "install": spec.install,
                "description": spec.description,
                "source": spec.source,
            }
        )
    scenarios = demo_scenarios()
    if args.json:
        print(
            json.dumps(
                {"agents": rows, "problems": registry.problems, "demo_scenarios": scenarios},
                indent=2,
            )
        )
        return EXIT_OK
    for row in rows:
        mark = "available" if row["available"] else "not installed"
        print(f"{row['name']:<12} {mark:<13} {row['title']}")
        print(f"{'':<12} {' '.join(row['command'])}")
        if not row["available"] and row["install"]:
            print(f"{'':<12} install: {row['install']}")
    if scenarios:
        print("\nThe demo agent answers these words in a prompt:")
        for word, what in scenarios.items():
            print(f"  {word:<11} {what}")
    for problem in registry.problems:
        print(f"\ncockpit: {problem} (the bundled agents are still available)", file=sys.stderr)
    print('\nRun any other ACP agent with: cockpit run --agent-cmd "CMD ARGS" "prompt"')
    return EXIT_OK


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(
        prog="cockpit", description="A cockpit for many ACP coding-agent sessions."
    )
    main.add_argument("--version", action="version", version=f"cockpit {__version__}")
    main.add_argument(
        "--data-dir",
        type=Path,
        help="where the store lives (default: COCKPIT_HOME or the user data folder)",
    )
    commands = main.add_subparsers(dest="command", metavar="COMMAND")
    run = commands.add_parser("run", help="run one prompt in a new session and stream the reply")
    add_agent_arguments(run, f"a registered agent (default: {DEFAULT_AGENT}; see `cockpit agents`)")
    run.add_argument("--cwd", help="the session's folder (default: the current folder)")
    allow = run.add_mutually_exclusive_group()
    allow.add_argument("--yes", action="store_true", help="allow every permission request")
    allow.add_argument("--allow", metavar="KINDS", help="allow these tool kinds, e.g. read,edit")
    run.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        help="seconds the agent may take to start (default 30)",
    )
    run.add_argument(
        "--verbose", action="store_true", help="print session status changes on stderr"
    )
    run.add_argument("prompt", nargs="+", help="the prompt")
    ls = commands.add_parser("ls", help="list stored sessions")
    ls.add_argument("--json", action="store_true")
    show = commands.add_parser(
        "show", help="print a stored session's transcript (the agent is not started)"
    )
    show.add_argument("session", help="a session id, or the start of one")
    form = show.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true")
    form.add_argument("--md", action="store_true", help="as Markdown")
    agents = commands.add_parser("agents", help="list known agents and whether they are installed")
    agents.add_argument("--json", action="store_true")
    add_inspect_parser(commands)
    return main


SUBCOMMANDS = frozenset({"run", "ls", "show", "agents", "inspect"})


def tui_parser() -> argparse.ArgumentParser:
    tui = argparse.ArgumentParser(
        prog="cockpit",
        description="Open the Cockpit TUI on PATH. Other commands: run, ls, show, agents, inspect.",
    )
    tui.add_argument("--version", action="version", version=f"cockpit {__version__}")
    tui.add_argument(
        "--data-dir",
        type=Path,
        help="where the store lives (default: COCKPIT_HOME or the user data folder)",
    )
    tui.add_argument(
        "path", nargs="?", default=".", help="the folder new sessions start in (default: here)"
    )
    add_agent_arguments(
        tui,
        "open a new session with this agent, unless the newest session already runs it"
        f" (default: {DEFAULT_AGENT}); --agent-cmd does the same with a command",
    )
    return tui


def tui_agent(args: argparse.Namespace, registry: Registry) -> str | None:
    """The name of the agent the TUI opens a new session with (None: the newest session
    reopens). An agent given as a command joins `registry` for this run, so the first
    session, the dialog and the palette can use it; a stored session of it later reopens
    from its own command. KeyError or ValueError when the command line names no agent."""
    spec = resolve_agent(args, registry)
    registry.agents[spec.name] = spec
    return spec.name if args.agent or args.agent_cmd else None


def tui_command(args: argparse.Namespace, home: Path) -> int:
    # the TUI loads Textual; the other commands do not
    from cockpit.ui.app import CockpitApp, freeze_startup_objects

    folder = Path(args.path).expanduser().resolve()
    if not folder.is_dir():
        print(f"cockpit: {folder} is not a folder", file=sys.stderr)
        return EXIT_USAGE
    registry = load_registry()
    try:
        chosen = tui_agent(args, registry)
    except (KeyError, ValueError) as error:
        print(f"cockpit: {error.args[0]}", file=sys.stderr)
        return EXIT_USAGE

    async def open_engine() -> Engine:
        return await Engine.open(home, registry=registry)

    async def check_store() -> None:
        """Open the store once before the screen takes over, so that a store Cockpit
        cannot use (SchemaError) is reported on one line rather than inside the TUI."""
        await (await open_engine()).close()

    asyncio.run(check_store())
    freeze_startup_objects()
    CockpitApp(open_engine, folder=folder, agent=chosen).run()
    return EXIT_OK


def subcommand(arguments: Sequence[str]) -> str | None:
    """The command word of a command line, skipping `--data-dir DIR`; None opens the TUI."""
    rest = list(arguments)
    while rest:
        word = rest.pop(0)
        if word == "--data-dir":
            rest = rest[1:]
        elif not word.startswith("-"):
            return word if word in SUBCOMMANDS else None
    return None


LOG_NAME = "cockpit.log"


class _LogFile(logging.FileHandler):
    """Cockpit's log file: created owner-only when the first record comes, and silent when
    it cannot be written (the terminal is never the fallback)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, encoding="utf-8", delay=True)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))

    def _open(self) -> io.TextIOWrapper:
        path = Path(self.baseFilename)
        private_dir(path.parent)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        return open(descriptor, "a", encoding="utf-8")  # the handler closes it

    def handleError(self, record: logging.LogRecord) -> None:
        """A record that cannot be written is dropped, never shown on the terminal."""


def log_to_file(home: Path) -> None:
    """Send Python logging to `logs/cockpit.log` in the data folder, never to the terminal:
    the ACP SDK logs a traceback for each message of an agent's it cannot handle, which
    must not land in the user's terminal, or across the TUI. Installed once."""
    root = logging.getLogger()
    if not any(isinstance(handler, _LogFile) for handler in root.handlers):
        root.addHandler(_LogFile(home / "logs" / LOG_NAME))


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        return dispatch(arguments)
    except (SchemaError, SessionBusy) as error:  # a store from a newer Cockpit, or a
        print(f"cockpit: {error}", file=sys.stderr)  # session another Cockpit writes
        return EXIT_USAGE
    except BrokenPipeError:  # `cockpit ls | head` read what it wanted and went away
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the exit's flush of stdout cannot fail
        return EXIT_PIPE


def dispatch(arguments: list[str]) -> int:
    if subcommand(arguments) is None:
        tui_args = tui_parser().parse_args(arguments)
        tui_home = tui_args.data_dir.expanduser() if tui_args.data_dir else data_dir()
        log_to_file(tui_home)
        return tui_command(tui_args, tui_home)
    args = parser().parse_args(arguments)
    home = args.data_dir.expanduser() if args.data_dir else data_dir()
    log_to_file(home)
    if args.command == "run":
        return asyncio.run(run_command(args, home))
    if args.command == "ls":
        return asyncio.run(ls_command(args, home))
    if args.command == "show":
        return asyncio.run(show_command(args, home))
    if args.command == "inspect":
        return asyncio.run(inspect_command(args, home))
    return agents_command(args)
