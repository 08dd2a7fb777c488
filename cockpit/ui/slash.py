"""Cockpit's own slash commands (run by Cockpit, never sent to the agent), and how a typed
`/word` is told apart from the agent's commands.

A Cockpit command never hides an agent's command of the same name: `//name` sends the
agent's `/name`, and completion offers the agent's twin in that form, next to Cockpit's.

`COCKPIT_COMMANDS` is the one table of them: the composer completes from it and the app
runs from it, so a command cannot be offered without being run, or run without being
offered. Each runs as a function of what slash commands may do (`SlashTarget`: the app's
public means), the session it was typed in and the words after the name."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from textual.theme import Theme

from cockpit.policy_rule import parse_rule
from cockpit.ui.failures import reported_to
from cockpit.ui.mcp_list import approval_question, approve_servers, approved_note, mcp_lines
from cockpit.ui.restoring import show_checkpoints
from cockpit.ui.screens.questions import ConfirmScreen
from cockpit.ui.screens.reading import TextScreen
from cockpit.ui.signing_in import SigningTarget, login, logout


class SlashTarget(SigningTarget, Protocol):
    """What Cockpit's own commands may do (the app does it): what signing in asks of it,
    and more."""

    @property
    def available_themes(self) -> dict[str, Theme]: ...

    @property
    def theme(self) -> str: ...

    @theme.setter
    def theme(self, name: str) -> None: ...

    def report_failure(self, what: str, error: Exception) -> None: ...

    async def new_session_with(self, agent: str) -> None: ...

    def action_new_session(self) -> None: ...

    def action_rename_session(self, session: str | None = None) -> None: ...

    async def set_mode_named(self, session: str, name: str) -> None: ...

    def action_options(self, session: str | None = None) -> None: ...

    def action_inbox(self) -> None: ...

    def close_session(self, session: str) -> None: ...

    def action_help(self) -> None: ...

    async def action_clean_worktrees(self) -> None: ...

    async def race(self, session: str, arguments: str) -> None: ...

    def action_changes(self, session: str | None = None) -> None: ...

    async def choose_model(self, session: str, name: str) -> None: ...


SlashRun = Callable[[SlashTarget, str, str], Awaitable[None]]
"""How Cockpit runs one of its commands: (what it may do, the session it was typed in, the
arguments)."""


@dataclass(frozen=True)
class SlashCommand:
    """A command the composer completes."""

    name: str
    description: str
    hint: str = ""
    cockpit: bool = True
    """True for Cockpit's own; False for one the agent advertised."""
    run: SlashRun | None = field(default=None, compare=False, repr=False)
    """How Cockpit runs it (its own commands); None for the agent's, which go to the agent."""
    takes_keys: bool = False
    """Its dialog takes the keys typed after it in the same burst (a key typed for
    `/login` must never land in the prompt, and go to the agent with the next Enter)."""


async def _new(app: SlashTarget, session: str, arguments: str) -> None:
    if arguments:
        await app.new_session_with(arguments)
    else:
        app.action_new_session()


async def _rename(app: SlashTarget, session: str, arguments: str) -> None:
    if arguments:
        await app.engine.rename(session, arguments)
    else:
        app.action_rename_session(session)


async def _export(app: SlashTarget, session: str, target: str) -> None:
    """Write the transcript as Markdown (where, the engine decides: Cockpit's `exports/`
    folder unless told), never over a file without asking."""

    @reported_to(app, "export the transcript")
    async def write(replace: bool | None) -> None:
        if replace is False:
            return
        try:
            path = await app.engine.export(session, target, replace=bool(replace))
        except FileExistsError as error:  # ask, then write again
            question = ConfirmScreen(f"Replace {error.filename}?", "Replace", "Keep")
            app.open_screen(question, write)
            return
        except OSError as error:
            app.notify(f"Could not export: {error}", severity="error", markup=False)
            return
        app.notify(f"Exported to {path}", timeout=2, markup=False)

    await write(None)


async def _theme(app: SlashTarget, session: str, arguments: str) -> None:
    if arguments in app.available_themes:
        app.theme = arguments
    else:
        app.notify(
            f"No theme {arguments!r}; try: {', '.join(sorted(app.available_themes))}",
            severity="warning",
            markup=False,
        )


async def _policy(app: SlashTarget, session: str, arguments: str) -> None:
    try:
        if (rule := parse_rule(arguments)) is not None:
            text = await app.engine.set_session_policy(session, *rule)
            app.notify(text, timeout=4, markup=False)
        else:
            text = await app.engine.session_policy(session)
            app.open_screen(TextScreen("Permission rules", text))
    except (ValueError, KeyError) as error:
        app.notify(str(error), severity="error", markup=False)


async def _mcp(app: SlashTarget, session: str, arguments: str) -> None:
    servers = await app.engine.mcp_servers(session)
    if arguments.strip() != "approve":
        app.open_screen(TextScreen("MCP servers", mcp_lines(servers)))
        return
    asked = [server for server in servers if server.approval]
    if not asked:
        app.notify("No MCP server of this session's repository waits for approval.", timeout=4)
        return

    async def answered(approve: bool | None) -> None:
        if not approve:
            return
        try:
            await approve_servers(app.engine, session, asked)
        except OSError as error:
            app.report_failure("Approving the MCP servers", error)
            return
        app.notify(approved_note(app.engine.status(session)), timeout=6, markup=False)

    app.open_screen(approval_question(asked), answered)


async def _mode(app: SlashTarget, session: str, arguments: str) -> None:
    await app.set_mode_named(session, arguments)


async def _options(app: SlashTarget, session: str, arguments: str) -> None:
    app.action_options(session)


async def _model(app: SlashTarget, session: str, arguments: str) -> None:
    await app.choose_model(session, arguments)


async def _inbox(app: SlashTarget, session: str, arguments: str) -> None:
    app.action_inbox()


async def _close(app: SlashTarget, session: str, arguments: str) -> None:
    app.close_session(session)


async def _help(app: SlashTarget, session: str, arguments: str) -> None:
    app.action_help()


async def _checkpoints(app: SlashTarget, session: str, arguments: str) -> None:
    await show_checkpoints(app, session, app.session_title(session))


async def _worktrees(app: SlashTarget, session: str, arguments: str) -> None:
    await app.action_clean_worktrees()


async def _race(app: SlashTarget, session: str, arguments: str) -> None:
    await app.race(session, arguments)


async def _changes(app: SlashTarget, session: str, arguments: str) -> None:
    app.action_changes(session)


COCKPIT_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("new", "a new session (optionally with an agent)", "agent", run=_new),
    SlashCommand("rename", "give this session a title", "title", run=_rename),
    SlashCommand("export", "write this transcript as Markdown", "path", run=_export),
    SlashCommand("theme", "switch the colour theme", "name", run=_theme),
    SlashCommand(
        "mcp",
        "the MCP servers handed to the agent; `approve`: the repository's",
        "approve",
        run=_mcp,
    ),
    SlashCommand("login", "sign the agent in, the ways it offers", run=login, takes_keys=True),
    SlashCommand("logout", "sign the agent out, where it offers that", run=logout),
    SlashCommand(
        "policy", "a permission rule for this session", "kind allow|ask|reject", run=_policy
    ),
    SlashCommand("mode", "switch the agent's mode", "mode", run=_mode),
    SlashCommand("model", "choose the agent's model", "model", run=_model),
    SlashCommand("options", "the agent's options (model, thinking...)", run=_options),
    SlashCommand("inbox", "everything waiting for you", run=_inbox),
    SlashCommand("close", "stop this session's agent; the transcript stays", run=_close),
    SlashCommand("worktrees", "clean up worktrees: size, merged or not", run=_worktrees),
    SlashCommand(
        "race", "one prompt to several agents, each in a worktree", "agents prompt", run=_race
    ),
    SlashCommand(
        "changes", "review, commit, merge or discard this worktree session's work", run=_changes
    ),
    SlashCommand("help", "every key", run=_help),
    SlashCommand(
        "checkpoints", "this session's files at each turn; put them back", run=_checkpoints
    ),
)

COCKPIT_NAMED: Mapping[str, SlashCommand] = {command.name: command for command in COCKPIT_COMMANDS}
"""Cockpit's own commands by name; any other `/word` goes to the agent."""


def parse_slash(text: str) -> tuple[str, str] | None:
    """(command, arguments) when `text` is a slash command line, else None."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    body = stripped[1:]
    if not body or body[0].isspace():
        return None
    name, *rest = body.split(maxsplit=1)
    return name, rest[0].strip() if rest else ""


def takes_keys(text: str) -> bool:
    """True when `text` runs a Cockpit command whose dialog takes the keys typed after it."""
    command = parse_slash(text)
    named = COCKPIT_NAMED.get(command[0]) if command is not None else None
    return named is not None and named.takes_keys


def for_agent(text: str) -> str:
    """What goes to the agent for a prompt: `//name ...` becomes the agent's `/name ...`
    (the way past a Cockpit command of the same name); anything else goes as typed."""
    body = text.lstrip()
    if body.startswith("//") and body[2:3] not in ("", "/") and not body[2].isspace():
        return body[1:]
    return text


def completions(agent: list[SlashCommand], query: str) -> list[tuple[str, SlashCommand]]:
    """(what is typed, command) for the word `/query` at the start of a prompt: the agent's
    commands and Cockpit's, each agent command that shares a Cockpit name offered as
    `//name` just after Cockpit's. `//query` offers only the agent's, all as `//name`."""
    if query.startswith("/"):
        return [(f"//{c.name}", c) for c in matching(agent, query[1:])]
    twins = {c.name: c for c in agent if c.name in COCKPIT_NAMED}
    ordered = [c for c in agent if c.name not in twins]
    for command in COCKPIT_COMMANDS:
        ordered.append(command)
        if command.name in twins:
            ordered.append(twins[command.name])
    return [
        (f"//{c.name}" if not c.cockpit and c.name in twins else f"/{c.name}", c)
        for c in matching(ordered, query)
    ]


def matching(commands: list[SlashCommand], query: str) -> list[SlashCommand]:
    """Commands whose name starts with the query, then those that contain it."""
    query = query.lower()
    starts = [c for c in commands if c.name.lower().startswith(query)]
    contains = [c for c in commands if query in c.name.lower() and c not in starts]
    return starts + contains
