"""The plan view, typed as a user does (keys in bursts), against the engine in the test's
process and through a service: the plan shows its revision and who wrote it, `e` edits it
as a checklist and Ctrl+S saves it as the user's (the agent's plan tool reads that back),
and a checklist that cannot be a plan says why and changes nothing."""

from __future__ import annotations

from textual.widgets import Label

from cockpit.api import PlanEntry
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.reading import PlanScreen
from tests.support.ui_helpers import burst, focused_composer, wait_until
from tests.support.ui_service_helpers import Engines

SIZE = (100, 30)

NAMES = {" ": "space", "[": "left_square_bracket", "]": "right_square_bracket"}


def keys(text: str) -> list[str]:
    """The key names that type `text`."""
    return [NAMES.get(character, character) for character in text]


async def test_the_user_edits_the_plan_in_one_burst_and_it_is_kept_as_theirs(
    engines: Engines,
) -> None:
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session, _ = await focused_composer(app, ready_first=False)
        first = [PlanEntry("read the code", "in_progress", "high"), PlanEntry("ship it")]
        await app.engine.update_plan(session, first)
        app.query_one("#rail").focus()
        burst(app, "p", "e", *keys("[x] write the tests"), "ctrl+s")
        await wait_until(
            lambda: not isinstance(app.screen, PlanScreen), what="the plan view saved and closed"
        )

        async def kept() -> bool:
            plan = await app.engine.read_plan(session)
            return plan is not None and plan.revision == 2

        await wait_until(kept, what="the user's plan stored")
        plan = await app.engine.read_plan(session)
        assert plan is not None and plan.author == "user"
        assert plan.entries == (
            PlanEntry("read the code", "in_progress", "high"),
            PlanEntry("ship it"),
            PlanEntry("write the tests", "completed"),
        )
        await pilot.pause()


def problem(app: CockpitApp) -> str:
    """What the plan view says is wrong with the checklist (nothing before it is shown)."""
    if not isinstance(app.screen, PlanScreen):
        return ""
    found = app.screen.query_one_optional("#plan-problem", Label)
    return str(found.render()) if found is not None else ""


async def test_a_checklist_that_is_no_plan_says_why_and_changes_nothing(
    engines: Engines,
) -> None:
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session, _ = await focused_composer(app, ready_first=False)
        await app.engine.update_plan(session, [PlanEntry("one step")])
        app.query_one("#rail").focus()
        burst(app, "p", "e", *keys("[x]"), "ctrl+s")
        await wait_until(lambda: "item 2 needs a non-empty" in problem(app), what="why not")
        burst(app, "q", "escape")  # a q while editing is text; Esc closes without saving
        await wait_until(lambda: not isinstance(app.screen, PlanScreen))
        plan = await app.engine.read_plan(session)
        assert plan is not None and plan.revision == 1 and plan.entries == (PlanEntry("one step"),)
        await pilot.pause()
