"""Who is at the other end of a Unix socket: the kernel's word, never the peer's.

The service and its clients talk only to processes of their own user. The folder's 0700 and
the socket's 0600 keep others out; the peer's uid is checked as well, so that a wrong mode
(a folder opened by hand, a socket another user bound first) still lets no one in.

Linux answers `SO_PEERCRED` with a `struct ucred` (pid, uid, gid). macOS and the BSDs answer
`LOCAL_PEERCRED` at level `SOL_LOCAL` (0) with a `struct xucred`, whose first two fields are
its layout version (`XUCRED_VERSION`, 0) and the effective uid; the groups after them, and
the pid FreeBSD adds at its end, are not needed here.
"""

from __future__ import annotations

import os
import socket
import struct
from typing import Protocol

UCRED = struct.Struct("=iII")
"""Linux's `struct ucred`: pid_t pid, uid_t uid, gid_t gid."""

XUCRED_HEAD = struct.Struct("=II")
"""The head of `struct xucred`: u_int cr_version, uid_t cr_uid."""

XUCRED_VERSION = 0
"""The only layout of `struct xucred` there is (sys/ucred.h)."""

XUCRED_SIZE = 128
"""Room for the whole `struct xucred` (76 bytes on macOS, 88 on 64-bit FreeBSD)."""

SOL_LOCAL = 0
"""The level of `LOCAL_PEERCRED` on macOS and the BSDs (Python does not name it)."""


class UnreadablePeer(OSError):
    """The system can name a peer's user, but what it answered cannot be read: such a peer
    is refused, not trusted."""


class CredentialSocket(Protocol):
    """What is read from a socket here (a `socket.socket`, or a test's stand-in)."""

    def getsockopt(self, level: int, option: int, buflen: int, /) -> bytes: ...


def ucred_uid(raw: bytes) -> int:
    """The uid in Linux's `struct ucred`."""
    if len(raw) < UCRED.size:
        raise UnreadablePeer(f"SO_PEERCRED answered {len(raw)} bytes, not {UCRED.size}")
    _pid, uid, _gid = UCRED.unpack_from(raw)
    return int(uid)


def xucred_uid(raw: bytes) -> int:
    """The effective uid in macOS's and the BSDs' `struct xucred`."""
    if len(raw) < XUCRED_HEAD.size:
        raise UnreadablePeer(f"LOCAL_PEERCRED answered {len(raw)} bytes")
    version, uid = XUCRED_HEAD.unpack_from(raw)
    if version != XUCRED_VERSION:
        raise UnreadablePeer(f"LOCAL_PEERCRED answered an unknown layout (version {version})")
    return int(uid)


def peer_uid(sock: CredentialSocket) -> int | None:
    """The uid of the process at the other end of a Unix socket; None where the system has
    no way to say (the modes guard alone there). UnreadablePeer (an OSError) when it has
    one and the answer cannot be read."""
    linux = getattr(socket, "SO_PEERCRED", None)
    if linux is not None:
        return ucred_uid(sock.getsockopt(socket.SOL_SOCKET, linux, UCRED.size))
    bsd = getattr(socket, "LOCAL_PEERCRED", None)
    if bsd is not None:
        return xucred_uid(sock.getsockopt(SOL_LOCAL, bsd, XUCRED_SIZE))
    return None


def foreign_peer(sock: CredentialSocket | None) -> str | None:
    """Why the peer on `sock` is not to be talked to (another user's, or one the system
    cannot vouch for), or None when it is this user's or nothing can say."""
    if sock is None:
        return None
    try:
        uid = peer_uid(sock)
    except OSError as error:
        return f"a process whose user cannot be read ({error})"
    if uid is not None and uid != os.getuid():
        return f"another user (uid {uid})"
    return None
