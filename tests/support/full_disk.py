"""A disk that fills, for real: SQLite's own limit on the store's writer connection; and,
for what reads a store with no writer of its own, a file system that is full.

`PRAGMA max_page_count` caps the pages the database may grow to; a write past it fails
with SQLITE_FULL ("database or disk is full") exactly as a full disk does (SQLite may roll
the transaction back by itself), and raising the cap again is room coming back. It is a
setting of one connection, so the tests reach the store's writer and set it there; nothing
in Cockpit knows about it.

Run as a module, this is `cockpit` itself with every store it opens on such a disk:

    python -m tests.support.full_disk ROOM FREE_AFTER COCKPIT-ARGUMENTS...

ROOM is how many pages each database may still grow by once open, FREE_AFTER the seconds
after the first failed write at which room comes back (negative: never). With `--timed
FILE` instead of ROOM and FREE_AFTER, it is `cockpit` as it is, timed (`timed`), to run on
a full file system (`on_a_full_fs`).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from store.store import Store

NO_LIMIT = 4294967294
"""SQLite's largest max_page_count: as much room as the file system has."""


async def pages(store: Store) -> int:
    """The pages the store's database holds now, as its writer sees it."""
    async with store._writer.execute("PRAGMA page_count") as cursor:
        row = await cursor.fetchone()
    assert row is not None
    return int(row[0])


async def fill(store: Store, room: int = 0) -> None:
    """The disk is full: the database may grow by `room` more pages, no more."""
    await store._writer.execute(f"PRAGMA max_page_count = {await pages(store) + room}")


async def free(store: Store) -> None:
    """Room comes back."""
    await store._writer.execute(f"PRAGMA max_page_count = {NO_LIMIT}")


async def free_later(store: Store, seconds: float) -> None:
    await asyncio.sleep(seconds)
    await free(store)


def on_a_full_disk(room: int, free_after: float) -> None:
    """Make every store this process opens fill up `room` pages after it opens, and get
    its room back `free_after` seconds after its first failed write (never if negative)."""
    opening = Store.open

    async def open_full(path: str | os.PathLike[str], **options: Any) -> Store:
        store = await opening(path, **options)
        await fill(store, room)
        if free_after < 0:
            return store
        freeing: list[asyncio.Future[None]] = []

        def watch(failure: Exception | None) -> None:
            if failure is not None and not freeing:
                freeing.append(asyncio.ensure_future(free_later(store, free_after)))

        store.watch_writes(watch)
        return store

    Store.open = open_full  # type: ignore[method-assign]


UNSHARE = ("unshare", "--user", "--map-root-user", "--mount")
"""A command in a user and mount namespace of its own (mounting there needs no root)."""

FULL_FS_SIZE = "4m"
"""The size of the file system a test fills (its store is copied in first)."""

ON_A_FULL_FS = """
set -e
mount -t tmpfs -o size={size} tmpfs "$1"
cp -a "$2" "$1/home"
dd if=/dev/zero of="$1/filler" bs=4096 2>/dev/null || true
shift 2
exec "$@"
"""
"""Run in a mount namespace of its own: a tmpfs over the mount point, the store copied onto
it, every block left filled, then the command."""


def full_fs_missing() -> str | None:
    """Why a full file system cannot be made here (None: it can): it takes a user and a
    mount namespace (`unshare`), which a container may not give."""
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return "needs Linux's unshare"
    probe = subprocess.run(
        [*UNSHARE, "true"],
        capture_output=True,
        check=False,
    )
    if probe.returncode != 0:
        return f"cannot make a mount namespace here: {probe.stderr.decode(errors='replace')}"
    return None


def on_a_full_fs(
    store: Path, command: Sequence[str], mount_point: Path, env: Mapping[str, str]
) -> subprocess.CompletedProcess[str]:
    """Run `command` with the store folder `store` copied onto a file system with no block
    left, mounted at `mount_point` (a folder of the test's own) in a mount namespace of its
    own, gone with it: nothing to unmount. The copy is the command's COCKPIT_HOME."""
    script = ON_A_FULL_FS.format(size=FULL_FS_SIZE)
    return subprocess.run(
        [*UNSHARE, "sh", "-c", script, "sh", str(mount_point), str(store), *command],
        env={**env, "COCKPIT_HOME": str(mount_point / "home")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def timed(took: Path, arguments: list[str]) -> int:
    """`cockpit ARGUMENTS`, its seconds written to `took`: the command's own time, without
    the interpreter's start and the imports (seconds on a busy machine)."""
    from cockpit.cli.main import main as cockpit

    started = time.monotonic()
    try:
        return cockpit(arguments)
    finally:
        took.write_text(str(time.monotonic() - started))


def main(arguments: list[str]) -> int:
    from cockpit.cli.main import main as cockpit

    if arguments[0] == "--timed":
        return timed(Path(arguments[1]), arguments[2:])
    on_a_full_disk(int(arguments[0]), float(arguments[1]))
    return cockpit(arguments[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
