"""The screen never dies of an engine or store error: every handler that calls the engine
is `reported`, so what it raises is told to the user (in the session on screen when the
store takes it) and logged, and the app goes on. An agent never dies because the screen
had a problem."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


def reported(
    what: str, default: Any = None
) -> Callable[[Callable[P, Coroutine[Any, Any, T]]], Callable[P, Coroutine[Any, Any, T]]]:
    """Decorate an async method of a widget or of the app: an exception it raises goes to
    the app's `report_failure` ("Cockpit could not WHAT: why") and the call returns
    `default`. Outside Cockpit's app (a widget tested alone) the exception goes on."""

    def decorate(
        method: Callable[P, Coroutine[Any, Any, T]],
    ) -> Callable[P, Coroutine[Any, Any, T]]:
        @functools.wraps(method)
        async def guarded(*args: P.args, **kwargs: P.kwargs) -> T:
            try:
                return await method(*args, **kwargs)
            except Exception as error:
                report = getattr(getattr(args[0], "app", None), "report_failure", None)
                if report is None:
                    raise
                report(what, error)
                return default  # type: ignore[no-any-return]

        return guarded

    return decorate
