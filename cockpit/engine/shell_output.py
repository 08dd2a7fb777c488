"""What a command the user ran keeps of its output, as pure rules: the head and the tail
within a bound (a `!cat` of a huge log cannot fill the store), the values of the user's
secret-named variables masked wherever they show, and the text that carries the output to
the agent with a prompt, bounded again.

Masking is why the bound keeps a margin: a secret cut in two by the bound would leave a
piece of itself in what is kept, so each side keeps a secret's length more than it shows
and the cut moves off any secret it would split."""

from __future__ import annotations

import codecs
from collections.abc import Mapping

from cockpit.text.secret_names import is_secret
from cockpit.text.textout import fence_for

OUTPUT_HEAD = 32_000
"""Characters of a command's output kept from its start."""
OUTPUT_TAIL = 32_000
"""Characters of a command's output kept from its end."""
ATTACH_HEAD = 4_000
"""Characters of a command's output sent with a prompt from its start."""
ATTACH_TAIL = 4_000
"""Characters of a command's output sent with a prompt from its end."""
MIN_SECRET = 6
"""A secret-named variable's value shorter than this is not masked: "1" or "true" would
mask every such character of the output, and hide nothing."""
LEFT_OUT = "\n… {count:,} characters left out …\n"
"""What stands in the middle of an output kept as its head and its tail."""


def secret_values(variables: Mapping[str, str]) -> dict[str, str]:
    """The values to mask, by the name of the variable that holds each: every variable
    whose name says it holds a key, a token or a password (`is_secret`)."""
    return {
        name: value
        for name, value in variables.items()
        if is_secret(name) and len(value) >= MIN_SECRET
    }


def mask(text: str, secrets: Mapping[str, str]) -> str:
    """`text` with every stretch of secret values (one, or several that overlap or touch:
    `abcabc` in `abcabcabc`) replaced by `[masked NAME]`, NAME the variable of the longest
    value in it: no piece of a value is left beside the mask."""
    if not secrets or not text:
        return text
    names = {value: name for name, value in secrets.items()}
    merged: list[list[int]] = []
    for start, end in sorted(_spans(text, secrets)):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, done = [], 0
    for start, end in merged:
        stretch = text[start:end]
        longest = max((value for value in names if value in stretch), key=len)
        out += [text[done:start], f"[masked {names[longest]}]"]
        done = end
    return "".join([*out, text[done:]])


def _spans(text: str, secrets: Mapping[str, str]) -> list[tuple[int, int]]:
    """Where each secret value occurs in `text` (start, end), overlapping ones too."""
    spans = []
    for value in secrets.values():
        start = text.find(value)
        while start != -1:
            spans.append((start, start + len(value)))
            start = text.find(value, start + 1)
    return spans


def _off_secrets(text: str, at: int, secrets: Mapping[str, str]) -> int:
    """Where to cut `text` at about `at` so that no secret is split: moved past the end of
    any secret `at` splits (and of any that one overlaps in turn)."""
    spans = _spans(text, secrets)
    moved = True
    while moved:
        moved = False
        for start, end in spans:
            if start < at < end:
                at, moved = end, True
    return at


def head_and_tail(text: str, head: int, tail: int) -> tuple[str, int]:
    """`text` whole when it is at most `head + tail` characters long, else its first
    `head` and last `tail` with a line in between saying how many were left out; and that
    count (0 when nothing was)."""
    left_out = len(text) - head - tail
    if left_out <= 0:
        return text, 0
    return text[:head] + LEFT_OUT.format(count=left_out) + text[len(text) - tail :], left_out


class ShellOutput:
    """A command's output as it comes (bytes, any encoding errors replaced), kept as its
    head and its tail, shown masked."""

    def __init__(
        self, secrets: Mapping[str, str], head: int = OUTPUT_HEAD, tail: int = OUTPUT_TAIL
    ) -> None:
        self._secrets = dict(secrets)
        margin = max((len(value) for value in self._secrets.values()), default=0)
        self._head, self._tail = head, tail
        self._head_room, self._tail_room = head + margin, tail + margin
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.head = ""
        """The first characters, up to the head and a margin."""
        self.tail = ""
        """The last characters past the head, up to the tail and a margin."""
        self.total = 0
        """Characters received in all."""

    def hide(self, name: str, value: str) -> None:
        """Mask `value` too from now on (named `name`), in what came before it as well."""
        self._secrets[name] = value
        margin = max(len(value) for value in self._secrets.values())
        self._head_room = max(self._head_room, self._head + margin)
        self._tail_room = max(self._tail_room, self._tail + margin)

    def add(self, data: bytes, final: bool = False) -> None:
        """Take the next bytes the command wrote (`final`: there are no more)."""
        text = self._decoder.decode(data, final)
        self.total += len(text)
        room = self._head_room - len(self.head)
        if room > 0:
            self.head += text[:room]
            text = text[room:]
        if text:
            self.tail = (self.tail + text)[-self._tail_room :]

    def shown(self) -> tuple[str, int]:
        """The output as its row keeps it (masked; its head and tail when it is long) and
        how many characters were left out of its middle."""
        if self.total <= len(self.head) + len(self.tail):
            return mask(self.head + self.tail, self._secrets), 0
        head = self.head[: _off_secrets(self.head, self._head, self._secrets)]
        # The tail's first `margin` characters may hold the end of a secret that began
        # before it: the cut is past them, and past any secret it would split.
        tail_start = _off_secrets(self.tail, max(len(self.tail) - self._tail, 0), self._secrets)
        tail = self.tail[tail_start:]
        left_out = self.total - len(head) - len(tail)
        middle = LEFT_OUT.format(count=left_out)
        return mask(head, self._secrets) + middle + mask(tail, self._secrets), left_out


def attachment_text(command: str, output: str, ending: str) -> str:
    """The text that carries a command's output to the agent with a prompt: what ran, how
    it ended (`ending`: "exit 0", "killed"...), and its output, bounded (head and tail),
    fenced so that no line of it can end the fence."""
    shown, _ = head_and_tail(output, ATTACH_HEAD, ATTACH_TAIL)
    body = f"$ {command}\n{shown}"
    fence = fence_for(body)
    if not body.endswith("\n"):
        body += "\n"
    said = f"A command I ran in the session's folder ({ending}), and its output:"
    return f"{said}\n{fence}\n{body}{fence}"
