"""The service runs the contract's calls and nothing else of its engine: a name outside
`cockpit.api.METHODS` (an engine method that is not the client's to run, a local one, one
that does not exist) is refused, saying so, and the service goes on serving."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from cockpit.api import Plan, PlanEntry
from cockpit.engine.core import Engine
from cockpit.protocol import RemoteError
from cockpit.remote.engine import RemoteEngine
from cockpit.service.server import Service


@pytest.fixture
def short_folder() -> Iterator[Path]:
    """A folder with a short path, for a socket (a Unix socket's path is short)."""
    folder = Path(tempfile.mkdtemp(prefix="contract-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
async def client(tmp_path: Path, short_folder: Path) -> AsyncIterator[RemoteEngine]:
    """A client attached to a real service, in this process, on a store of its own."""
    engine = await Engine.open(tmp_path / "home")
    service = Service(engine, on_stop=lambda: None)
    path = short_folder / "s.sock"
    await service.listen(path)
    try:
        attached = await RemoteEngine.attach(lambda: asyncio.open_unix_connection(str(path)))
        try:
            yield attached
        finally:
            await attached.close()
    finally:
        await service.close()
        await engine.close()


@pytest.mark.parametrize(
    "name",
    [
        "live_sessions",  # the engine's, not the contract's
        "close",  # the contract's, answered by the client: it would close the service's engine
        "_emit",
        "detail",
        "no_such_method",
    ],
)
async def test_a_name_outside_the_contract_is_refused_in_words(
    client: RemoteEngine, name: str
) -> None:
    with pytest.raises(RemoteError) as refused:
        await client._call(name)
    assert str(refused.value) == f"{name!r} is not a call of the Cockpit contract"
    assert await client.sessions() == []  # and the service goes on


async def test_the_plan_is_read_and_written_through_the_service(
    client: RemoteEngine, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    record = await client.create_session("demo", project)
    assert await client.read_plan(record.id) is None
    written = await client.update_plan(
        record.id, [PlanEntry("read", "completed"), PlanEntry("write", "in_progress", "high")]
    )
    assert written == Plan(
        (PlanEntry("read", "completed"), PlanEntry("write", "in_progress", "high")), 1, "user"
    )
    assert await client.read_plan(record.id) == written
    with pytest.raises(ValueError, match="The plan was not saved: item 1 has status 'done'"):
        await client.update_plan(record.id, [PlanEntry("x", "done")])
