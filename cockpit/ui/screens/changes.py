"""The changes screen: every file a worktree session changed against its base, or what one
of its turns changed, the diff of the one chosen, review comments gathered on its lines
and hunks and sent to the agent as one prompt, and what brings the work home (commit,
merge, push) or throws it away (discard, undoable). The rules are `changes_rules`; this
screen only shows and asks."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, MutableSequence
from typing import ClassVar

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from cockpit.api import EngineAPI, FileChange
from cockpit.text.review import ReviewComment, review_prompt
from cockpit.ui.changes_rules import (
    ASK_TO_COMMIT,
    Target,
    comment_on,
    file_line,
    hunk_words,
    hunks,
    marks,
    merge_question,
    merge_words,
    notes,
    step_hunk,
    step_line,
    step_view,
    turns_of,
    view_words,
)
from cockpit.ui.dialog import Dialog, OpenScreen, escape
from cockpit.ui.diffs.palette import diff_styles
from cockpit.ui.diffs.render import render_diff
from cockpit.ui.keys_in_order import Field, handed_on, ran_own_binding
from cockpit.ui.one_line import clean_line
from cockpit.ui.screens.questions import ConfirmScreen

SHELL = "shell"
"""What the screen answers when the user asked for a shell in the worktree: the app puts
`!` in the prompt (a `!command` runs in the session's folder, the worktree)."""

KEYS = (
    "↑↓ file  t/T turn  [ ] hunk  j/k line  c comment  s send  C commit  m merge  p push"
    "  x discard  u undo  r reread  ! shell (a !command prompt in the worktree)  Esc close"
)

View = list[tuple[FileChange, bool]]
"""The files a view shows, each with whether it changed between turns (a turn's view)."""


class AskScreen(Dialog[str | None]):
    """One line asked of the user (a comment, a commit message); Esc asks nothing."""

    BINDINGS: ClassVar[list[BindingType]] = [escape("Cancel")]

    def __init__(self, title: str, hint: str) -> None:
        super().__init__()
        self.heading = title
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Content(clean_line(self.heading)), classes="dialog-title")
            yield Field("", id="answer")
            yield Label(Content(self.hint), classes="hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)


class FileList(OptionList):
    """The changed files, where the keyboard is. The screen's keys run as they come, in
    the order typed (`t` then `c`: the comment is on the turn's view), and a key that
    comes after `c` opened the comment's field (in one burst) goes on to the field."""

    async def on_key(self, event: events.Key) -> None:
        if not handed_on(self, event):
            await ran_own_binding(self, event, text=False, screen=True)


class ChangesScreen(Dialog[str | None]):
    """A worktree session's changes, reviewed where the diff is."""

    DEFAULT_CSS = """
    ChangesScreen #dialog {
        width: 100%;
        height: 100%;
        max-height: 100%;
        padding: 0 1;
    }
    ChangesScreen #dialog .dialog-title { margin-bottom: 0; }
    ChangesScreen #files { height: auto; max-height: 7; padding: 0 1; }
    ChangesScreen #diff { height: 1fr; }
    ChangesScreen #notes { height: auto; max-height: 4; color: $text-warning; }
    ChangesScreen #where { color: $text-muted; width: 1fr; }
    ChangesScreen #keys { color: $text-muted; margin-top: 0; width: 1fr; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        escape("Close"),
        Binding("q", "dismiss(None)", "Close", show=False),
        Binding("left_square_bracket", "hunk(-1)", "Previous hunk"),
        Binding("right_square_bracket", "hunk(1)", "Next hunk"),
        Binding("j", "line(1)", "Next line"),
        Binding("k", "line(-1)", "Previous line"),
        Binding("t", "view(1)", "Next turn"),
        Binding("T", "view(-1)", "Previous turn"),
        Binding("r", "reread", "Read again"),
        Binding("c", "comment", "Comment"),
        Binding("s", "send", "Send comments"),
        Binding("C", "commit", "Commit"),
        Binding("m", "merge", "Merge"),
        Binding("p", "push", "Push"),
        Binding("x", "discard", "Discard"),
        Binding("u", "undo_discard", "Undo discard"),
        Binding("exclamation_mark", "dismiss('shell')", "Shell"),
    ]

    def __init__(
        self,
        engine: EngineAPI,
        session: str,
        branch: str,
        open_screen: OpenScreen,
        comments: MutableSequence[ReviewComment] | None = None,
    ) -> None:
        super().__init__()
        self.engine = engine
        self.open_screen = open_screen
        """How a question of this screen is opened: the app's way, which holds the keys
        typed after `c` until the comment's field is there to take them."""
        self.session = session
        self.branch = branch
        self.comments: MutableSequence[ReviewComment] = comments if comments is not None else []
        """The comments not sent yet: the app's own list, so closing the screen keeps them."""
        self.turns: list[int] = []
        self.turn: int | None = None
        """The view: None for every change against the base, else that turn's."""
        self.views: dict[int | None, View] = {}
        self.view: View = []
        self.target = Target()
        self.shown_path: str | None = None
        self.read = asyncio.Event()
        """Set once the changes and the turns were first read (or could not be): a `t`
        typed before waits for them instead of finding no turn."""

    @property
    def changes(self) -> list[FileChange]:
        """The files of the view shown."""
        return [change for change, _ in self.view]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self._title(), id="title", classes="dialog-title")
            yield FileList(id="files")
            with VerticalScroll(id="diff"):
                yield Static(id="diff-body")
            yield Static(id="notes")
            yield Label("Reading the changes…", id="where")
            yield Label(Content(KEYS), id="keys", classes="hint")

    def _title(self) -> Content:
        return Content(
            f"Changes of {clean_line(self.branch)} · {view_words(self.turn, self.turns)}"
        )

    def on_mount(self) -> None:
        self.query_one("#files", OptionList).focus()
        self.load()

    def on_unmount(self) -> None:
        if self.comments:
            self.say(
                f"{len(self.comments)} review comment(s) kept, not sent: F6 shows them again"
                " and s sends them."
            )

    @work(exclusive=True, group="changes", exit_on_error=False)
    async def load(self) -> None:
        """Read the changes again (after a commit or a discard too), staying on the view
        and the file shown."""
        try:
            changes = await self.engine.worktree_changes(self.session)
            self.turns = turns_of(await self.engine.checkpoints(self.session))
        except ValueError as error:
            self.say(str(error), error=True)
            return
        finally:
            self.read.set()
        self.views = {None: [(change, False) for change in changes]}
        if self.turn is not None:
            view = await self._read_turn(self.turn) if self.turn in self.turns else None
            if view is None:
                self.turn = None
            else:
                self.views[self.turn] = view
        self.fill()
        # Every turn's view is read now, so `t` switches at once: keys typed after it
        # (a comment) then act on the view it showed, in the order typed.
        for turn in self.turns:
            if turn not in self.views:
                view = await self._read_turn(turn)
                if view is None:
                    return
                self.views[turn] = view

    async def _read_turn(self, turn: int) -> View | None:
        try:
            found = await self.engine.turn_changes(self.session, turn)
        except (KeyError, ValueError) as error:
            self.say(str(error.args[0] if error.args else error), error=True)
            return None
        return [(change, change.outside) for change in found]

    def fill(self) -> None:
        """Show the view's files, on the file chosen before when the view still has it.

        The highlight, not the file shown, says which: a key that moved it may not have
        been answered yet."""
        before = self.chosen
        keep = before.path if before is not None else self.shown_path
        self.view = self.views.get(self.turn, [])
        self.query_one("#title", Label).update(self._title())
        files = self.query_one("#files", OptionList)
        files.clear_options()
        files.add_options(Option(Text(self._line(c, outside))) for c, outside in self.view)
        paths = [change.path for change in self.changes]
        if keep != self.shown_path or keep not in paths:
            self.target = Target()
        if paths:
            files.highlighted = paths.index(keep) if keep in paths else 0
        self.show()

    def _line(self, change: FileChange, outside: bool = False) -> str:
        noted = sum(c.path == change.path and c.turn == self.turn for c in self.comments)
        return clean_line(file_line(change, noted, outside=outside))

    @property
    def chosen(self) -> FileChange | None:
        index = self.query_one("#files", OptionList).highlighted
        return self.changes[index] if index is not None and index < len(self.view) else None

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        change = self.chosen
        if change is None or change.path != self.shown_path:
            self.target = Target()
        self.show()

    def show(self) -> None:
        """The chosen file's diff, its comments and where a comment goes marked."""
        change = self.chosen
        self.shown_path = change.path if change is not None else None
        body = self.query_one("#diff-body", Static)
        found = hunks(change) if change is not None else []
        count = len(found)
        hunk = min(self.target.hunk, max(count - 1, 0))
        line = self.target.line
        if line is not None and (not found or line >= len(found[hunk].lines)):
            line = None
        self.target = Target(hunk, line)
        if change is None:
            body.update("")
        elif not change.readable:
            why = "binary" if change.binary else "too large to show"
            if self.turn is not None:
                why = "binary or too large to show"
            body.update(Text(f"{change.path}: {why}"))
        else:
            width = max(self.query_one("#diff").size.width - 2, 40)
            body.update(
                render_diff(
                    change.path, change.old_text, change.new_text or "",
                    width=width, folded=False, styles=diff_styles(self),
                    marks=marks(change, self.target, self.comments, self.turn),
                )
            )  # fmt: skip
        noted = notes(change.path, self.comments, self.turn) if change is not None else []
        self.query_one("#notes", Static).update(Text("\n".join(noted)))
        self.query_one("#notes", Static).display = bool(noted)
        where = hunk_words(change, self.target, count, self.turn)
        self.query_one("#where", Label).update(Text(where))

    def on_resize(self) -> None:
        self.show()

    def say(self, text: str, *, error: bool = False) -> None:
        self.app.notify(text, severity="error" if error else "information", markup=False)

    def action_hunk(self, step: int) -> None:
        change = self.chosen
        if change is not None:
            self.target = step_hunk(len(hunks(change)), self.target, step)
            self.show()

    def action_line(self, step: int) -> None:
        change = self.chosen
        if change is not None:
            sizes = [len(hunk.lines) for hunk in hunks(change)]
            self.target = step_line(sizes, self.target, step)
            self.show()

    async def action_view(self, step: int) -> None:
        """The next view: every change, then each turn's (read as the screen opened; one
        not read yet is read now)."""
        await self.read.wait()
        if not self.turns:
            self.say("No turn of this session has a checkpoint yet: only its whole work shows.")
            return
        turn = step_view(self.turns, self.turn, step)
        if turn not in self.views:
            view = await self._read_turn(turn) if turn is not None else None
            if view is None:
                return
            self.views[turn] = view
        self.turn = turn
        self.fill()

    def action_reread(self) -> None:
        self.load()

    def action_comment(self) -> None:
        change = self.chosen
        if change is None:
            return
        at, turn = (self.target if hunks(change) else None), self.turn

        def add(text: str | None) -> None:
            if text and text.strip():
                self.comments.append(comment_on(change, at, text, turn))
                self._relabel()
                self.show()

        self.open_screen(
            AskScreen(
                f"Comment on {change.path}: {self.query_one('#where', Label).content}",
                "Enter adds it; s sends every comment as one prompt",
            ),
            add,
        )

    def _relabel(self) -> None:
        files = self.query_one("#files", OptionList)
        for index, (change, outside) in enumerate(self.view):
            files.replace_option_prompt_at_index(index, Text(self._line(change, outside)))

    def action_send(self) -> None:
        prompt = review_prompt(self.comments)
        if not prompt:
            self.say("No comments to send: c comments on the chosen hunk or line.", error=True)
            return
        self.engine.send(self.session, prompt)
        del self.comments[:]
        self.dismiss(None)

    def action_commit(self) -> None:
        def commit(message: str | None) -> None:
            if message is None:
                return
            if not message.strip():
                self.engine.send(self.session, ASK_TO_COMMIT)
                self.dismiss(None)
                return
            self.run_engine(self.engine.commit_worktree(self.session, message), reload=True)

        self.open_screen(
            AskScreen(
                f"Commit everything on {self.branch}", "a message; empty asks the agent to commit"
            ),
            commit,
        )

    @work(group="git", exit_on_error=False)
    async def run_engine(self, doing: Awaitable[str], *, reload: bool = False) -> None:
        """Say what an engine call said, or why it could not; read the changes again."""
        try:
            self.say(str(await doing))
        except ValueError as error:
            self.say(str(error), error=True)
        if reload:
            self.load()

    @work(group="git", exit_on_error=False)
    async def action_merge(self) -> None:
        try:
            plan = await self.engine.merge_worktree(self.session, dry_run=True)
        except ValueError as error:
            self.say(str(error), error=True)
            return
        if plan.refusal:
            self.say(merge_words(plan), error=True)
            return

        async def merge(yes: bool | None) -> None:
            if yes:
                result = await self.engine.merge_worktree(self.session)
                self.say(merge_words(result), error=not result.merged)

        self.open_screen(ConfirmScreen(merge_question(self.branch, plan), "Merge", "Wait"), merge)

    def action_push(self) -> None:
        self.run_engine(self.engine.push_worktree(self.session))

    def action_discard(self) -> None:
        def discard(yes: bool | None) -> None:
            if yes:
                self.run_engine(self.engine.discard_worktree(self.session), reload=True)

        question = (
            f"Discard every change of {self.branch} ({len(self.changes)} file(s))? It is kept"
            " under refs/cockpit: u on this screen brings it back."
        )
        self.open_screen(ConfirmScreen(question, "Discard", "Keep"), discard)

    def action_undo_discard(self) -> None:
        self.run_engine(self.engine.undo_discard(self.session), reload=True)
