"""The seeded monkey, short: two thousand keys in bursts with no pause between them, while
real agents stream, idle and wait for permission (`python -m tests.support.monkey` runs a long one).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.monkey import run


async def test_two_thousand_keys_in_bursts_leave_the_app_alive_and_every_word_stored(
    tmp_path: Path,
) -> None:
    outcome = await run(tmp_path, presses=2000, seed=12)
    assert outcome.presses >= 2000
    assert not outcome.failures
