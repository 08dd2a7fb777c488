"""A hundred connection cuts during a stream: `python -m tests.bench.service_cuts [--json]
[--cuts N]`.

A client attached to the service through a relay (`tests.bench.service_procs.Relay`) shows
a session whose demo agent streams a long benchmark reply (200 KB in 4-character chunks);
the relay drops the connection every 100 ms, what it held in flight lost, until it has cut
it 100 times (the reply streams again, in a new session, as often as it takes). The client keeps
its view as the UI does (`tests.bench.service_view.ShownView`: frames folded as they come,
the tail page read again on every resync). At every cut the view must hold no gap; at the
end it is compared with the rows, character by character: the characters lost and doubled
(target 0). Beside it, in the same run, the same reply streamed with no cut: how much
longer the cuts made it take the client to hold the whole reply.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

from cockpit.api import Row, Status
from cockpit.remote.engine import RemoteEngine
from tests.bench.service_procs import Relay, running_service
from tests.bench.service_stream import report
from tests.bench.service_view import ShownView
from tests.bench.tui_runs import wait_for

REPLY = 200_000
"""The reply streamed (50,000 chunks): it lasts a few seconds, 30 to 60 cuts."""
CUT_EVERY = 0.1
TARGETS = {"characters_lost": 0, "characters_doubled": 0, "moments_with_a_gap": 0}


def lost_and_doubled(shown: ShownView, rows: tuple[Row, ...]) -> tuple[int, int]:
    """Characters of `rows` the view lacks, and characters it holds beyond them (each
    bubble against its row: after the longest common start, what is left on each side)."""
    lost = doubled = 0
    held = {key: text for key, _, text in shown.shown()}
    for row in rows:
        text = held.pop(row.key, "")
        common = 0
        for ours, theirs in zip(text, row.text, strict=False):
            if ours != theirs:
                break
            common += 1
        lost += len(row.text) - common
        doubled += len(text) - common
    doubled += sum(len(text) for text in held.values())  # bubbles of no row
    return lost, doubled


async def one_stream(
    driver: RemoteEngine, client: RemoteEngine, relay: Relay | None, folder: Path, cuts: int
) -> dict[str, Any]:
    """A session streams the reply, shown by `client`; `relay` (if any) is cut every
    CUT_EVERY seconds until `cuts` cuts. What the view ends with against the rows."""
    record = await driver.create_session("demo", str(folder))
    await driver.start(record.id)
    client.show(record.id)
    shown = ShownView(client, record.id)
    await wait_for(lambda: shown.reads >= 1, 30, "the first read")
    gaps = 0
    started = time.perf_counter()
    turn = asyncio.ensure_future(driver.prompt(record.id, f"bench {REPLY}"))
    made = 0
    while relay is not None and not turn.done() and made < cuts:
        await asyncio.wait([turn], timeout=CUT_EVERY)
        if turn.done():
            break
        gaps += any(bubble.stale for bubble in shown.view)
        relay.cut()
        made += 1
    if await turn != "end_turn":
        raise AssertionError("the turn did not end normally")
    page = await driver.page(record.id)
    final = page.rows[-1].text
    await wait_for(
        lambda: (
            client.status(record.id) == Status.READY
            and shown.idle
            and any(text == final for _, _, text in shown.shown())
        ),
        60,
        "the client to hold the whole reply",
    )
    took = time.perf_counter() - started
    lost, doubled = lost_and_doubled(shown, page.rows)
    await shown.close()
    return {
        "cuts": made,
        "seconds": took,
        "lost": lost,
        "doubled": doubled,
        "gaps": gaps,
        "resyncs": shown.resyncs,
        "reads": shown.reads,
        "characters": sum(len(row.text) for row in page.rows),
    }


async def run(folder: Path, cuts: int) -> dict[str, Any]:
    async with running_service(folder / "home") as service:
        driver = await RemoteEngine.attach(service.connector(), name="bench-driver")
        async with Relay(service.socket, folder / "relay.sock") as relay:
            client = await RemoteEngine.attach(relay.connect, name="bench-cut")
            try:
                plain = await one_stream(driver, client, None, folder, 0)
                streams: list[dict[str, Any]] = []
                while sum(s["cuts"] for s in streams) < cuts and len(streams) < 20:
                    left = cuts - sum(s["cuts"] for s in streams)
                    streams.append(await one_stream(driver, client, relay, folder, left))
            finally:
                await client.close()
                await driver.close()
    cut_seconds = sum(s["seconds"] for s in streams)
    return {
        "cuts": sum(s["cuts"] for s in streams),
        "replies": len(streams),
        "characters_streamed": sum(s["characters"] for s in streams),
        "characters_lost": sum(s["lost"] for s in streams),
        "characters_doubled": sum(s["doubled"] for s in streams),
        "moments_with_a_gap": sum(s["gaps"] for s in streams),
        "resyncs_taken": sum(s["resyncs"] for s in streams),
        "tail_pages_read": sum(s["reads"] for s in streams),
        "relay_connections": relay.connections,
        "uncut_characters_lost_or_doubled": plain["lost"] + plain["doubled"],
        "seconds_per_reply_cut": round(cut_seconds / len(streams), 2),
        "seconds_per_reply_uncut": round(plain["seconds"], 2),
        "cut_vs_uncut_time": round(cut_seconds / len(streams) / plain["seconds"], 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.service_cuts", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--cuts", type=int, default=100, help="cuts to make (default 100)")
    args = parser.parse_args(argv)
    logging.disable(logging.ERROR)  # the SDK logs every connection reset, a hundred times
    with tempfile.TemporaryDirectory(prefix="cuts-") as name:
        result = asyncio.run(run(Path(name), args.cuts))
    report(result, TARGETS, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
