"""The command line as a control plane for the sessions a service runs, whatever their
agent: `cockpit send`, `wait`, `answer` and `events`. Each attaches to the store's service
(starting it when none runs), does one thing and detaches; the agents go on.

Ctrl-C (or SIGTERM) ends a command without a traceback and leaves the service's turns
running; a service that goes away ends it too, saying so (exit 6), rather than starting
a new one behind the user's back."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from cockpit.api import (
    EngineAPI,
    EngineEvent,
    FramesEvent,
    PermissionEvent,
    PermissionRequest,
    ProblemEvent,
    ResyncEvent,
    ServiceStopped,
    Status,
    StatusEvent,
)
from cockpit.bounds import prompt_refusal, prompt_too_long
from cockpit.cli.arguments import reach_of
from cockpit.cli.events import events
from cockpit.cli.exits import (
    EXIT_AGENT,
    EXIT_CANCELLED,
    EXIT_OK,
    EXIT_SERVICE,
    EXIT_STOPPED,
    EXIT_STORE,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    service_gone,
    system_error_message,
)
from cockpit.cli.form_answers import answer_form, form_lines, oldest_form
from cockpit.client import open_engine
from cockpit.text.sanitize import printable
from cockpit.text.undecodable import decode_bytes, prompt_words, replaced_notice

RUNNING = frozenset({Status.WORKING, Status.WAITING, Status.CANCELLING, Status.STARTING})
"""A session in one of these states has a turn running (or its agent starting)."""

IN_TURN = frozenset({Status.WORKING, Status.WAITING, Status.CANCELLING})
"""A session in one of these states has a turn running: a prompt sent now waits for it."""

FAILED = frozenset({Status.EXITED, Status.ERROR})
"""A session in one of these states has no agent because it died or never started."""

UNTIL = ("idle", "needs-you", "done")

STORED_TIMEOUT = 60.0
"""Seconds `cockpit send` waits for the service to store its prompt (the agent need not
have started: the prompt is stored first)."""

CUT = "the connection to the Cockpit service ended"


def add_parsers(commands: Any) -> None:
    send = commands.add_parser(
        "send",
        help="send a prompt to a session (it runs in the service)",
        description=(
            "Send a prompt to a session and return once the service has stored it (at once "
            "when a turn runs: the prompt waits for it); the turn runs in the service. With "
            "--wait, stream the reply and exit when the turn ends (0 on end_turn)."
        ),
    )
    send.add_argument("session", help="a session id, or the start of one")
    send.add_argument("prompt", nargs="*", help="the prompt (or --file)")
    send.add_argument("--file", type=Path, help="read the prompt from this file ('-': stdin)")
    send.add_argument("--wait", action="store_true", help="stream the reply; exit when it ends")
    wait = commands.add_parser(
        "wait",
        help="wait until a session is idle, needs you, or is done",
        description=(
            "Exit 0 when the session gets there, 3 when its agent failed (exited or could "
            "not start), 124 on --timeout."
        ),
    )
    wait.add_argument("session", help="a session id, or the start of one")
    wait.add_argument(
        "--until",
        choices=UNTIL,
        default="idle",
        help=(
            "idle: no turn runs and no question waits; needs-you: a question waits or the "
            "agent failed; done: the turn running now ends, at once when none runs "
            "(default: idle)"
        ),
    )
    wait.add_argument("--timeout", type=float, help="give up after this many seconds (exit 124)")
    answer = commands.add_parser(
        "answer",
        help="answer the oldest question a session asks (or, with --field or --json, its "
        "oldest form)",
    )
    answer.add_argument("session", help="a session id, or the start of one")
    answer.add_argument(
        "option",
        nargs="?",
        help="the option: its number, its id, its name, or its kind (allow_once...)",
    )
    answer.add_argument(
        "--field",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a value of the oldest form (repeat it; text is read as the field's schema says)",
    )
    answer.add_argument(
        "--json", metavar="FILE", help="the form's values as a JSON object (- reads stdin)"
    )
    form_actions = answer.add_mutually_exclusive_group()
    form_actions.add_argument(
        "--accept", action="store_true", help="accept the oldest form as it is (a link: opened)"
    )
    form_actions.add_argument("--decline", action="store_true", help="decline the oldest form")
    form_actions.add_argument("--cancel", action="store_true", help="cancel the oldest form")
    events = commands.add_parser(
        "events",
        help="the service's events as JSON lines",
        description=(
            "One JSON object a line: first the state now (each session's status, each "
            "question waiting), then with --follow every event as it happens (status, "
            "turn_end, question, decision, attention, session, problem; frame with --frames; "
            "resync when events were dropped because this reader fell behind) until Ctrl-C "
            "or the service stops (exit 6)."
        ),
    )
    events.add_argument("--follow", action="store_true", help="keep printing as they happen")
    events.add_argument("--session", help="one session only (an id, or the start of one)")
    events.add_argument("--frames", action="store_true", help="also every transcript frame")
    events.add_argument("--json", action="store_true", help="NDJSON (the only form, for now)")


async def control_command(args: argparse.Namespace, home: Path) -> int:
    """Run one control command until it is done, interrupted or cut off the service."""
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[str] = loop.create_future()
    attached: list[EngineAPI] = []

    def end(why: str) -> None:
        if not ended.done():
            ended.set_result(why)

    async def attach_and_run() -> int:
        engine = await attach(args, home, on_cut=lambda: end(CUT))
        if engine is None:
            return EXIT_SERVICE
        attached.append(engine)
        return await command(engine, args)

    for number in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(number, end, signal.Signals(number).name)
    work = asyncio.ensure_future(attach_and_run())
    try:
        racing: list[asyncio.Future[Any]] = [work, ended]
        await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
        if not work.done():
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await work
            service = attached[0].service_stopped if attached else None
            return stopped(args, ended.result(), service)
        try:
            return work.result()
        except BrokenPipeError:
            raise  # what read stdout went away: `main` says so with its exit code
        except ConnectionError as error:
            service = attached[0].service_stopped if attached else None
            print(f"cockpit: {service_gone(service, error)}", file=sys.stderr)
            return EXIT_STORE if service is not None and service.store_gone else EXIT_SERVICE
    finally:
        for number in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, ValueError):
                loop.remove_signal_handler(number)
        for engine in attached:
            await engine.close()


async def attach(
    args: argparse.Namespace, home: Path, on_cut: Callable[[], None]
) -> EngineAPI | None:
    """The store's service (None, said on stderr, when it cannot be reached). These commands
    make no sense with the engine in their own process: its agents would stop with them."""
    reach = reach_of(args)
    if reach.local:
        print(f"cockpit: `cockpit {args.command}` needs the service (not --local)", file=sys.stderr)
        return None
    try:
        return await open_engine(home, reach=reach, on_cut=on_cut)
    except ConnectionError as error:
        print(f"cockpit: {error}", file=sys.stderr)
        return None


async def command(engine: EngineAPI, args: argparse.Namespace) -> int:
    """The command `args` names, with its session found."""
    session = ""
    if getattr(args, "session", None):
        try:
            session = (await engine.find_session(args.session)).id
        except KeyError as error:
            print(f"cockpit: {error.args[0]}", file=sys.stderr)
            return EXIT_USAGE
    commands: dict[str, Callable[[], Awaitable[int]]] = {
        "send": lambda: send(engine, session, args),
        "wait": lambda: wait(engine, session, args.until, args.timeout),
        "answer": lambda: answer_command(engine, session, args),
        "events": lambda: events(engine, session, args.follow, args.frames),
    }
    return await commands[args.command]()


def stopped(args: argparse.Namespace, why: str, service: ServiceStopped | None) -> int:
    """The exit code of a command ended from outside (`why`: CUT or a signal's name; the
    service's word when it stopped for good), said on stderr; what runs in the service
    goes on."""
    if why == CUT:
        print(f"cockpit: {service_gone(service)}", file=sys.stderr)
        return EXIT_STORE if service is not None and service.store_gone else EXIT_SERVICE
    if args.command == "events":
        return EXIT_OK  # following until Ctrl-C is how it is meant to end
    if args.command == "send":
        print(
            f"cockpit: stopped following; the turn goes on in the service (`cockpit wait "
            f"{args.session}`, `cockpit show {args.session}`)",
            file=sys.stderr,
        )
    return EXIT_CANCELLED


# -- send -------------------------------------------------------------------------------------


def prompt_text(args: argparse.Namespace) -> tuple[str, list[str]]:
    """The prompt of `cockpit send`: its words, or the file's text; and a notice for what
    held bytes that are not UTF-8 (they became U+FFFD: the prompt goes on)."""
    if args.file is None:
        return prompt_words(args.prompt)
    stdin = str(args.file) == "-"
    text, replaced = decode_bytes(sys.stdin.buffer.read() if stdin else args.file.read_bytes())
    where = "Standard input" if stdin else f"The file {args.file}"
    return text, [replaced_notice(where, replaced)] if replaced else []


async def send(engine: EngineAPI, session: str, args: argparse.Namespace) -> int:
    try:
        text, notices = prompt_text(args)
    except OSError as error:
        print(f"cockpit: {system_error_message(error)}", file=sys.stderr)
        return EXIT_USAGE
    if not text.strip():
        print("cockpit: nothing to send (give a prompt or --file)", file=sys.stderr)
        return EXIT_USAGE
    if prompt_too_long(text):
        print(f"cockpit: {prompt_refusal(text)}", file=sys.stderr)
        return EXIT_USAGE
    for notice in notices:
        await engine.add_notice(session, notice)
    if args.wait:
        return await send_and_follow(engine, session, text)
    return await send_and_go(engine, session, text)


async def send_and_go(engine: EngineAPI, session: str, text: str) -> int:
    """Send, and return once the service has stored the prompt: `cockpit show` then shows
    it and `cockpit wait` sees its turn. A prompt sent while a turn runs waits for that turn
    in the service; then it returns at once."""
    outcome: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

    def listen(event: EngineEvent) -> None:
        if outcome.done():
            return
        if isinstance(event, FramesEvent) and event.session == session:
            for frame in event.frames:
                if frame.kind == "user" and not frame.delta and frame.part == text:
                    outcome.set_result(None)
                elif frame.kind == "error":
                    outcome.set_result(frame.part)
        elif isinstance(event, ProblemEvent) and event.session == session:
            outcome.set_result(event.message)

    engine.watch([session])
    engine.subscribe(listen)
    busy = engine.status(session) in IN_TURN
    engine.send(session, text)
    await engine.sessions()  # answered after the send: it has reached the service
    if busy:
        print(f"sent to {session}: it runs after the turn that runs now", file=sys.stderr)
        return EXIT_OK
    try:
        async with asyncio.timeout(STORED_TIMEOUT):
            failure = await outcome
    except TimeoutError:
        print(
            f"cockpit: sent to {session}, but the service has not stored the prompt after "
            f"{STORED_TIMEOUT:g} s (`cockpit show {session}` tells)",
            file=sys.stderr,
        )
        return EXIT_STOPPED
    if failure is not None:
        print(f"cockpit: {printable(failure)}", file=sys.stderr)
        return EXIT_STOPPED
    print(f"sent to {session}", file=sys.stderr)
    return EXIT_OK


async def send_and_follow(engine: EngineAPI, session: str, text: str) -> int:
    """Send, and print the reply as it streams (as `cockpit run` does) until the turn ends.
    Questions are said on stderr: another terminal answers them (`cockpit answer`)."""
    from cockpit.cli.run import StreamPrinter  # the same printing as `cockpit run`

    printer = StreamPrinter(sys.stdout, session, sanitize=sys.stdout.isatty())

    def listen(event: EngineEvent) -> None:
        if isinstance(event, FramesEvent) and event.session == session:
            for frame in event.frames:
                printer.frame(frame)
        elif (
            isinstance(event, PermissionEvent)
            and not event.resolved
            and event.request.session == session
            and event.request.form is not None
        ):
            print("\n" + "\n".join(form_lines(session, event.request.form)), file=sys.stderr)
        elif (
            isinstance(event, PermissionEvent)
            and not event.resolved
            and event.request.session == session
        ):
            print(
                printable(
                    f"\n? the agent asks to: {event.request.title} [{event.request.kind}]; "
                    f"answer with `cockpit answer {session} NUMBER`: "
                    + ", ".join(option_names(event.request))
                ),
                file=sys.stderr,
            )
        elif isinstance(event, ProblemEvent) and event.session in (None, session):
            print(f"cockpit: {printable(event.message)}", file=sys.stderr)

    engine.watch([session])
    engine.subscribe(listen)
    stop_reason = await engine.prompt(session, text)
    printer.finish()
    if stop_reason == "end_turn":
        return EXIT_OK
    print(f"cockpit: the turn ended with stop reason {stop_reason!r}", file=sys.stderr)
    return EXIT_AGENT if engine.status(session) in FAILED else EXIT_STOPPED


# -- wait -------------------------------------------------------------------------------------


def reached(engine: EngineAPI, session: str, until: str, turn_ended: bool) -> bool:
    """True when a session is where `cockpit wait --until` waits for."""
    status = engine.status(session)
    waiting = engine.pending_count(session) > 0
    if until == "needs-you":
        return waiting or status in FAILED
    if until == "done":
        return turn_ended or (status not in RUNNING and not waiting)
    return status not in RUNNING and not waiting


async def wait(engine: EngineAPI, session: str, until: str, give_up: float | None) -> int:
    changed = asyncio.Event()
    ended = False

    def listen(event: EngineEvent) -> None:
        nonlocal ended
        if isinstance(event, StatusEvent) and event.session == session:
            ended |= event.turn_ended
            changed.set()
        elif (isinstance(event, PermissionEvent) and event.request.session == session) or (
            isinstance(event, ResyncEvent)
        ):
            changed.set()

    engine.subscribe(listen)
    try:
        async with asyncio.timeout(give_up):
            while not reached(engine, session, until, ended):
                changed.clear()
                await changed.wait()
    except TimeoutError:
        print(
            f"cockpit: gave up after {give_up:g} s: {session} is still "
            f"{engine.status(session)}, not {until}",
            file=sys.stderr,
        )
        return EXIT_TIMEOUT
    status = engine.status(session)
    question = engine.first_pending(session)
    asks = f": {question.title}" if question is not None else ""
    print(printable(f"{session} {status}{asks}"))
    return EXIT_AGENT if status in FAILED else EXIT_OK


# -- answer -----------------------------------------------------------------------------------


def chosen_option(request: PermissionRequest, wanted: str) -> str | None:
    """The id of the option `wanted` names: its number (from 1), id, name or kind."""
    options = request.options
    if wanted.isdigit() and 1 <= int(wanted) <= len(options):
        return str(options[int(wanted) - 1]["optionId"])
    for field in ("optionId", "name", "kind"):
        for option in options:
            if str(option.get(field, "")).casefold() == wanted.casefold():
                return str(option["optionId"])
    return None


def option_names(request: PermissionRequest) -> list[str]:
    """The options of a request, numbered, as `cockpit answer` takes them."""
    return [f"{n}. {o.get('name')} ({o.get('kind')})" for n, o in enumerate(request.options, 1)]


async def answer_command(engine: EngineAPI, session: str, args: argparse.Namespace) -> int:
    """`cockpit answer`: an OPTION answers the oldest permission question; form values
    (or --accept, --decline, --cancel) the oldest form."""
    about_form = bool(args.field or args.json or args.accept or args.decline or args.cancel)
    if about_form and args.option is not None:
        print("cockpit: give an OPTION or a form's answer, not both", file=sys.stderr)
        return EXIT_USAGE
    if about_form:
        action = "decline" if args.decline else "cancel" if args.cancel else "accept"
        return await answer_form(engine, session, args.field, args.json, action)
    if args.option is None:
        form = oldest_form(engine, session)
        if form is not None and form.form is not None:
            print("\n".join(form_lines(session, form.form)), file=sys.stderr)
        else:
            print("cockpit: say which option (its number, id, name or kind)", file=sys.stderr)
        return EXIT_USAGE
    return await answer(engine, session, args.option)


async def answer(engine: EngineAPI, session: str, wanted: str) -> int:
    """Answer the session's oldest permission question (not a form) with option `wanted`."""
    request = next((r for r in engine.pending_permissions(session) if r.form is None), None)
    if request is None:
        if oldest_form(engine, session) is not None:
            print(
                f"cockpit: only a form waits in {session}: answer it with --field NAME=VALUE",
                file=sys.stderr,
            )
            return EXIT_USAGE
        print(f"cockpit: no question waits in {session}", file=sys.stderr)
        return EXIT_USAGE
    option = chosen_option(request, wanted)
    if option is None:
        names = ", ".join(option_names(request))
        print(printable(f"cockpit: {wanted!r} is not one of the options: {names}"), file=sys.stderr)
        return EXIT_USAGE
    try:
        await engine.answer_permission(request.id, option, decided_by="cockpit answer")
    except KeyError:
        print(f"cockpit: the question was answered meanwhile in {session}", file=sys.stderr)
        return EXIT_USAGE
    print(printable(f"answered “{request.title}”: {option}"))
    return EXIT_OK
