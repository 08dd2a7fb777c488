"""The command palette's entries: run an action, start a session with an agent, switch to
a session. (The themes, once "Change theme" is chosen, are Textual's theme list.)"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content

from cockpit.api import read_worktree, read_worktree_archive
from cockpit.ui.one_line import clean_line
from cockpit.ui.palette_rank import rank

if TYPE_CHECKING:
    from cockpit.ui.app import CockpitApp


def literal(text: str) -> str:
    """`text` for a field the palette reads as markup (a hit's help), cleaned and as
    `Content`, which the palette takes as it is: a title like `why does [/] break` shows
    as written instead of stopping the app (typed `str` because the field is)."""
    return cast(str, Content(clean_line(text)))


def highlighted(matcher: Matcher, title: str) -> Content:
    """`title` with the characters the query matched highlighted (as `rank` matched
    them), never read as markup (`Matcher.highlight` parses its candidate as markup)."""
    content = Content(title)
    for offset in rank(matcher.query, title).offsets:
        if not title[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


Entry = tuple[str, str, Callable[[], object]]
"""A palette entry: its title, its help line and what it runs."""


class CockpitCommands(Provider):
    """Everything the palette offers, in Cockpit's words: the app's actions, a new session
    with each installed agent, and every session to switch to. One provider, so one rule
    (`rank`) orders them all, and an empty query lists them in that order. Textual's own
    entries are not offered: the ones worth having are here in Cockpit's words."""

    @property
    def cockpit(self) -> CockpitApp:
        return cast("CockpitApp", self.app)

    def entries(self) -> list[Entry]:
        return [
            *action_entries(self.cockpit),
            *worktree_entries(self.cockpit),
            *agent_entries(self.cockpit),
            *session_entries(self.cockpit),
        ]

    async def discover(self) -> Hits:
        for title, text, callback in self.entries():
            title = clean_line(title)
            yield DiscoveryHit(Content(title), callback, text=title, help=literal(text))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, text, callback in self.entries():
            title = clean_line(title)
            score = rank(query, title).score
            if score > 0:
                yield Hit(
                    score, highlighted(matcher, title), callback, text=title, help=literal(text)
                )


def action_entries(app: CockpitApp) -> list[Entry]:
    """The app's actions, each with its key where it has one."""
    quit_entry: Entry = (
        (
            "Detach and quit",
            "leave Cockpit; the agents go on in the service (Ctrl+Q)",
            app.action_quit,
        )
        if app.engine.detaches
        else ("Quit", "leave Cockpit; every agent stops with it (Ctrl+Q)", app.action_quit)
    )
    return [
        ("New session…", "pick an agent and a folder (Ctrl+N)", app.action_new_session),
        ("Rename session", "give this session a title (F2)", app.action_rename_session),
        ("Close session", "stop its agent; the transcript stays (F4)", app.action_close_session),
        ("Delete session", "forget the session and its transcript (F8)", app.action_delete_session),
        ("Inbox", "every question and permission waiting for you (Ctrl+O)", app.action_inbox),
        (
            "Next session needing you",
            "the next one with a question (Ctrl+G)",
            app.action_next_needing,
        ),
        (
            "Agent options",
            "mode, model and what else the agent offers (Ctrl+T)",
            app.action_options,
        ),
        ("Cancel turn", "stop what the agent is doing (Esc)", app.action_cancel_turn),
        (
            "Checkpoints",
            "this session's files at each turn; put them back (/checkpoints)",
            app.action_checkpoints,
        ),
        (
            "Copy last reply",
            "the agent's newest reply, to the clipboard (F3)",
            app.action_copy_last,
        ),
        (
            "Show or hide the session rail",
            "the list of sessions on the left (Ctrl+B)",
            app.action_toggle_rail,
        ),
        (
            "Jump to newest output",
            "scroll to the end of the transcript (Ctrl+End)",
            app.action_jump_end,
        ),
        (
            "Changes of this session",
            "review, comment, commit, merge, push or discard a worktree session's work (F6)",
            app.action_changes,
        ),
        ("Change theme", "the colours of the screen", app.search_themes),
        ("Keys and help", "every key, and what Cockpit does (F1)", app.action_help),
        quit_entry,
    ]


def worktree_entries(app: CockpitApp) -> list[Entry]:
    """The cleanup of worktrees, and the archive or restore of the session on screen when
    it works in a worktree of its own."""
    entries: list[Entry] = [
        (
            "Clean up worktrees",
            "every worktree: size, merged or not; remove the chosen (/worktrees)",
            app.action_clean_worktrees,
        )
    ]
    record = app.sessions.records.get(app.sessions.current or "")
    if record is not None and read_worktree(record.info) is not None:
        if read_worktree_archive(record.info) is None:
            entries.append(
                (
                    "Archive this worktree session",
                    "stop it, keep its branch and uncommitted work, remove its worktree",
                    app.action_archive_worktree,
                )
            )
        else:
            entries.append(
                (
                    "Restore this worktree session",
                    "its worktree again, from its branch, with its kept work",
                    app.action_restore_worktree,
                )
            )
    return entries


def agent_entries(app: CockpitApp) -> list[Entry]:
    """A new session with any installed agent, in the start folder."""
    return [
        (
            f"New session with {info.spec.label}",
            " ".join(info.spec.command),
            partial(app.new_session_with, info.spec.name),
        )
        for info in app.engine.agents()
        if info.installed
    ]


def session_entries(app: CockpitApp) -> list[Entry]:
    """Every session, to switch to."""
    return [
        (f"Session: {title}", detail, partial(app.select_session, session))
        for session, title, detail in app.session_choices()
    ]
