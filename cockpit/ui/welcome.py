"""What a session shows before its first message: what Cockpit is, the keys to start with,
how to run another agent and, on the demo agent, the words its scenarios answer to. It
stands where the transcript will be and is never stored: the first row of the session
(the prompt sent, a notice) takes its place. The words are read from the demo agent's own
scenario file, so they are always the ones it runs."""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from cockpit.agentkit.scenarios import ScenarioError, read_scenarios
from cockpit.api import DEFAULT_AGENT

FIRST_KEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "send the prompt below"),
    ("Ctrl+O", "the inbox: what every agent asks you"),
    ("F1", "every key"),
)
"""The three keys a first start needs; the rest are behind F1."""

ANOTHER_AGENT = ("Ctrl+N", "a session with another agent: Claude Code, Gemini, Codex...")
"""How to pick another agent than the one this session runs."""

SHELL_COMMAND = ("!command", "run a shell command in the session's folder")
"""How to run a command of one's own without leaving Cockpit (a habit from other tools)."""

PLACEHOLDER = "Type a prompt · Enter sends · / commands · @ files"
"""What the prompt says while the session has no message yet."""


@functools.cache
def demo_words() -> tuple[str, ...]:
    """The demo agent's scenario words, in its file's order; none when the file cannot be
    read (the welcome then leaves them out, and says nothing wrong)."""
    try:
        return tuple(read_scenarios())
    except (OSError, ScenarioError):
        logging.getLogger(__name__).warning("the demo's scenario words could not be read")
        return ()


def welcome_text(agent: str | None, words: Sequence[str]) -> Text:
    """The welcome for a session of `agent`; `words` (the demo's scenario words) are shown
    when the agent is the demo. Short enough for 80x24 with the rail shown."""
    text = Text.assemble(
        ("Cockpit", "bold"), " runs coding agents side by side and keeps every message.\n\n"
    )
    keys = [*FIRST_KEYS, SHELL_COMMAND, ANOTHER_AGENT]
    width = max(len(key) for key, _ in keys)
    for key, what in keys:
        text.append(f"{key:<{width}}", style="bold")
        text.append(f"  {what}\n")
    if agent == DEFAULT_AGENT and words:
        text.append("\nThe demo agent (no keys, no network) runs a scenario for each of these ")
        text.append("words in a prompt; try ")
        text.append(words[0], style="bold")
        text.append(":\n")
        text.append(" ".join(words), style="italic")
    elif agent:
        text.append(f"\nThis session runs {agent}: tell it what to do.")
    return text


class Welcome(Static):
    """The welcome of a session with no message yet (`welcome_text`)."""

    def show_for(self, agent: str | None) -> None:
        """Say welcome for a session of `agent`."""
        self.update(welcome_text(agent, demo_words()))
