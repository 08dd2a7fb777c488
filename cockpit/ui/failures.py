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
    """Decorate an async method of a widget, of the app, or of one of the app's parts (each
    keeps its `app`): an exception it raises goes to the app's `report_failure` ("Cockpit
    could not WHAT: why") and the call returns `default`. Outside Cockpit's app (a widget
    tested alone) the exception goes on. A function that is no method (a dialog's
    callback) takes `reported_to` instead."""
    return _guarded(
        lambda args: getattr(getattr(args[0], "app", None), "report_failure", None), what, default
    )


def reported_to(
    app: Any, what: str, default: Any = None
) -> Callable[[Callable[P, Coroutine[Any, Any, T]]], Callable[P, Coroutine[Any, Any, T]]]:
    """`reported` for a function that is no method of a widget (a dialog's callback, whose
    first argument is the dialog's answer): what it raises goes to `app`'s
    `report_failure`. (Decorated with `reported`, such a function raised on: the app died
    of a store error while deleting a session.)"""
    return _guarded(lambda args: app.report_failure, what, default)


def _guarded(
    reporter: Callable[[tuple[Any, ...]], Callable[[str, Exception], None] | None],
    what: str,
    default: Any,
) -> Callable[[Callable[P, Coroutine[Any, Any, T]]], Callable[P, Coroutine[Any, Any, T]]]:
    """The decorator: what the function raises goes to the reporter found from its
    arguments; with none, it goes on."""

    def decorate(
        function: Callable[P, Coroutine[Any, Any, T]],
    ) -> Callable[P, Coroutine[Any, Any, T]]:
        @functools.wraps(function)
        async def guarded(*args: P.args, **kwargs: P.kwargs) -> T:
            try:
                return await function(*args, **kwargs)
            except Exception as error:
                report = reporter(args)
                if report is None:
                    raise
                report(what, error)
                return default  # type: ignore[no-any-return]

        return guarded

    return decorate
