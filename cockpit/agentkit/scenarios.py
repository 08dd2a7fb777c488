"""The demo agent's scenario words, kept as data in `acp/demo_scenarios.toml`: read here by
the agent (which runs them) and by `cockpit agents` (which lists them), so the two can
never disagree. Pure reading and checking: no ACP, no agent code."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from pathlib import Path

from cockpit.paths import agents_dir

SCENARIOS_FILE = "demo_scenarios.toml"
WORD = re.compile(r"[a-z]+")
"""A scenario word: lower-case letters only, so it matches as a whole word in a prompt."""


class ScenarioError(ValueError):
    """The scenario file is malformed, or the agent's handlers do not match its words."""


def scenarios_path() -> Path:
    """The bundled scenario file, beside the demo agent."""
    return agents_dir() / SCENARIOS_FILE


def parse_scenarios(text: str, source: str = SCENARIOS_FILE) -> dict[str, str]:
    """Every scenario word and what it does, in the file's order (the running order). Each
    `[[scenario]]` needs a `word` (lower-case letters) and a `does` text, and no word may
    come twice: anything else is a ScenarioError naming `source`."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(f"{source}: not valid TOML: {error}") from error
    entries = document.get("scenario")
    if not isinstance(entries, list) or not entries:
        raise ScenarioError(f"{source}: no [[scenario]] entries")
    found: dict[str, str] = {}
    for number, entry in enumerate(entries, start=1):
        word = entry.get("word") if isinstance(entry, dict) else None
        does = entry.get("does") if isinstance(entry, dict) else None
        if not isinstance(word, str) or not WORD.fullmatch(word):
            raise ScenarioError(f"{source}: scenario {number}: `word` must be lower-case letters")
        if not isinstance(does, str) or not does.strip():
            raise ScenarioError(f"{source}: scenario {word!r}: `does` must be a text")
        if word in found:
            raise ScenarioError(f"{source}: scenario {word!r} is listed twice")
        found[word] = does
    return found


def read_scenarios(path: Path | None = None) -> dict[str, str]:
    """The scenarios of `path` (the bundled file by default); see `parse_scenarios`."""
    path = path or scenarios_path()
    return parse_scenarios(path.read_text(encoding="utf-8"), str(path))


def check_handlers(words: Iterable[str], handlers: Iterable[str]) -> None:
    """A ScenarioError unless every word has a handler and every handler a word: a word
    without a handler would fail mid-turn, a handler without a word could never run."""
    listed, handled = list(words), set(handlers)
    unhandled = [word for word in listed if word not in handled]
    unlisted = sorted(handled - set(listed))
    problems = []
    if unhandled:
        problems.append(f"words without a handler: {', '.join(unhandled)}")
    if unlisted:
        problems.append(f"handlers without a word in {SCENARIOS_FILE}: {', '.join(unlisted)}")
    if problems:
        raise ScenarioError("the demo agent's scenarios disagree: " + "; ".join(problems))
