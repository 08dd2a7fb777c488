"""Cockpit's own slash commands (run by Cockpit, never sent to the agent), and how a typed
`/word` is told apart from the agent's commands."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SlashCommand:
    """A command the composer completes."""

    name: str
    description: str
    hint: str = ""
    cockpit: bool = True
    """True for Cockpit's own; False for one the agent advertised."""


COCKPIT_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("new", "a new session (optionally with an agent)", "agent"),
    SlashCommand("rename", "give this session a title", "title"),
    SlashCommand("export", "write this transcript as Markdown", "path"),
    SlashCommand("theme", "switch the colour theme", "name"),
    SlashCommand("policy", "a permission rule for this session", "kind allow|ask|reject"),
    SlashCommand("mode", "switch the agent's mode", "mode"),
    SlashCommand("options", "the agent's options (model, thinking...)"),
    SlashCommand("inbox", "everything waiting for you"),
    SlashCommand("close", "stop this session's agent; the transcript stays"),
    SlashCommand("help", "every key"),
)


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


def matching(commands: list[SlashCommand], query: str) -> list[SlashCommand]:
    """Commands whose name starts with the query, then those that contain it."""
    query = query.lower()
    starts = [c for c in commands if c.name.lower().startswith(query)]
    contains = [c for c in commands if query in c.name.lower() and c not in starts]
    return starts + contains


def policy_rule(arguments: str) -> tuple[str, str | None] | None:
    """The words of `/policy KIND [ACTION]`: None when there are none (list the rules);
    ValueError for more than two. The engine checks the kind and the action."""
    words = arguments.lower().split()
    if not words:
        return None
    if len(words) > 2:
        raise ValueError("Use /policy KIND allow|ask|reject, or /policy KIND to remove it")
    return words[0], words[1] if len(words) == 2 else None
