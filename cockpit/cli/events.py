"""`cockpit events`: what the service's sessions do, as JSON lines (NDJSON): the state now
(each session's status, each question waiting), then, with --follow, every status change,
question, decision and turn end as it happens, in order; frames on request. Part of the
control plane (`cockpit.cli.control` attaches, runs it and ends it)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Collection, Mapping
from typing import Any

from cockpit.api import (
    AttentionEvent,
    EngineAPI,
    EngineEvent,
    Form,
    Frame,
    FramesEvent,
    PermissionEvent,
    PermissionRequest,
    ProblemEvent,
    ResyncEvent,
    SessionEvent,
    SessionRecord,
    StatusEvent,
)
from cockpit.cli.exits import EXIT_OK
from cockpit.cli.sessions import live_status, run_elsewhere


def event_json(event: EngineEvent) -> dict[str, Any] | None:
    """One event as a JSON object (None: not one the command line tells)."""
    if isinstance(event, StatusEvent):
        if event.turn_ended:
            return {
                "type": "turn_end",
                "session": event.session,
                "status": event.status,
                "stop_reason": event.detail,
            }
        return {
            "type": "status",
            "session": event.session,
            "status": event.status,
            "detail": event.detail,
        }
    if isinstance(event, PermissionEvent):
        request = event.request
        if event.resolved:
            return {
                "type": "decision",
                "session": request.session,
                "request": request.id,
                "option": event.option_id,
            }
        question: dict[str, Any] = {
            "type": "question",
            "session": request.session,
            "request": request.id,
            "title": request.title,
            "kind": request.kind,
            "options": [dict(option) for option in request.options],
        }
        if request.form is not None:  # what `cockpit answer --field` fills
            question["form"] = form_json(request.form)
        return question
    if isinstance(event, AttentionEvent):
        return {"type": "attention", "session": event.session, "unread": event.unread}
    if isinstance(event, SessionEvent):
        return {"type": "session", "session": event.session}
    if isinstance(event, ProblemEvent):
        return {"type": "problem", "session": event.session, "message": event.message}
    if isinstance(event, ResyncEvent):
        return {"type": "resync", "session": None, "reason": event.reason}
    return None


def form_json(form: Form) -> dict[str, Any]:
    """A form as `events --json` says it: its message, and each field with what it takes
    (a link: its address)."""
    if form.is_link:
        return {"message": form.message, "url": form.url}
    return {
        "message": form.message,
        "fields": [
            {
                "name": field.name,
                "kind": field.kind,
                "title": field.title,
                "required": field.required,
                **({"values": list(field.values)} if field.values else {}),
            }
            for field in form.fields
        ],
    }


def frame_json(frame: Frame) -> dict[str, Any]:
    return {"type": "frame", **frame._asdict()}


def state_now(
    engine: EngineAPI, records: list[SessionRecord], elsewhere: Collection[str]
) -> list[dict[str, Any]]:
    """The state the service's events start from: each session's live status (see
    `live_status`), then each question waiting."""
    lines = [
        {"type": "status", "session": r.id, "status": live_status(engine, r, elsewhere)}
        for r in records
    ]
    lines += [question_json(request) for request in engine.pending_permissions()]
    return lines


def question_json(request: PermissionRequest) -> dict[str, Any]:
    return event_json(PermissionEvent(request, resolved=False)) or {}


def plain(value: object) -> object:
    """What `json` cannot write itself: the read-only mappings of payloads."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


async def events(engine: EngineAPI, session: str, follow: bool, frames: bool) -> int:
    """The state now as events (each session's status, each question waiting), then, with
    --follow, every event as it happens, in order, until Ctrl-C or the service stops."""

    def out(data: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, default=plain) + "\n")
        sys.stdout.flush()

    def wanted(data: dict[str, Any]) -> bool:
        return not session or data.get("session") in (session, None)

    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    watched: set[str] = set()

    def watch_new(new: str) -> None:
        """Ask for the frames of a session created while following too."""
        if new not in watched:
            watched.add(new)
            engine.watch(watched)

    def listen(event: EngineEvent) -> None:
        if isinstance(event, FramesEvent):
            if frames and (not session or event.session == session):
                for frame in event.frames:
                    queue.put_nowait(frame_json(frame))
            return
        if frames and not session and isinstance(event, SessionEvent):
            watch_new(event.session)
        data = event_json(event)
        if data is not None and wanted(data):
            queue.put_nowait(data)

    records = await engine.sessions()
    elsewhere = await run_elsewhere(engine, records)
    # No await from here to `subscribe`: the state read now and the events after it meet
    # with nothing lost or told twice (the engine's mirror applies an event as it tells it).
    for data in state_now(engine, records, elsewhere):
        if wanted(data):
            out(data)
    if not follow:
        return EXIT_OK
    if frames:
        watched.update([session] if session else [record.id for record in records])
        engine.watch(watched)
    engine.subscribe(listen)
    while True:
        out(await queue.get())
