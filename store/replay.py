"""Rule 5 whatever the timing: history an agent replays, told from its live turn by what it is.

ACP has an agent replay a session's history before it answers `session/load`, so all it
sends until then is replay. gemini-cli 0.61.0 answers after the first replayed update and
sends the rest right after the client's next prompt, before the live reply. A pause tells
nothing there (the late part may come at once or seconds later), so after the answer each
update is judged by what it is: an update that recites the stored transcript in order is
replay; the first that does not is the live turn's.

`Recital` follows the agent's recital through the stored transcript. It is pure (no I/O):
the store hands it the stored prompts when the reload begins, and the replies and plans
of one turn when the recital reaches that turn (`wants`). It never folds on a guess:
evidence that decides nothing makes an update `UNSURE`, held until an update that does
decide comes (or the replay ends, and then it is kept: nothing is lost).
"""

from __future__ import annotations

import bisect
import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from store.fold_rules import RECAP_FLOOR

RECITAL_FLOOR: Final = RECAP_FLOOR
"""Characters (whitespace aside) a replayed text must share with the start of a stored one
to begin reciting it, unless it is the whole of it. Shorter pieces match too much: a
live reply's first token "Here" begins many stored replies."""


class Verdict(enum.Enum):
    """What an update the agent sent after the load answered is."""

    REPLAY = "replay"
    """It recites the stored transcript: dropped (rule 5). What was held before it too."""
    UNSURE = "unsure"
    """Nothing in it decides: held until an update that decides comes."""
    LIVE = "live"
    """The live turn's own: the replay is over. What was held is live too, before it."""


def solid(text: str) -> str:
    """`text` without its whitespace: a replay may lay out what was streamed differently."""
    return "".join(text.split())


@dataclass(frozen=True, slots=True)
class StoredPrompt:
    """A stored user message: a turn's prompt, or one sent while the turn ran."""

    seq: int
    turn: int
    solid: str


@dataclass(frozen=True, slots=True)
class StoredText:
    """A stored reply, thought or plan of the turn being recited."""

    seq: int
    kind: str
    solid: str = ""
    entries: Any = None
    """A plan's entries."""


def stored_prompt(seq: int, turn: int, text: str) -> StoredPrompt:
    """What the recital keeps of a stored user message: its place, and its text as compared."""
    return StoredPrompt(seq, turn, solid(text))


def stored_text(seq: int, kind: str, text: str, payload: Mapping[str, Any] | None) -> StoredText:
    """What the recital keeps of a stored reply, thought or plan of the turn it recites."""
    entries = payload.get("entries") if kind == "plan" and payload is not None else None
    return StoredText(seq, kind, solid(text), entries)


def _begins(stored: str, piece: str) -> bool:
    """True when `piece` is how a recital of `stored` may begin: all of it, or a start of
    it at least RECITAL_FLOOR long."""
    return piece == stored or (len(piece) >= RECITAL_FLOOR and stored.startswith(piece))


def _names(stored: str, piece: str) -> bool:
    """True when a replayed user message `piece` is the stored message `stored`: it begins
    it, or it starts with all of a stored message at least RECITAL_FLOOR long (an agent
    may replay a prompt with the files it mentioned)."""
    if not stored:
        return False
    return _begins(stored, piece) or (len(stored) >= RECITAL_FLOOR and piece.startswith(stored))


class Recital:
    """Where an agent's replay of a session stands in the stored transcript.

    The evidence, update by update (`judge_text`, `judge_tool`, `judge_plan`):

    - A user message that is a stored user message later than the one recited last
      (`_names`) is replay, and the recital goes on from there. Any other user message
      is replay too once a stored prompt was recited: agents keep user-role messages
      Cockpit never stored (gemini's tool results, its session context). Before that it
      is UNSURE: it is dropped if a stored prompt follows, kept if live content does.
    - A reply or thought is replay when it goes on with the stored message of its kind
      being recited (right after it, the texts agreeing but for whitespace), or begins
      (`_begins`) a later stored message of its kind in the turn being recited. Before any
      recited prompt, or when it does neither, it is live: the recital moves only forward,
      so a live reply equal to an old one, once the old one was recited, is live.
    - A tool call is replay when its id is stored, in the turn being recited or a later
      one (gemini recites a turn's calls under the turn before); else live.
    - A plan is replay when it equals the plan stored for the turn being recited.
    - Whitespace alone, and an update Cockpit does not know, decide nothing (UNSURE).
    """

    def __init__(self, prompts: Iterable[StoredPrompt], end: int) -> None:
        self.end = end
        """The first seq that is not history: rows from it on were written since the reload."""
        self._prompts = sorted(prompts, key=lambda p: p.seq)
        self._seqs = [prompt.seq for prompt in self._prompts]
        self._by_start: dict[str, list[int]] = {}
        """Stored user messages by their first RECITAL_FLOOR characters, as indexes."""
        for index, prompt in enumerate(self._prompts):
            self._by_start.setdefault(prompt.solid[:RECITAL_FLOOR], []).append(index)
        self.at = 0
        """The seq of the stored row recited last (0 before any)."""
        self.turn: int | None = None
        """The turn being recited: that of the stored user message recited last."""
        self._user_run = ""
        """The user text sent since the last update of another kind (a prompt may come in
        pieces)."""
        self._texts: list[StoredText] = []
        self._loaded: int | None = None
        self._reciting: tuple[StoredText, int] | None = None
        """The stored text being recited and how much of it (whitespace aside) was, while
        only text of its kind came since."""

    # -- what the store must hand it ----------------------------------------------------------

    def wants(self) -> tuple[int, int, int] | None:
        """(turn, first seq, end seq) of the turn whose replies and plans judging a reply,
        thought or plan needs, when they are not loaded yet."""
        if self.turn is None or self._loaded == self.turn:
            return None
        seqs = [p.seq for p in self._prompts if p.turn == self.turn]
        later = [p.seq for p in self._prompts if p.turn > self.turn]
        return self.turn, min(seqs), min(later, default=self.end)

    def load(self, turn: int, texts: Iterable[StoredText]) -> None:
        """The replies, thoughts and plans stored for `turn`, in seq order."""
        self._loaded = turn
        self._texts = sorted(texts, key=lambda t: t.seq)
        self._reciting = None

    # -- judging ------------------------------------------------------------------------------

    def judge_text(self, kind: str, text: str) -> Verdict:
        """A text update of `kind` (user, agent, thought)."""
        piece = solid(text)
        if kind == "user":
            return self._judge_user(piece)
        self._user_run = ""
        if self._reciting is not None and self._reciting[0].kind == kind:
            stored, done = self._reciting
            if stored.solid.startswith(piece, done) and (piece or done < len(stored.solid)):
                self._reciting = (stored, done + len(piece))
                return Verdict.REPLAY
        if not piece:
            return Verdict.UNSURE
        self._reciting = None
        if self.turn is None or self._loaded != self.turn:
            return Verdict.LIVE
        for stored in self._texts:
            if stored.seq > self.at and stored.kind == kind and _begins(stored.solid, piece):
                self._reciting = (stored, len(piece))
                self.at = stored.seq
                return Verdict.REPLAY
        return Verdict.LIVE

    def _judge_user(self, piece: str) -> Verdict:
        """A user message is told by itself, or with the user text just before it (a
        prompt replayed in pieces)."""
        self._reciting = None
        run = self._user_run + piece
        self._user_run = run
        for candidate in dict.fromkeys((piece, run)):
            prompt = self._later_prompt(candidate)
            if prompt is not None:
                self.at, self.turn = prompt.seq, prompt.turn
                self._user_run = candidate
                return Verdict.REPLAY
        return Verdict.UNSURE if self.turn is None else Verdict.REPLAY

    def _later_prompt(self, piece: str) -> StoredPrompt | None:
        """The first stored user message after the one recited last that `piece` names."""
        if not piece:
            return None
        indexes = self._by_start.get(piece[:RECITAL_FLOOR], [])
        later = bisect.bisect_right(self._seqs, self.at)
        for index in indexes[bisect.bisect_left(indexes, later) :]:
            if _names(self._prompts[index].solid, piece):
                return self._prompts[index]
        return None

    def judge_tool(self, stored_turn: int | None) -> Verdict:
        """A tool call or its update; `stored_turn` is the turn of the stored row of its id
        (None when none is stored before the reload)."""
        self._user_run = ""
        self._reciting = None
        if self.turn is not None and stored_turn is not None and stored_turn >= self.turn:
            return Verdict.REPLAY
        return Verdict.LIVE

    def judge_plan(self, entries: Sequence[Any]) -> Verdict:
        """A plan update with these entries."""
        self._user_run = ""
        self._reciting = None
        recited = self.turn is not None and self._loaded == self.turn
        if recited and any(t.kind == "plan" and t.entries == list(entries) for t in self._texts):
            return Verdict.REPLAY
        return Verdict.LIVE
