"""What the demo agent says: the fixed texts of its scenarios, and the replies it builds
(the tour, the slow reply, the huge one, the stderr flood, a re-spaced re-send)."""

from __future__ import annotations

import random

from store.workload import paragraph

HUGE_SIZE = 10 * 1024 * 1024
STDERR_SIZE = 1024 * 1024

TOUR_INTRO = """\
# Welcome to Cockpit

Cockpit is a terminal cockpit for many ACP agent sessions at once. Agents speak the Agent
Client Protocol over stdio; every message they stream is folded into **one row** of a local
SQLite store, so long sessions page fast and survive restarts.

## Real agents

- `cockpit agents` lists the known agents and which are installed.
- `cockpit run --agent gemini "explain this repo"` uses a named agent.
- `--agent-cmd "CMD ARGS"` runs any ACP command instead.
- Add your own as entries in `agents.toml` in Cockpit's config folder.

## Keys

- **Enter** sends the prompt, **Esc** cancels the running turn.
- **1-9** answer a question the agent asks (its own options).
- **Ctrl+N** opens a new session; **Ctrl+Up** / **Ctrl+Down** switch sessions.
- **Ctrl+O** is the inbox of everything waiting for you; **Ctrl+G** goes to the next one.
- **F1** lists every key; **Ctrl+P** is the command palette.
- **Ctrl+Q** detaches: the agents go on in the Cockpit service, and `cockpit` attaches
  again (with `--local` it quits, and the agents stop).

## Headless commands

- `cockpit run "PROMPT"` runs one turn and prints the reply.
- `cockpit ls` lists the stored sessions.
- `cockpit show SESSION` prints a session's transcript.

## This demo agent

No keys, no network: it follows a script. Put these words in a prompt (they combine):

"""

THOUGHT = (
    "The user wants to see how a thought streams. I will reason in a few short sentences "
    "first, then answer. A client should fold this into its own row, apart from the reply."
)
THINK_REPLY = (
    "I thought it over first: that block arrived as `agent_thought_chunk` updates, and this "
    "reply as `agent_message_chunk` updates."
)
IDS_THOUGHT = "Every chunk of this thought carries the same messageId."
IDS_REPLY = (
    "Every chunk of this reply carries one messageId too, different from the thought's, so "
    "a client can fold by id instead of by adjacency."
)
PLAN_STEPS = (
    ("Survey the project folder", "Surveyed the folder: nothing needs to move."),
    ("Draft the change", "Drafted the change in my head; it stays small."),
    ("Check the result", "Checked the result: all three steps are done."),
)
PLAN_TOOL_STEPS = ("Read the task", "Make the change", "Check the result")
PLAN_TOOL_MISSING = (
    "This session was handed no cockpit-plan server, so there is no plan tool to call:"
    " Cockpit hands it to agents in session/new, session/load and session/resume."
)
RESEND_TEXT = (
    "This message is sent several times on purpose: first token by token, then whole, "
    "then with its spacing changed, then as a longer snapshot."
)
RESEND_TAIL = " And one more sentence."
RESEND_DONE = "Done re-sending."
ESCAPE_TEXT = (
    "Escape sequences ahead: \x1b[31mred\x1b[0m text, a title change \x1b]0;pwned\x07 and a "
    "bell \x07. A client should show them harmlessly, never obey them."
)
GARBAGE_LINES = (
    "this is not json",
    "\x1b[1;31mALERT\x1b[0m: \x1b[32mcoloured text\x1b[0m that is not json either",
    "42",
    "[1, 2]",
    '"a string"',
    "null",
    '{"jsonrpc": "2.0", "method": "unknown/notification", "params": {}}',
)
GARBAGE_REPLY = "Still here after the garbage."
CRASH_TEXT = (
    "This reply will never finish: the demo agent is about to crash on purpose, in the "
    "middle of a sentence, so that the client can show"
)


def tour_text(scenarios: dict[str, str]) -> str:
    """The default reply: what Cockpit is, how to add agents, and this agent's words."""
    rows = "".join(f"| `{word}` | {text} |\n" for word, text in scenarios.items())
    return TOUR_INTRO + "| word | what it shows |\n|------|---------------|\n" + rows


def slow_text(rng: random.Random) -> str:
    """A long reply (well over 200 chunks) for the slow scenario."""
    parts = ["# A slow reply\n\n"]
    while sum(map(len, parts)) < 1200:
        parts.append(paragraph(rng, rng.randint(12, 24)) + "\n\n")
    return "".join(parts)


def huge_text() -> str:
    """Exactly HUGE_SIZE characters of numbered lines."""
    sample = len("line 0000001 of the huge reply\n")
    count = HUGE_SIZE // sample + 2
    text = "".join(f"line {n:07d} of the huge reply\n" for n in range(1, count))
    return text[:HUGE_SIZE]


def stderr_log() -> str:
    """At least STDERR_SIZE characters of log lines."""
    lines: list[str] = []
    size = 0
    number = 0
    while size < STDERR_SIZE:
        number += 1
        line = f"demo agent: log line {number:06d}: nothing is wrong, this is just noise\n"
        lines.append(line)
        size += len(line)
    return "".join(lines)


def respaced(text: str) -> str:
    """`text` with its whitespace changed but not its words: a re-send a client must spot."""
    words = text.split(" ")
    return "  ".join(words[:4]) + "\n" + " ".join(words[4:])
