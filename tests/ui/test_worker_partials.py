"""Work handed to a Textual worker as a `functools.partial` makes its coroutine only when
the worker runs it: a worker replaced before it starts makes none (no coroutine dropped
unawaited, no RuntimeWarning). The composer's completions and the transcript's page reads
rely on it."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Callable
from functools import partial

from textual.app import App

from tests.support.waiting import eventually


async def test_a_worker_calls_the_partial_only_when_it_runs() -> None:
    calls: list[tuple[int, str]] = []

    async def work(number: int, word: str) -> None:
        calls.append((number, word))

    app = App[None]()
    async with app.run_test():
        later: Callable[[], object] = partial(work, 1, "one")
        worker = app.run_worker(later, start=False)
        assert calls == []
        app.workers.start_all()
        await worker.wait()
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
                later: Callable[[], object] = partial(work, name)
                app.run_worker(later, group="g", exclusive=True)
            await eventually(lambda: made, what="the last worker to run")
            await app.workers.wait_for_complete()
        del app
        gc.collect()
    assert made == ["third"]
    assert not [w for w in caught if "never awaited" in str(w.message)]
