"""A client of the service in a process of its own, for the slow-client test and benchmark:
`python -m tests.bench.service_client` attaches to the service of $COCKPIT_HOME and takes
commands, one a line, on its stdin, answering each with one JSON line on its stdout:

- `show SESSION`: show the session and keep its view as the UI does (`ShownView`);
- `watch SESSION,SESSION...`: ask for the frames of these sessions too;
- `check`: what the view holds (each bubble's key, kind, length and a digest of its
  text), how many resyncs it took, and whether every event received was taken;
- `quit`: detach and exit.

Stopped with SIGSTOP, it reads nothing while the service goes on: the client a laptop lid
or a suspended terminal makes."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from cockpit.remote.engine import RemoteEngine
from cockpit.remote.launch import open_socket
from tests.bench.service_view import ShownView

ROOT = Path(__file__).resolve().parents[2]
"""The checkout, where `tests` is a package."""


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def described(view: ShownView | None) -> dict[str, Any]:
    if view is None:
        return {"bubbles": [], "resyncs": 0, "idle": True}
    return {
        "bubbles": [[key, kind, len(text), digest(text)] for key, kind, text in view.shown()],
        "stale": any(bubble.stale for bubble in view.view),
        "resyncs": view.resyncs,
        "frames_events": dict(view.frames_events),
        "idle": view.idle,
    }


async def serve(home: Path) -> None:
    engine = await RemoteEngine.attach(lambda: open_socket(home), name="stopped-client")
    loop = asyncio.get_running_loop()
    commands = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(commands), sys.stdin)
    view: ShownView | None = None
    try:
        while line := (await commands.readline()).decode().strip():
            word, _, argument = line.partition(" ")
            if word == "show":
                engine.show(argument)
                view = ShownView(engine, argument)
                await engine.page(argument)  # the show is in the service when this returns
                answer: dict[str, Any] = {"shown": argument}
            elif word == "watch":
                engine.watch(argument.split(","))
                if view is not None:
                    await engine.page(view.session)  # the watch is in the service
                answer = {"watched": argument.split(",")}
            elif word == "check":
                answer = described(view)
            elif word == "quit":
                print(json.dumps({"bye": True}), flush=True)
                break
            else:
                answer = {"error": f"unknown command {word!r}"}
            print(json.dumps(answer), flush=True)
    finally:
        if view is not None:
            await view.close()
        await engine.close()


class StoppableClient:
    """This module in a process of its own, seen from the process that drives it."""

    def __init__(self, home: Path) -> None:
        env = {**os.environ, "COCKPIT_HOME": str(home)}
        env.pop("COCKPIT_LOCAL", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.bench.service_client"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )

    async def ask(self, command: str) -> dict[str, Any]:
        """Send a command and read its answer (in a thread: the pipe blocks)."""

        def exchange() -> dict[str, Any]:
            assert self.process.stdin is not None and self.process.stdout is not None
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
            answer: dict[str, Any] = json.loads(self.process.stdout.readline())
            return answer

        return await asyncio.wait_for(asyncio.to_thread(exchange), 30)

    def signal(self, number: int) -> None:
        os.kill(self.process.pid, number)

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, signal.SIGCONT)
            self.process.kill()
        self.process.wait()


def main() -> int:
    asyncio.run(serve(Path(os.environ["COCKPIT_HOME"])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
