"""The peer's user, read from the kernel's answer: Linux's `struct ucred`, and the
`struct xucred` of macOS and the BSDs (whose syscall cannot run here: its layouts are built
byte for byte as those systems' headers lay them out, and the choice of call is driven by
what the socket module names, as it is there)."""

from __future__ import annotations

import os
import socket
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.channel.peer import (
    SOL_LOCAL,
    UnreadablePeer,
    foreign_peer,
    peer_uid,
    ucred_uid,
    xucred_uid,
)

UIDS = st.integers(min_value=0, max_value=2**32 - 2)
GROUPS = st.lists(st.integers(min_value=0, max_value=2**32 - 1), min_size=16, max_size=16)

MACOS_XUCRED = struct.Struct("=IIh2x16I")
"""macOS's `struct xucred` (sys/ucred.h): version, uid, ngroups, groups[16]; 76 bytes."""

FREEBSD_XUCRED = struct.Struct("=IIh2x16I4xQ")
"""FreeBSD's, on amd64: the same head and groups, then a union holding the pid; 88 bytes."""

LOCAL_PEERCRED = 0x001
"""Its option number on macOS and FreeBSD."""


class Answers:
    """A socket that answers one getsockopt with `raw` (or raises `error`) and keeps what it
    was asked."""

    def __init__(self, raw: bytes = b"", error: OSError | None = None) -> None:
        self.raw = raw
        self.error = error
        self.asked: list[tuple[int, int, int]] = []

    def getsockopt(self, level: int, option: int, buflen: int, /) -> bytes:
        self.asked.append((level, option, buflen))
        if self.error is not None:
            raise self.error
        return self.raw[:buflen]


@pytest.fixture
def bsd_socket_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """The socket module as macOS's Python has it: LOCAL_PEERCRED, no SO_PEERCRED."""
    monkeypatch.delattr(socket, "SO_PEERCRED", raising=False)
    monkeypatch.setattr(socket, "LOCAL_PEERCRED", LOCAL_PEERCRED, raising=False)


@given(uid=UIDS, pid=st.integers(min_value=1, max_value=2**31 - 1), gid=UIDS)
def test_the_uid_is_read_from_linux_ucred(uid: int, pid: int, gid: int) -> None:
    assert ucred_uid(struct.pack("=iII", pid, uid, gid)) == uid


@given(uid=UIDS, groups=GROUPS, count=st.integers(min_value=0, max_value=16))
def test_the_uid_is_read_from_macos_xucred(uid: int, groups: list[int], count: int) -> None:
    assert xucred_uid(MACOS_XUCRED.pack(0, uid, count, *groups)) == uid


@given(uid=UIDS, groups=GROUPS, pid=st.integers(min_value=0, max_value=2**63))
def test_the_uid_is_read_from_freebsd_xucred(uid: int, groups: list[int], pid: int) -> None:
    assert xucred_uid(FREEBSD_XUCRED.pack(0, uid, 16, *groups, pid)) == uid


@given(version=st.integers(min_value=1, max_value=2**32 - 1), uid=UIDS)
def test_an_xucred_of_an_unknown_layout_is_unreadable(version: int, uid: int) -> None:
    with pytest.raises(UnreadablePeer, match=f"version {version}"):
        xucred_uid(MACOS_XUCRED.pack(version, uid, 0, *[0] * 16))


@given(raw=st.binary(max_size=11))
def test_a_short_answer_is_unreadable(raw: bytes) -> None:
    with pytest.raises(UnreadablePeer):
        ucred_uid(raw)
    with pytest.raises(UnreadablePeer):
        xucred_uid(raw[:7])


def test_linux_names_this_user_at_the_other_end_of_a_real_socket() -> None:
    mine, theirs = socket.socketpair(socket.AF_UNIX)
    with mine, theirs:
        assert peer_uid(mine) == os.getuid()
        assert foreign_peer(mine) is None


@pytest.mark.usefixtures("bsd_socket_module")
def test_macos_is_asked_at_sol_local_with_room_for_the_whole_xucred() -> None:
    asker = Answers(MACOS_XUCRED.pack(0, 501, 1, 20, *[0] * 15))
    assert peer_uid(asker) == 501
    [(level, option, buflen)] = asker.asked
    assert (level, option) == (SOL_LOCAL, LOCAL_PEERCRED)
    assert buflen >= FREEBSD_XUCRED.size > MACOS_XUCRED.size


@pytest.mark.usefixtures("bsd_socket_module")
def test_macos_refuses_another_user_and_lets_its_own_in() -> None:
    own = Answers(MACOS_XUCRED.pack(0, os.getuid(), 0, *[0] * 16))
    other = Answers(MACOS_XUCRED.pack(0, os.getuid() + 1, 0, *[0] * 16))
    assert foreign_peer(own) is None
    assert foreign_peer(other) == f"another user (uid {os.getuid() + 1})"


@pytest.mark.usefixtures("bsd_socket_module")
@pytest.mark.parametrize(
    "asker",
    [
        Answers(MACOS_XUCRED.pack(3, 0, 0, *[0] * 16)),
        Answers(b"\0\0"),
        Answers(error=OSError(22, "Invalid argument")),
    ],
    ids=["unknown layout", "short answer", "the call fails"],
)
def test_a_peer_the_system_cannot_vouch_for_is_refused(asker: Answers) -> None:
    said = foreign_peer(asker)
    assert said is not None and said.startswith("a process whose user cannot be read")


def test_a_system_with_no_way_to_say_leaves_it_to_the_modes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(socket, "SO_PEERCRED", raising=False)
    monkeypatch.delattr(socket, "LOCAL_PEERCRED", raising=False)
    asker = Answers(error=OSError(22, "Invalid argument"))
    assert peer_uid(asker) is None
    assert foreign_peer(asker) is None
    assert asker.asked == []
    assert foreign_peer(None) is None
