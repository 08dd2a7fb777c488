"""Command palette providers: switch to a session, start one with an agent, run an action.
(Themes come from Textual's own theme command.)"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content

from cockpit.ui.one_line import clean_line

if TYPE_CHECKING:
    from cockpit.ui.app import CockpitApp


def literal(text: str) -> str:
    """`text` for a field the palette reads as markup (a hit's help), cleaned and as
    `Content`, which the palette takes as it is: a title like `why does [/] break` shows
    as written instead of stopping the app (typed `str` because the field is)."""
    return cast(str, Content(clean_line(text)))


def highlighted(matcher: Matcher, title: str) -> Content:
    """`title` with the characters the query matched highlighted, never read as markup
    (`Matcher.highlight` parses its candidate as markup)."""
    content = Content(title)
    score, offsets = matcher.fuzzy_search.match(matcher.query, title)
    if score:
        for offset in offsets:
            if not title[offset].isspace():
                content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


class _Commands(Provider):
    """A provider over a fixed list of (title, help, callback)."""

    def items(self) -> list[tuple[str, str, Callable[[], object]]]:
        raise NotImplementedError

    @property
    def cockpit(self) -> CockpitApp:
        return cast("CockpitApp", self.app)

    async def discover(self) -> Hits:
        for title, text, callback in self.items():
            title = clean_line(title)
            yield DiscoveryHit(Content(title), callback, text=title, help=literal(text))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, text, callback in self.items():
            title = clean_line(title)
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score, highlighted(matcher, title), callback, text=title, help=literal(text)
                )


class SessionCommands(_Commands):
    """Every session, to switch to."""

    def items(self) -> list[tuple[str, str, Callable[[], object]]]:
        app = self.cockpit
        return [
            (f"Session: {title}", detail, partial(app.select_session, session))
            for session, title, detail in app.session_choices()
        ]


class AgentCommands(_Commands):
    """A new session with any installed agent, in the start folder."""

    def items(self) -> list[tuple[str, str, Callable[[], object]]]:
        app = self.cockpit
        return [
            (
                f"New session with {info.spec.label}",
                " ".join(info.spec.command),
                partial(app.new_session_with, info.spec.name),
            )
            for info in app.engine.agents()
            if info.installed
        ]


class ActionCommands(_Commands):
    """The app's actions, by name."""

    def items(self) -> list[tuple[str, str, Callable[[], object]]]:
        app = self.cockpit
        actions: list[tuple[str, str, Callable[[], object]]] = [
            ("New session…", "pick an agent and a folder", app.action_new_session),
            ("Rename session", "give this session a title", app.action_rename_session),
            ("Close session", "stop its agent; the transcript stays", app.action_close_session),
            ("Delete session", "forget the session and its transcript", app.action_delete_session),
            ("Cancel turn", "stop what the agent is doing", app.action_cancel_turn),
            ("Copy last reply", "the agent's newest reply, to the clipboard", app.action_copy_last),
            ("Toggle session rail", "show or hide the list of sessions", app.action_toggle_rail),
            ("Jump to newest output", "scroll to the end of the transcript", app.action_jump_end),
            ("Help", "every key", app.action_help),
        ]
        return actions
