"""The exit codes of the command line, and what `cockpit run` says when it does not exit 0."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cockpit.paths import FULL_OR_READ_ONLY

if TYPE_CHECKING:  # the entry point imports this module before anything heavy
    from cockpit.api import ServiceStopped

EXIT_OK, EXIT_STOPPED, EXIT_USAGE, EXIT_AGENT, EXIT_FAILED, EXIT_CANCELLED = 0, 1, 2, 3, 4, 130
EXIT_STORE = 5
"""The transcript could not be written at some point of the run (the disk was full), or
Cockpit could not use a file of its own (a read-only store, a full disk as it started,
whether the command or the service it started opened the store)."""
EXIT_SERVICE = 6
"""The Cockpit service could not be reached or started (not for a store it could not
write: that is EXIT_STORE), or it speaks another protocol."""
EXIT_TIMEOUT = 124
"""`cockpit wait` gave up (as `timeout` exits)."""
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
    if code == EXIT_FAILED:  # the row says it whole ("The agent failed the turn: ..."), once
        return why or "the agent failed the turn (it answered the prompt with an error)"
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


def service_gone(stopped: ServiceStopped | None, error: object = "") -> str:
    """Why a command lost its service, in words: stopped (and by what), or gone without a
    word (killed, crashed); `error` is what the connection said, if anything."""
    if stopped is None:
        said = f" ({error})" if str(error) else ""
        return (
            "the Cockpit service went away without a word (it was killed or it crashed: see "
            f"its log, service.log in the store's logs folder){said}; what it stored is kept "
            "(`cockpit show` reads it)"
        )
    if stopped.store_gone:
        return stopped.reason
    kept = "what it stored is kept (`cockpit show` reads it)"
    return f"the Cockpit service was {stopped.reason}; {kept}"


def system_error_message(error: OSError) -> str:
    """What `cockpit` says when the system refused it a file (a read-only store, a full
    disk, a folder it may not enter): which file and why, in the system's words, on one
    line ("cannot write .../locks/x.lock: Read-only file system")."""
    why = error.strerror or str(error)
    files = [str(name) for name in (error.filename, error.filename2) if name is not None]
    if not files:
        return why
    verb = "cannot write" if error.errno in FULL_OR_READ_ONLY else "cannot use"
    return f"{verb} {' -> '.join(files)}: {why}"


INTERRUPTED = "interrupted (Ctrl-C)"
"""What `cockpit` says when Ctrl-C ends it before it has anything of its own to stop (it
is still opening the engine or starting the service)."""
