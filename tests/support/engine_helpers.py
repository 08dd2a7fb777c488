"""Shared pieces of the engine tests: an engine in a temporary home, and a recorder that
folds every frame the engine emits into a view, as the TUI does."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from cockpit.api import (
    AgentSpec,
    EngineEvent,
    FramesEvent,
    PermissionEvent,
    PermissionRequest,
    StatusEvent,
)
from cockpit.engine.core import Engine
from cockpit.engine.permission_broker import AutoAnswer
from cockpit.engine.registry import load_registry
from cockpit.paths import agents_dir
from store import Row, ViewTranscript
from tests.support.waiting import eventually

DEMO = str(agents_dir() / "demo_agent.py")


def demo(*flags: str) -> AgentSpec:
    """The demo agent with command-line flags."""
    return AgentSpec(name="demo", command=(sys.executable, DEMO, *flags), title="demo")


@dataclass
class Recorder:
    """Everything the engine emitted, with one view per session built from live frames."""

    views: dict[str, ViewTranscript] = field(default_factory=dict)
    statuses: list[tuple[str, str, str]] = field(default_factory=list)
    asked: list[PermissionRequest] = field(default_factory=list)
    resolved: list[tuple[str, str | None]] = field(default_factory=list)
    frames: int = 0
    on_ask: Callable[[PermissionRequest], None] | None = None

    def __call__(self, event: EngineEvent) -> None:
        if isinstance(event, FramesEvent):
            view = self.views.setdefault(event.session, ViewTranscript())
            for frame in event.frames:
                view.apply(frame)
                self.frames += 1
        elif isinstance(event, StatusEvent):
            self.statuses.append((event.session, event.status, event.detail))
        elif isinstance(event, PermissionEvent):
            if event.resolved:
                self.resolved.append((event.request.id, event.option_id))
            else:
                self.asked.append(event.request)
                if self.on_ask is not None:
                    self.on_ask(event.request)

    def view(self, session: str) -> ViewTranscript:
        return self.views.setdefault(session, ViewTranscript())

    async def wait_for(
        self, condition: Callable[[], object], timeout: float = 30, what: str | None = None
    ) -> None:
        await eventually(condition, timeout, what)


@asynccontextmanager
async def open_engine(
    home: Path, *, auto_answer: AutoAnswer | None = None, timeout: float = 30
) -> AsyncIterator[tuple[Engine, Recorder]]:
    """An engine on a fresh store in `home`, with a recorder subscribed."""
    engine = await Engine.open(
        home,
        registry=load_registry(home / "config"),
        handshake_timeout=timeout,
        auto_answer=auto_answer,
    )
    recorder = Recorder()
    engine.subscribe(recorder)
    try:
        yield engine, recorder
    finally:
        await engine.close()


def allow_all(request: PermissionRequest) -> str | None:
    """A policy that picks the first allow option."""
    return next(
        (str(o["optionId"]) for o in request.options if str(o.get("kind", "")).startswith("allow")),
        None,
    )


async def rows_of(engine: Engine, session: str) -> list[Row]:
    return await engine.store.all_rows(session)


def assert_live_equals_stored(recorder: Recorder, session: str, rows: list[Row]) -> None:
    """The live-stream check: the transcript rebuilt from every frame the engine emitted
    equals the persisted rows, bubble for bubble and character for character."""
    view = recorder.view(session)
    assert [(b.key, b.kind, b.text) for b in view] == [(r.key, r.kind, r.text) for r in rows]
    assert [b.payload for b in view if b.kind in ("tool", "plan")] == [
        r.payload for r in rows if r.kind in ("tool", "plan")
    ]
    assert not any(b.stale for b in view)
    assert all(b.text or b.kind in ("tool", "plan") for b in view), "an empty bubble"
