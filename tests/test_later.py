"""`Later` makes its coroutine only when a worker runs it: a worker replaced before it
starts makes none (no coroutine dropped unawaited, no RuntimeWarning)."""

from __future__ import annotations

import gc
import warnings

from textual.app import App

from cockpit.ui.later import Later
from tests.waiting import eventually


async def test_it_calls_the_function_only_when_awaited() -> None:
    calls: list[tuple[int, str]] = []

    async def work(number: int, word: str) -> None:
        calls.append((number, word))

    pending = Later(work, 1, "one")
    assert calls == []
    await pending
    assert calls == [(1, "one")]


async def test_an_exclusive_worker_replaced_before_it_starts_makes_no_coroutine() -> None:
    made: list[str] = []

    async def work(name: str) -> None:
        made.append(name)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        app = App[None]()
        async with app.run_test():
            for name in ("first", "second", "third"):  # each replaces the one before at once
                app.run_worker(Later(work, name), group="g", exclusive=True)
            await eventually(lambda: made, what="the last worker to run")
            await app.workers.wait_for_complete()
        del app
        gc.collect()
    assert made == ["third"]
    assert not [w for w in caught if "never awaited" in str(w.message)]
