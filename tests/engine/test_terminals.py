"""Terminal output limits cut at character boundaries; commands run confined."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.engine.files import OutsideRoot
from cockpit.engine.terminals import Terminals, shell_command, trim_output
from tests.support.waiting import eventually


@given(st.text(), st.integers(min_value=0, max_value=64))
def test_trim_keeps_the_newest_bytes_on_a_character_boundary(text: str, limit: int) -> None:
    data = text.encode("utf-8")
    kept, truncated = trim_output(data, limit)
    assert len(kept) <= limit
    assert truncated == (len(data) > limit)
    assert data.endswith(kept)
    kept.decode("utf-8")  # never half a character
    assert len(data) - len(kept) <= max(len(data) - limit, 0) + 3


def test_a_whole_command_line_without_args_runs_in_a_shell() -> None:
    assert shell_command("ls -la | wc -l", []) == ["/bin/sh", "-c", "ls -la | wc -l"]
    assert shell_command("ls", ["-la"]) == ["ls", "-la"]
    assert shell_command(sys.executable, []) == [sys.executable]


async def test_output_limit_and_exit_status(tmp_path: Path) -> None:
    terminals = Terminals(tmp_path, {"PATH": "/usr/bin:/bin"})
    script = "import sys; sys.stdout.write('é' * 3000); sys.exit(4)"
    terminal = await terminals.create(sys.executable, ["-c", script], output_byte_limit=1001)
    await terminals.wait(terminal.id)
    assert terminal.exit_status() == (4, None)
    assert terminal.truncated
    assert terminal.received == 6000  # every byte counted, kept or not
    assert terminal.text() == "é" * 500  # 1001 bytes cut back to a boundary: 1000 bytes
    await terminals.release(terminal.id)
    with pytest.raises(KeyError):
        terminals.get(terminal.id)


async def test_kill_reaches_the_whole_process_group(tmp_path: Path) -> None:
    terminals = Terminals(tmp_path, {})
    marker = tmp_path / "grandchild.pid"
    script = (
        "import subprocess, sys, time; "
        f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        f"open({str(marker)!r}, 'w').write(str(p.pid)); time.sleep(60)"
    )
    terminal = await terminals.create(sys.executable, ["-c", script])
    await eventually(lambda: marker.exists() and marker.read_text(), 5, "the grandchild's pid")
    grandchild = int(marker.read_text())
    terminals.kill(terminal.id)
    await terminals.wait(terminal.id)
    assert terminal.exit_status() == (None, "SIGKILL")
    for _ in range(100):
        if (
            not Path(f"/proc/{grandchild}").exists()
            or "Z" in Path(f"/proc/{grandchild}/stat").read_text().split()[2]
        ):
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("the grandchild survived the kill")
    await terminals.close()


async def test_cwd_outside_the_root_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OutsideRoot):
        await Terminals(tmp_path, {}).create("true", cwd="/")
