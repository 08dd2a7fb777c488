"""The `cockpit` command line: headless runs, listing, showing and exporting sessions.

Exit codes of `cockpit run` (the reason is on stderr whenever it is not 0):

- 0: the turn ended normally (`end_turn`);
- 1: the agent stopped for another reason (`max_tokens`, `refusal`, or `cancelled` when it
  cancelled the turn by itself, as Codex does when its question is answered "abort");
- 2: a usage error, a store written by a newer Cockpit (read here, or by the service
  this command started) or a session another Cockpit is writing (one line on stderr, no
  traceback);
- 3: the agent cannot start or dies;
- 4: the agent failed the turn (it answered the prompt with a JSON-RPC error) and is
  still running;
- 5: the transcript could not be written at some point of the run (the disk was full),
  whatever the turn did: stderr said so at once, and says at the end whether everything
  was saved after all or what was lost; or, for any command, the system refused Cockpit a
  file of its own (a read-only store): one line names the file and says why;
- 6: the Cockpit service could not be reached or started, or speaks another protocol
  (every command but `--local` ones), or a folder Cockpit needs (its socket's, ssh's
  control folder, its data folder) is a link or another user's;
- 130: the user's Ctrl-C cancelled the turn, or ended any command before it had anything
  of its own to stop (as it starts: one line, no traceback).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from cockpit import __version__
from cockpit.api import (
    DEFAULT_AGENT,
    MISSING_FILE_POLICIES,
    NotSaved,
    SchemaError,
    SessionBusy,
    StoreUnreadable,
)
from cockpit.cli import interrupts
from cockpit.cli.agents import agents_command
from cockpit.cli.approve import add_parser as add_approve_parser
from cockpit.cli.approve import approve_command
from cockpit.cli.checkpoints import add_parsers as add_checkpoint_parsers
from cockpit.cli.checkpoints import checkpoints_command
from cockpit.cli.control import add_parsers as add_control_parsers
from cockpit.cli.control import control_command
from cockpit.cli.exits import (
    EXIT_PIPE,
    EXIT_SERVICE,
    EXIT_STORE,
    EXIT_USAGE,
    system_error_message,
)
from cockpit.cli.inspect_calls import add_parser as add_inspect_parser
from cockpit.cli.inspect_calls import inspect_command
from cockpit.cli.logfile import log_to_file
from cockpit.cli.race import add_parser as add_race_parser
from cockpit.cli.race import race_command
from cockpit.cli.run import run_command
from cockpit.cli.service import add_parser as add_service_parser
from cockpit.cli.service import service_command
from cockpit.cli.sessions import ls_command, show_command
from cockpit.cli.tui import tui_command
from cockpit.cli.worktree_lifecycle import add_parsers as add_lifecycle_parsers
from cockpit.cli.worktree_lifecycle import clean_command, lifecycle_command
from cockpit.cli.worktree_work import COMMANDS as WORKTREE_WORK
from cockpit.cli.worktree_work import add_parsers as add_worktree_work_parsers
from cockpit.cli.worktree_work import worktree_work_command
from cockpit.cli.worktrees import add_parser as add_worktrees_parser
from cockpit.cli.worktrees import add_run_arguments, worktrees_command
from cockpit.paths import ForeignFolder, data_dir


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


def add_reach_arguments(command: argparse.ArgumentParser) -> None:
    """Where the engine runs: the store's service (the default), this process, or a
    service on another machine."""
    command.add_argument(
        "--data-dir",
        type=Path,
        help="where the store lives (default: COCKPIT_HOME or the user data folder)",
    )
    where = command.add_mutually_exclusive_group()
    where.add_argument(
        "--local",
        action="store_true",
        help=(
            "run the agents in this process, not in the Cockpit service: they stop when it"
            " ends (also COCKPIT_LOCAL=1)"
        ),
    )
    where.add_argument(
        "--remote",
        metavar="HOST",
        help=(
            "attach to the Cockpit service on HOST through ssh (runs `cockpit service --stdio`;"
            " one shared connection; COCKPIT_SSH names the ssh command)"
        ),
    )
    where.add_argument(
        "--via",
        metavar="CMD",
        help="attach through a command that speaks to a service on its stdin and stdout",
    )


def seconds(text: str) -> float:
    """A number of seconds above 0 (`--timeout`); anything else is a usage error that
    says what was given."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text!r}")
    return value


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(
        prog="cockpit", description="A cockpit for many ACP coding-agent sessions."
    )
    main.add_argument("--version", action="version", version=f"cockpit {__version__}")
    add_reach_arguments(main)
    commands = main.add_subparsers(dest="command", metavar="COMMAND")
    run = commands.add_parser("run", help="run one prompt in a new session and stream the reply")
    add_agent_arguments(run, f"a registered agent (default: {DEFAULT_AGENT}; see `cockpit agents`)")
    run.add_argument("--cwd", help="the session's folder (default: the current folder)")
    allow = run.add_mutually_exclusive_group()
    allow.add_argument("--yes", action="store_true", help="allow every permission request")
    allow.add_argument("--allow", metavar="KINDS", help="allow these tool kinds, e.g. read,edit")
    run.add_argument(
        "--timeout",
        type=seconds,
        default=120.0,
        metavar="S",
        help=(
            "seconds the agent may take to start, at most (default 120); one that uses no "
            "CPU time and writes nothing for 30 s (COCKPIT_STALL_LIMIT) fails sooner"
        ),
    )
    run.add_argument(
        "--keep",
        action="store_true",
        help="leave the agent running when the turn ends (by default it stops)",
    )
    run.add_argument(
        "--verbose", action="store_true", help="print session status changes on stderr"
    )
    add_run_arguments(run)
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
    add_service_parser(commands)
    add_control_parsers(commands)
    add_lifecycle_parsers(commands, add_worktrees_parser(commands))
    add_checkpoint_parsers(commands)
    add_worktree_work_parsers(commands)
    add_approve_parser(commands)
    add_race_parser(commands)
    return main


SUBCOMMANDS = frozenset(
    {"run", "ls", "show", "agents", "inspect", "service", "send", "wait", "answer", "events",
     "worktrees", "archive", "restore-worktree", "checkpoints", "restore", "approve", "race",
     *WORKTREE_WORK}
)  # fmt: skip
CONTROL = frozenset({"send", "wait", "answer", "events"})
OPTIONS_WITH_VALUES = frozenset({"--data-dir", "--remote", "--via"})


def tui_parser() -> argparse.ArgumentParser:
    tui = argparse.ArgumentParser(
        prog="cockpit",
        description=(
            "Open the Cockpit TUI on PATH, attached to the Cockpit service (started when none"
            " runs): quitting detaches, the agents go on. Other commands: run, ls, show,"
            " agents, inspect, service, send, wait, answer, events, worktrees, archive,"
            " restore-worktree, checkpoints, restore, changes, commit, merge, discard, push,"
            " approve, race."
        ),
    )
    tui.add_argument("--version", action="version", version=f"cockpit {__version__}")
    add_reach_arguments(tui)
    tui.add_argument(
        "path", nargs="?", default=".", help="the folder new sessions start in (default: here)"
    )
    add_agent_arguments(
        tui,
        "open a new session with this agent, unless the newest session already runs it"
        f" (default: {DEFAULT_AGENT}); --agent-cmd does the same with a command",
    )
    tui.add_argument(
        "--worktree",
        action="store_true",
        help="the new session works in a git worktree of its own, on a new branch",
    )
    return tui


def subcommand(arguments: Sequence[str]) -> str | None:
    """The command word of a command line, skipping the options before it and their
    values; None opens the TUI."""
    rest = list(arguments)
    while rest:
        word = rest.pop(0)
        if word in OPTIONS_WITH_VALUES:
            rest = rest[1:]
        elif not word.startswith("-"):
            return word if word in SUBCOMMANDS else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        return dispatch(arguments)
    except (SchemaError, SessionBusy, StoreUnreadable) as error:  # a store from a newer
        print(f"cockpit: {error}", file=sys.stderr)  # Cockpit, a session another Cockpit
        return EXIT_USAGE  # writes, a store that cannot be read
    except ForeignFolder as error:  # a folder Cockpit needs is a link or another user's
        print(f"cockpit: {error}", file=sys.stderr)
        return EXIT_SERVICE
    except BrokenPipeError:  # `cockpit ls | head` read what it wanted and went away
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the exit's flush of stdout cannot fail
        return EXIT_PIPE
    except OSError as error:  # the system refused a file: a read-only store, a full disk
        print(f"cockpit: {system_error_message(error)}", file=sys.stderr)
        return EXIT_STORE
    except NotSaved as error:  # the store refused a write (--local on a full disk)
        print(f"cockpit: {error}", file=sys.stderr)
        return EXIT_STORE
    except KeyboardInterrupt:  # Ctrl-C before a command had anything of its own to stop
        return interrupts.say_interrupted()  # (as Cockpit starts, a bridge that connects)


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
        return interrupts.run(run_command(args, home))
    if args.command == "ls":
        return interrupts.run(ls_command(args, home))
    if args.command == "show":
        return interrupts.run(show_command(args, home))
    if args.command == "inspect":
        return interrupts.run(inspect_command(args, home))
    if args.command == "service":
        return service_command(args, home)
    if args.command == "worktrees" and args.action == "clean":
        return interrupts.run(clean_command(args, home))
    if args.command == "worktrees":
        return interrupts.run(worktrees_command(args, home))
    if args.command in ("archive", "restore-worktree"):
        return interrupts.run(lifecycle_command(args, home))
    if args.command in WORKTREE_WORK:
        return interrupts.run(worktree_work_command(args, home))
    if args.command in CONTROL:
        return interrupts.run(control_command(args, home))
    if args.command in ("checkpoints", "restore"):
        return interrupts.run(checkpoints_command(args, home))
    if args.command == "approve":
        return interrupts.run(approve_command(args, home))
    if args.command == "race":
        return interrupts.run(race_command(args, home))
    return agents_command(args)
