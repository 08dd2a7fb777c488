"""`/export` through the service says where it wrote. The service wrote the file and then
failed to send its answer ("ProtocolError: PosixPath cannot cross the wire"), so the screen
said the export had failed. Against the engine in process and a real service."""

from __future__ import annotations

from cockpit.ui.screens.questions import ConfirmScreen
from tests.support.ui_helpers import ready, send, wait_until
from tests.support.ui_service_helpers import Engines


async def test_export_says_where_it_wrote_and_asks_before_replacing(engines: Engines) -> None:
    app = engines.app()
    target = engines.project / "notes.md"
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        session = await ready(app)

        def told() -> list[str]:
            return [str(notice.message) for notice in app._notifications]

        await send(app, pilot, "/export notes.md")
        await wait_until(lambda: bool(told()), what="a word of the export")
        assert told() == [f"Exported to {target}"]
        assert target.read_text().startswith("#")
        rows = await app.engine.rows(session)
        assert (
            rows[-1].kind == "notice" and rows[-1].text == f"Exported this transcript to {target}"
        )
        await send(app, pilot, "/export notes.md")  # the file is there: asked first
        await wait_until(lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        assert isinstance(app.screen, ConfirmScreen)
        assert str(target) in app.screen.question
