"""What the built-in Claude agent sent the model, read from its chunk log (`cockpit
inspect`): each call's request rebuilt by `store.requests.compose_request`, the function
the agent built it with, from the log position and settings the agent recorded for that
call, so what is read is what was sent."""

from __future__ import annotations

from pathlib import Path

from cockpit.api import ModelCall, ModelCalls, ReaderAPI
from store.chunk_log import CallRecord, ChunkLog, ChunkLogError, log_path
from store.entries import Entry
from store.requests import compose_request


async def model_calls(
    data_dir: Path, reader: ReaderAPI, wanted: str, only: int | None = None
) -> ModelCalls:
    """The model calls of session `wanted` (a Cockpit session, the start of its id, or the
    agent's own session id), or call `only` of them. KeyError, saying why, when there is
    no such session or it has no chunk log; ValueError when its log cannot be read."""
    cockpit_id, agent_session, path = await find_log(data_dir, reader, wanted)
    try:
        log = await ChunkLog.open(path, create=False)
    except ChunkLogError as error:
        raise ValueError(str(error)) from None
    try:
        entries = await log.entries()
        records = await log.calls()
        calls = []
        for record in records:
            if only is not None and record.number != only:
                continue
            upto: list[Entry] = [entry for entry in entries if entry.seq <= record.upto]
            request = compose_request(upto, await log.spec_of(record))
            calls.append(model_call(record, request))
    finally:
        await log.close()
    return ModelCalls(cockpit_id, agent_session, str(path), len(records), tuple(calls))


def model_call(record: CallRecord, request: dict[str, object]) -> ModelCall:
    """One call of the log, with its request rebuilt."""
    return ModelCall(
        number=record.number,
        turn=record.turn,
        step=record.step,
        upto=record.upto,
        model=record.model,
        status=record.status,
        stop_reason=record.stop_reason,
        started=record.started,
        ended=record.ended,
        usage=record.usage,
        request=request,
        response=record.response,
        error=record.error,
    )


async def find_log(data_dir: Path, reader: ReaderAPI, wanted: str) -> tuple[str | None, str, Path]:
    """(Cockpit session id, agent session id, log file) of `wanted`; KeyError, saying
    why, when there is none."""
    try:
        record = await reader.find_session(wanted)
    except KeyError as error:
        record, problem = None, str(error.args[0])
    if record is not None:
        agent_session = record.agent_session_id
        if not agent_session:
            raise KeyError(f"session {record.id} has not started an agent session yet")
        path = _path(data_dir, agent_session)
        if path is None or not path.is_file():
            raise KeyError(
                f"session {record.id} ({record.agent}) has no chunk log: only sessions of the "
                "built-in Claude agent (`--agent claude`) can be inspected"
            )
        return record.id, agent_session, path
    path = _path(data_dir, wanted)
    if path is not None and path.is_file():
        return None, wanted, path
    raise KeyError(problem)


def _path(data_dir: Path, session_id: str) -> Path | None:
    try:
        return log_path(data_dir, session_id)
    except ValueError:
        return None
