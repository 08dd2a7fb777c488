"""One writer per session: an advisory lock file per session, held while a Store writes it.

Each `Store` allocates the seq of a session's new rows from memory, so two processes
writing one session would hand out the same seq twice. Before a Store first writes a
session it takes `flock` on `locks/<database>-<session>.lock` next to the database, and
holds it until it releases the session or closes; a second Cockpit that wants to write
the same session gets `SessionBusy` instead. Reading (paging, listing) takes no lock,
and sessions nobody else writes stay free. `flock` belongs to an open file description,
so two Stores in one process exclude each other too, and the kernel drops the lock of a
process that dies, however it dies.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
from pathlib import Path
from typing import Final

from store.errors import SessionBusy

_PLAIN_ID: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")


def busy_message(session: str, holder: int | None) -> str:
    """What the user reads when a session is written elsewhere."""
    who = f"another Cockpit (process {holder})" if holder else "another Cockpit"
    return (
        f"Session {session} is open in {who}. Close it there (or quit that Cockpit) "
        "before continuing it here: two Cockpits writing one transcript would overwrite "
        "each other's messages."
    )


def lock_name(database: Path, session: str) -> str:
    """The lock file's name: the database's stem and the session id (hashed when the id is
    not a plain file name)."""
    if _PLAIN_ID.fullmatch(session) is None:
        session = "~" + hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{database.stem}-{session}.lock"


class SessionLocks:
    """The session locks one Store holds, by session id (each an open, locked file)."""

    def __init__(self, database: Path) -> None:
        self.database = database
        self.folder = database.parent / "locks"
        self._held: dict[str, int] = {}

    def path(self, session: str) -> Path:
        """Where the lock file of `session` lives."""
        return self.folder / lock_name(self.database, session)

    def holds(self, session: str) -> bool:
        """True when this Store holds the session's lock."""
        return session in self._held

    def claim(self, session: str) -> bool:
        """Take the session's lock; True when this call took it, False when it was held
        already. Raises SessionBusy when another process (or Store) holds it."""
        if session in self._held:
            return False
        if not self.folder.is_dir():
            self.folder.mkdir(mode=0o700, exist_ok=True)
        path = self.path(session)
        while True:
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(descriptor)
                os.close(descriptor)
                raise SessionBusy(session, busy_message(session, holder)) from None
            except BaseException:
                os.close(descriptor)
                raise
            if _still_at(descriptor, path):
                break
            # The holder released it (and removed the file) between our open and our
            # flock: we locked a file nobody will look at again. Take the new one.
            os.close(descriptor)
        try:
            os.ftruncate(descriptor, 0)
            os.write(descriptor, f"{os.getpid()}\n".encode())
        except OSError as error:  # a full disk: say which file, as open() would have
            os.close(descriptor)
            error.filename = os.fspath(path)
            raise
        self._held[session] = descriptor
        return True

    def writer_elsewhere(self, session: str) -> int | None:
        """The process id of another live process that holds the session's lock, by what
        its lock file says (no lock is taken: a probe would make a claim made at that
        instant fail), else None. A holder that died leaves its file; its pid is dead."""
        if session in self._held:
            return None
        try:
            descriptor = os.open(self.path(session), os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            holder = _holder(descriptor)
        finally:
            os.close(descriptor)
        if holder is None or holder == os.getpid() or not _alive(holder):
            return None
        return holder

    def release(self, session: str) -> None:
        """Give up the session's lock (nothing when not held) and remove its file."""
        descriptor = self._held.pop(session, None)
        if descriptor is None:
            return
        # Remove the file while still holding the lock: whoever opened it meanwhile sees
        # that it is gone once it locks it, and starts over (see `claim`).
        with contextlib.suppress(OSError):
            os.unlink(self.path(session))
        os.close(descriptor)

    def release_all(self) -> None:
        """Give up every lock (the Store is closing)."""
        for session in list(self._held):
            self.release(session)


def _holder(descriptor: int) -> int | None:
    """The process id the holder wrote into the lock file, when it has."""
    try:
        text = os.pread(descriptor, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


def _alive(pid: int) -> bool:
    """True when a process with this id exists (it may belong to another user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _still_at(descriptor: int, path: Path) -> bool:
    """True when the open file is still the one at `path`."""
    try:
        here = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(descriptor)
    return (here.st_dev, here.st_ino) == (opened.st_dev, opened.st_ino)
