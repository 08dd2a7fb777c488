"""Work for a Textual worker that makes its coroutine only when the worker runs it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any


class Later:
    """`function(*args)`, awaited when a worker runs it: a worker cancelled before it starts
    (an exclusive one replaced by the next key, a page read dropped by a switch) leaves no
    coroutine made and never awaited behind (a RuntimeWarning)."""

    def __init__(self, function: Callable[..., Awaitable[None]], *args: Any) -> None:
        self._function = function
        self._args = args

    def __await__(self) -> Generator[Any, None, None]:
        return self._function(*self._args).__await__()
