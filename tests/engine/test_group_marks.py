"""A process group told from a later one that got the same number: what a crashed Cockpit
left running is killed by the next one only while it is still that group."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from cockpit.engine.processes import end_marked_group, group_mark

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")


def test_the_group_marked_is_killed_and_a_look_alike_is_not() -> None:
    child = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        mark = group_mark(child.pid)
        assert mark is not None and mark["pid"] == child.pid
        assert not end_marked_group({**mark, "started": int(mark["started"]) + 1})
        assert not end_marked_group({**mark, "boot": "another-boot"})
        assert not end_marked_group({"pid": True, "boot": mark["boot"], "started": 0})
        assert not end_marked_group("not a mark")
        assert child.poll() is None  # none of those touched it
        assert end_marked_group(mark)
        assert child.wait(timeout=10) == -9
    finally:
        child.kill()
        child.wait()


def test_a_group_whose_leader_is_gone_is_left_alone() -> None:
    child = subprocess.Popen(["true"], start_new_session=True)
    mark = group_mark(child.pid)
    child.wait()
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{child.pid}") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert mark is not None and not end_marked_group(mark)
