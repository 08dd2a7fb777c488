"""An agent that is a recorded capture: it plays the capture's agent->client frames, as
they were sent, in answer to the client's requests.

Run by path: `python tests/support/capture_agent.py CAPTURE [--late SECONDS] [--gap SECONDS]`.

The capture is a script read in order. A client->agent request (or notification) in it
waits until the client sends one with that method, and the response the capture holds
for it goes out under the id the client used; a client->agent response waits for the
client's answer. Agent->client frames are written byte for byte as recorded, each after
the pause the capture shows before it (at most `--gap` seconds: an agent's 16 s start-up
is not worth waiting for), except the first one after a `session/prompt`, which waits
`--late` seconds: when an agent that answered `session/load` early sends the rest of its
history. A request the script does not hold (`session/close`...) is answered with
"method not found"; once the script is played, the agent waits for its input to close.

It speaks raw JSON-RPC on purpose: it stands in for an agent whose frames are the test
data, so it must send them exactly as they were recorded. Only the standard library is
imported, so it starts fast.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any


def read(stream: Any) -> dict[str, Any] | None:
    """The next JSON-RPC message the client sends, or None once its output closed."""
    while True:
        line = stream.readline()
        if not line:
            return None
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            return message


def write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def refuse(message: dict[str, Any]) -> None:
    """Answer a request the script does not hold; ignore anything else."""
    if "method" in message and "id" in message:
        error = {"code": -32601, "message": f"Method not found: {message['method']}"}
        write({"jsonrpc": "2.0", "id": message["id"], "error": error})


def wait_for(wanted: dict[str, Any], ids: dict[Any, Any]) -> bool:
    """Read the client until it sends what the script's `wanted` frame is (a request or
    notification with its method, or a response); map a request's recorded id to the
    client's. False once the client's output closed."""
    while True:
        message = read(sys.stdin)
        if message is None:
            return False
        if "method" in wanted and message.get("method") == wanted["method"]:
            if "id" in wanted and "id" in message:
                ids[wanted["id"]] = message["id"]
            return True
        if "method" not in wanted and "method" not in message:
            return True  # the client answered a request of the script
        refuse(message)


def play(records: list[dict[str, Any]], late: float, gap: float) -> bool:
    """Play the script; False when the client went away before its end."""
    ids: dict[Any, Any] = {}
    last = records[0]["t"] if records else 0.0
    after_prompt = False
    for record in records:
        frame = record["frame"]
        if record["dir"] == "client->agent":
            if not wait_for(frame, ids):
                return False
            after_prompt = frame.get("method") == "session/prompt"
        else:
            time.sleep(late if after_prompt else min(max(record["t"] - last, 0.0), gap))
            after_prompt = False
            if "method" not in frame and frame.get("id") in ids:
                frame = {**frame, "id": ids[frame["id"]]}
            write(frame)
        last = record["t"]
    return True


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("capture", type=Path)
    parser.add_argument("--late", type=float, default=0.0)
    parser.add_argument("--gap", type=float, default=0.6)
    options = parser.parse_known_args()[0]
    lines = options.capture.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    if play(records, options.late, options.gap):
        while (message := read(sys.stdin)) is not None:
            refuse(message)


if __name__ == "__main__":
    main()
