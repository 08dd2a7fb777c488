"""The user's own commands, typed as a user does (keys in bursts), against the engine in
the test's process and through a service: `!command` runs and shows its card, Esc and
Ctrl+C kill it from the prompt, the transcript or the card (even typed in the same burst
as its Enter), its output waits as a chip above the prompt and goes with the next prompt
(or, removed, does not), `!!` sends a prompt that starts with `!`, and a session switched
while a command prints keeps its card right."""

from __future__ import annotations

from collections.abc import Iterable

from cockpit.api import Row, ShellRun, Status, read_attachments, read_shell_run
from cockpit.ui.app import CockpitApp
from cockpit.ui.bubbles import AgentBubble, UserBubble
from cockpit.ui.composer import Composer
from cockpit.ui.one_line import short_folder
from cockpit.ui.shell_card import ShellCard
from cockpit.ui.shell_chips import ChipClose, ShellChip, ShellChips
from cockpit.ui.shell_rules import chip_label
from cockpit.ui.status_rules import COMMAND_RUNS
from cockpit.ui.transcript import TranscriptView
from tests.support.ui_helpers import burst, focused_composer, wait_until
from tests.support.ui_service_helpers import Engines, screen_equals_rows

SIZE = (100, 30)

NAMES = {" ": "space", "!": "exclamation_mark", ";": "semicolon", "'": "apostrophe"}


def keys(text: str) -> list[str]:
    """The key names that type `text`."""
    return [NAMES.get(character, character) for character in text]


def cards(app: CockpitApp) -> list[ShellCard]:
    return list(app.query(ShellCard))


def card_text(card: ShellCard) -> str:
    """What the card shows, as plain text."""
    return card.render().plain


def runs(rows: Iterable[Row]) -> list[ShellRun]:
    found = [read_shell_run(row.payload) for row in rows if row.kind == "shell"]
    return [run for run in found if isinstance(run, ShellRun)]


def chip_labels(app: CockpitApp) -> list[str]:
    bar = app.query_one(ShellChips)
    if not bar.display:
        return []
    return [place.chip.label for place in bar.query(ShellChip) if place.chip and place.display]


async def a_card(app: CockpitApp, *words: str) -> ShellCard:
    """The newest card, once it shows all of `words`."""
    await wait_until(
        lambda: cards(app) and all(word in card_text(cards(app)[-1]) for word in words),
        what=f"a card showing {words}",
    )
    return cards(app)[-1]


async def test_a_command_runs_and_its_card_shows_its_output(engines: Engines) -> None:
    """`!echo hi` Enter: a card with `hi` and `exit 0`; nothing went to the agent; the
    command is in the prompt history."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session, composer = await focused_composer(app, ready_first=False)
        burst(app, *keys("!echo hi"), "enter")
        card = await a_card(app, "exit 0")
        assert card_text(card).splitlines() == ["▾ $ echo hi · exit 0", "hi"]
        rows = await app.engine.rows(session)
        assert [row.kind for row in rows] == ["shell"]
        assert rows[0].text == "hi\n"
        assert composer.text == ""
        await pilot.press("up")
        assert composer.text == "!echo hi"
        composer.text = ""
        burst(app, "ctrl+r", *"echo", "enter")
        await wait_until(lambda: composer.text == "!echo hi", what="Ctrl+R to find it")


async def test_esc_in_the_burst_of_its_enter_kills_a_command(engines: Engines) -> None:
    """`!sleep 30` Enter Esc in one burst: the Esc may come before the engine has said the
    command runs; it is killed all the same, and the card says so."""
    app = engines.app()
    async with app.run_test(size=SIZE):
        session, _ = await focused_composer(app, ready_first=False)
        burst(app, *keys("!sleep 30"), "enter", "escape")
        card = await a_card(app, "killed")
        assert "$ sleep 30" in card_text(card)
        assert [run.state for run in runs(await app.engine.rows(session))] == ["killed"]
        assert not app.shell.busy(session)


async def test_ctrl_c_kills_a_command_before_it_clears_or_quits(engines: Engines) -> None:
    """Ctrl+C while a command runs kills it (the draft stays); the next Ctrl+C clears the
    draft, as without a command."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        _session, composer = await focused_composer(app, ready_first=False)
        burst(app, *keys("!sleep 30"), "enter", *"draft", "ctrl+c")
        await a_card(app, "killed")
        assert composer.text == "draft"
        await pilot.press("ctrl+c")
        assert composer.text == ""
        assert app.is_running


async def test_esc_and_ctrl_c_kill_from_the_transcript_and_the_card(engines: Engines) -> None:
    """The keys work wherever the keyboard is: on the card itself, in the transcript."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session, _ = await focused_composer(app, ready_first=False)
        burst(app, *keys("!sleep 30"), "enter")
        card = await a_card(app, "running")
        await wait_until(lambda: app.shell.busy(session))
        card.focus()
        await pilot.press("escape")
        await a_card(app, "killed")
        app.query_one(Composer).focus()
        burst(app, *keys("!sleep 31"), "enter")
        await a_card(app, "sleep 31", "running")
        app.query_one(TranscriptView).focus()
        await pilot.press("ctrl+c")
        await a_card(app, "sleep 31", "killed")
        states = [run.state for run in runs(await app.engine.rows(session))]
        assert states == ["killed", "killed"]


async def test_a_finished_commands_output_goes_with_the_next_prompt(engines: Engines) -> None:
    """The chip appears once the command ends; the prompt sent next carries its output (the
    stored prompt says so, its bubble names it), and the chip goes."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session, composer = await focused_composer(app)
        burst(app, *keys("!seq 3"), "enter")
        await wait_until(lambda: chip_labels(app) == ["▤ seq 3 · 3 lines"], what="the chip")
        burst(app, *keys("what do you make of it"), "enter")
        await wait_until(lambda: not chip_labels(app), what="the chip to go")
        await wait_until(lambda: app.query(UserBubble), what="the prompt's bubble")
        prompt = next(row for row in await app.engine.rows(session) if row.kind == "user")
        assert prompt.text == "what do you make of it"
        attached = read_attachments(prompt.payload)
        assert [a.command for a in attached] == ["seq 3"]
        assert attached[0].characters >= len("1\n2\n3")
        bubble = app.query_one(UserBubble)
        await wait_until(lambda: "▤ output of seq 3" in bubble.render().plain)
        assert composer.text == ""
        await pilot.pause()


async def test_a_chip_removed_sends_nothing(engines: Engines) -> None:
    """Backspace in the empty prompt removes the newest chip, a click on ✕ another; the
    prompt sent then carries no command's output. Ctrl+U on a draft leaves the chips."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session, composer = await focused_composer(app)
        burst(app, *keys("!echo one"), "enter", *keys("!echo two"), "enter")
        await wait_until(lambda: len(chip_labels(app)) == 2, what="two chips")
        oldest = chip_labels(app)[0]  # the first to end: both run at once
        burst(app, *"draft", "ctrl+u")
        await pilot.pause()
        assert len(chip_labels(app)) == 2 and composer.text == ""
        burst(app, "backspace")
        await wait_until(lambda: len(chip_labels(app)) == 1, what="one chip left")
        assert chip_labels(app) == [oldest]
        bar = app.query_one(ShellChips)
        await wait_until(lambda: bar.region.height == 1, what="the bar one line high")
        await pilot.pause()
        await pilot.click(ChipClose)
        await wait_until(lambda: not chip_labels(app), what="no chip left")
        burst(app, *keys("plain"), "enter")
        await wait_until(lambda: app.query(UserBubble), what="the prompt's bubble")
        prompt = next(row for row in await app.engine.rows(session) if row.kind == "user")
        assert read_attachments(prompt.payload) == ()


async def test_a_bang_alone_stays_and_a_double_bang_goes_to_the_agent(engines: Engines) -> None:
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session, composer = await focused_composer(app)
        burst(app, "exclamation_mark", "space", "enter")
        await pilot.pause()
        assert composer.text == "! "
        where = short_folder(str(app.folder))
        assert str(composer.border_subtitle) == f"shell command: runs in {where}"
        composer.text = ""
        burst(app, *keys("!!important"), "enter")
        await wait_until(lambda: app.query(UserBubble), what="the prompt's bubble")
        rows = await app.engine.rows(session)
        assert [row.text for row in rows if row.kind == "user"] == ["!important"]
        assert not [row for row in rows if row.kind == "shell"]


async def test_a_session_switched_while_a_command_prints(engines: Engines) -> None:
    """Away from the session while its command prints, back again: the card shows all it
    printed and how it ended, as stored; the chip is that session's, not the other's."""
    app = engines.app()
    async with app.run_test(size=SIZE):
        first, _ = await focused_composer(app, ready_first=False)
        other = await app.engine.create_session("demo", app.folder, title="other")
        await app.sessions.reload()
        app.overview.refresh_rail()
        script = "!for i in 1 2 3 4 5 6; do echo line$i; sleep 0.3; done"
        burst(app, *keys(script), "enter")
        await a_card(app, "line1")
        app.select_session(other.id)
        await wait_until(lambda: app.query_one(TranscriptView).session == other.id)
        await wait_until(lambda: app.query_one(Composer).session == other.id)
        await wait_until(lambda: not cards(app), what="the other session's transcript")
        await wait_until(lambda: not app.shell.busy(first), timeout=20, what="the end")
        assert not cards(app) and chip_labels(app) == []
        app.select_session(first)
        await wait_until(lambda: app.query_one(TranscriptView).session == first)
        card = await a_card(app, "line6", "exit 0")
        assert "line1" in card_text(card)
        await screen_equals_rows(app, first)
        composer = app.query_one(Composer)
        await wait_until(lambda: composer.prompts.entries == [script], what="the history")
        label = chip_label(script.removeprefix("!"), 6)
        await wait_until(lambda: chip_labels(app) == [label], what="the first session's chip")


async def test_a_command_leaves_the_reply_streaming(engines: Engines) -> None:
    """A command run while the agent streams its reply: the reply stays live and goes on
    growing; once the command has ended, Esc cancels the turn, as without one."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session, _ = await focused_composer(app)
        burst(app, *keys("slow"), "enter")
        await wait_until(lambda: app.query(AgentBubble), what="the reply")
        reply = app.query_one(AgentBubble)
        burst(app, *keys("!echo hi"), "enter")
        await a_card(app, "exit 0")
        assert reply.live
        grown = len(reply.text)
        await wait_until(lambda: len(reply.text) > grown, what="the reply to go on")
        assert reply.live and len(app.query(AgentBubble)) == 1
        await pilot.press("escape")
        await wait_until(lambda: app.engine.status(session) == Status.READY, what="cancelled")
        assert [run.state for run in runs(await app.engine.rows(session))] == ["exited"]


async def test_the_status_line_says_a_command_runs_until_it_ends(engines: Engines) -> None:
    """`!sleep 30`: the agent is idle, but the session is not: the status line says the
    command runs and how to kill it, and says ready again once Esc killed it."""
    app = engines.app()
    async with app.run_test(size=(120, 30)):
        await focused_composer(app, ready_first=True)

        def status() -> str:
            return str(app.query_one("#status").render())

        burst(app, *keys("!sleep 30"), "enter")
        await wait_until(lambda: status().startswith(COMMAND_RUNS), what="the command said")
        burst(app, "escape")
        await a_card(app, "killed")
        await wait_until(lambda: status().startswith("ready"), what="ready again")
