"""The agent process the engine starts when a test routes a bundled agent through the
agent fork server (`tests/support/agent_forks.py`).

Run as `python -I -S agent_fork_shim.py SOCKET SCRIPT [ARGS...]`: standard library only,
so it takes about 15 ms of CPU where a bundled agent spends 0.3-1.5 s importing the SDKs. It hands its stdin, stdout and stderr (the engine's pipes themselves, not copies of
their bytes), any other descriptor it was started with (the pipe a service reports its
start on), and its folder, environment, umask and priority to the server, which forks the
agent from a process that has imported it already. Then it stands in for the agent: it
passes on the signals it gets, and ends the way the agent ended, with its code or its
signal. If it is killed outright, the agent sees it go and kills itself.

When the server cannot be reached, or cannot fork the agent, this process becomes the
agent itself: `python SCRIPT ARGS`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import sys

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)


def own_priority() -> dict[str, int | str]:
    """This process's nice value and its autogroup's line, as the engine just set them."""
    try:
        with open("/proc/self/autogroup", encoding="ascii") as group:
            autogroup = group.read()
    except OSError:
        autogroup = ""
    return {"nice": os.getpriority(os.PRIO_PROCESS, 0), "autogroup": autogroup}


def own_umask() -> int:
    """This process's umask, as the engine started it."""
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def inherited() -> list[int]:
    """The descriptors this process was started with: its stdin, stdout and stderr, and
    any other its parent passed on (listed before this process opens anything)."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed since
            os.fstat(int(name))
            found.append(int(name))
    return sorted(found)


def request(argv: list[str], fds: list[int]) -> bytes:
    """What the server needs to start the agent as this process would have."""
    body = json.dumps(
        {
            "argv": argv,
            "env": dict(os.environ),
            "cwd": os.getcwd(),
            "shim": os.getpid(),
            "umask": own_umask(),
            "fds": fds,
        }
        | own_priority()
    ).encode()
    return struct.pack("!I", len(body)) + body


def hand_over(path: str, argv: list[str], fds: list[int]) -> socket.socket | None:
    """Send the request and this process's descriptors to the server; None when it is not
    there."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        message = request(argv, fds)
        sent = socket.send_fds(conn, [message], fds)
        conn.sendall(message[sent:])
    except OSError:
        conn.close()
        return None
    return conn


def read_line(stream: socket.SocketIO) -> str:
    return stream.readline().decode().strip()


def pass_on(pid: int, number: int) -> None:
    """Give the agent a signal this process got (it may have ended already)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, number)


def end_as(status: int) -> None:
    """Exit with the agent's code, or die of the agent's signal."""
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


def main() -> None:
    path, argv = sys.argv[1], sys.argv[2:]
    fds = inherited()
    conn = hand_over(path, argv, fds)
    if conn is None:
        os.execv(sys.executable, [sys.executable, *argv])
    stream = socket.SocketIO(conn, "rb")
    told = read_line(stream)
    if told == "0":  # the server could not fork it: nothing else runs it
        os.execv(sys.executable, [sys.executable, *argv])
    if not told:  # the server went: whether it forked the agent is unknown
        os._exit(127)
    pid = int(told)
    # From here on the agent alone holds the engine's pipes: their ends close when it ends.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    for sig in FORWARDED:
        signal.signal(sig, lambda number, _frame: pass_on(pid, number))
    status = read_line(stream)
    if not status:  # the server went before the agent did
        os._exit(127)
    end_as(int(status))


if __name__ == "__main__":
    main()
