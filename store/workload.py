"""A deterministic, realistic agent stream, as real agents send it.

Used by the store benchmark and the tests. What real agents do (claude-agent-acp,
gemini-cli, codex-acp, recorded end to end): no messageId; one 3-4 character chunk per
model token; an empty chunk opening each block; replies separated only by tool calls;
a tool call sent as a start with empty input and three updates; tables split mid-row;
now and then a whole message re-sent as one id-less block (a recap) or as a snapshot.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

WORDS = tuple(
    "the store folds every chunk into one row so a page boundary never cuts a message "
    "agent session transcript bubble render stream token delta table column value read "
    "write edit search command terminal output plan step cache prefix request cockpit".split()
)


def paragraph(rng: random.Random, words: int) -> str:
    """A sentence-cased run of `words` words ending with a full stop."""
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def markdown_reply(rng: random.Random, size: int) -> str:
    """A markdown reply of about `size` characters: headings, paragraphs, a table, a list,
    and a fenced code block."""
    parts: list[str] = []
    while sum(map(len, parts)) < size:
        parts.append(f"## {paragraph(rng, 3)[:-1]}\n\n{paragraph(rng, rng.randint(12, 30))}\n\n")
        rows = "".join(
            f"| {rng.choice(WORDS)} | {rng.randint(0, 999)} | {rng.choice(WORDS)} |\n"
            for _ in range(rng.randint(3, 6))
        )
        parts.append(f"| name | count | note |\n|------|------:|------|\n{rows}\n")
        parts.append("".join(f"- {paragraph(rng, rng.randint(4, 9))}\n" for _ in range(3)) + "\n")
        parts.append(
            f"```python\ndef step_{len(parts)}(x):\n    return x * {rng.randint(2, 9)}\n```\n\n"
        )
    return "".join(parts)


def token_pieces(text: str, rng: random.Random) -> Iterator[str]:
    """Split `text` the way a model's token deltas arrive: 3 or 4 characters at a time."""
    index = 0
    while index < len(text):
        step = rng.choice((3, 4))
        yield text[index : index + step]
        index += step


def text_update(kind: str, text: str, message_id: str | None = None) -> dict[str, Any]:
    """The ACP wire form of one text chunk."""
    update: dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id is not None:
        update["messageId"] = message_id
    return update


@dataclass
class Workload:
    """A scripted session: events to feed and what the transcript must end up holding."""

    events: list[tuple[str, Any]] = field(default_factory=list)
    """("prompt", text) | ("update", ACP update dict) | ("end", None)"""
    messages: list[tuple[str, str]] = field(default_factory=list)
    """The logical messages, in order: (kind, text); a tool call or plan has empty text."""

    @property
    def chunks(self) -> int:
        """How many agent updates the workload sends."""
        return sum(1 for name, _ in self.events if name == "update")

    def prompt(self, text: str) -> None:
        self.events.append(("prompt", text))
        self.messages.append(("user", text))

    def stream(self, kind: str, row_kind: str, text: str, rng: random.Random) -> None:
        self.events.append(("update", text_update(kind, "")))
        self.events.extend(
            ("update", text_update(kind, piece)) for piece in token_pieces(text, rng)
        )
        self.messages.append((row_kind, text))

    def update(self, update: Mapping[str, Any], *, new_message: str | None = None) -> None:
        self.events.append(("update", dict(update)))
        if new_message is not None:
            self.messages.append((new_message, ""))


def realistic_stream(turns: int = 20, seed: int = 7, reply_size: int = 1500) -> Workload:
    """`turns` turns of: prompt, thought, reply with a table, a tool call, a second reply;
    every third turn adds a recap of the first reply and a plan, every fourth a snapshot."""
    rng = random.Random(seed)
    work = Workload()
    for turn in range(1, turns + 1):
        work.prompt(f"Turn {turn}: {paragraph(rng, 8)}")
        work.stream("agent_thought_chunk", "thought", paragraph(rng, rng.randint(30, 60)), rng)
        first = markdown_reply(rng, reply_size)
        work.stream("agent_message_chunk", "agent", first, rng)
        call = f"call_{turn:04d}"
        work.update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": call,
                "title": "Read",
                "kind": "read",
                "status": "pending",
                "rawInput": {},
            },
            new_message="tool",
        )
        work.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call,
                "title": f"Read notes{turn}.md",
                "rawInput": {"path": f"notes{turn}.md"},
                "locations": [{"path": f"notes{turn}.md"}],
            }
        )
        work.update(
            {"sessionUpdate": "tool_call_update", "toolCallId": call, "_meta": {"hook": "ok"}}
        )
        work.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call,
                "status": "completed",
                "content": [
                    {"type": "content", "content": {"type": "text", "text": paragraph(rng, 20)}}
                ],
            }
        )
        second = paragraph(rng, rng.randint(40, 90))
        work.stream("agent_message_chunk", "agent", second, rng)
        if turn % 4 == 0:
            work.update(text_update("agent_message_chunk", second))  # a snapshot of the open reply
        if turn % 3 == 0:
            work.update(
                {
                    "sessionUpdate": "plan",
                    "entries": [
                        {"content": paragraph(rng, 4), "priority": "medium", "status": "completed"},
                        {"content": paragraph(rng, 4), "priority": "low", "status": "pending"},
                    ],
                },
                new_message="plan",
            )
            work.update(text_update("agent_message_chunk", first))  # a whole-block recap
        work.update({"sessionUpdate": "usage_update", "used": 1000 * turn, "size": 200000})
        work.events.append(("end", None))
    return work


BENCH_MARKER = "<<< END OF THE BENCHMARK REPLY >>>"
"""The last line of `benchmark_reply`: when it is on screen, the whole reply is."""

BENCH_SIZE = 49_904
"""The benchmark reply's size: 12,476 chunks of 4 characters."""

_CODE = {
    "python": (
        "def fold(held, incoming):\n"
        "    if incoming.startswith(held):\n"
        "        return incoming[len(held):]\n"
        "    return incoming\n"
    ),
    "rust": (
        "fn fold(held: &str, incoming: &str) -> String {\n"
        "    incoming.strip_prefix(held).unwrap_or(incoming).to_string()\n"
        "}\n"
    ),
    "sql": (
        "SELECT seq, bytes FROM messages\n"
        " WHERE session = ?1 AND seq < ?2\n"
        " ORDER BY seq DESC LIMIT 121;\n"
    ),
    "typescript": (
        "export function fold(held: string, incoming: string): string {\n"
        "  return incoming.startsWith(held) ? incoming.slice(held.length) : incoming;\n"
        "}\n"
    ),
}
_SECTIONS = (
    "table",
    "python",
    "bullets",
    "rust",
    "numbered",
    "table",
    "sql",
    "bullets",
    "typescript",
    "numbered",
    "table",
    "prose",
)


def _wrapped(rng: random.Random, words: int) -> str:
    """A paragraph hard-wrapped near 110 columns, as models often write."""
    lines, line = [], ""
    for word in paragraph(rng, words).split():
        if len(line) + len(word) + 1 > 110:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "\n".join([*lines, line]) + "\n\n"


def _block(kind: str, rng: random.Random, scale: float) -> str:
    if kind == "table":
        rows = "".join(
            f"| {rng.choice(WORDS)} | {rng.randint(0, 9999)} "
            f"| {rng.choice(WORDS)} {rng.choice(WORDS)} |\n"
            for _ in range(max(3, round(12 * scale)))
        )
        return f"| name | count | note |\n|------|------:|------|\n{rows}\n"
    if kind in _CODE:
        return f"```{kind}\n{_CODE[kind] * max(1, round(3 * scale))}```\n\n"
    if kind in ("bullets", "numbered"):
        items = range(1, max(3, round(10 * scale)) + 1)
        marks = ["-" if kind == "bullets" else f"{n}." for n in items]
        return "".join(f"{mark} {paragraph(rng, rng.randint(10, 18))}\n" for mark in marks) + "\n"
    return _wrapped(rng, round(90 * scale) + 5)


def benchmark_reply(size: int = BENCH_SIZE, seed: int = 50) -> str:
    """The streaming benchmark's reply: exactly `size` characters of markdown in twelve
    sections (headings, paragraphs, three tables, four fenced code blocks in different
    languages, bullet and numbered lists), ending with the BENCH_MARKER line."""
    rng = random.Random(seed)
    scale = size / BENCH_SIZE
    parts: list[str] = ["# Streaming benchmark\n\n"]
    for number, kind in enumerate(_SECTIONS, start=1):
        parts.append(f"## {number}. {paragraph(rng, 4)[:-1]}\n\n")
        parts.extend(_wrapped(rng, 90) for _ in range(max(1, round(4.6 * scale))))
        parts.append(_block(kind, rng, scale))
    ending = f"\n\n{BENCH_MARKER}\n"
    body = "".join(parts)
    while len(body) < size - len(ending):
        body += _wrapped(rng, 40)
    return body[: size - len(ending)] + ending
