"""The changes screen: every file a worktree session changed against its base, the diff
of the one chosen, review comments gathered on its hunks and sent to the agent as one
prompt, and what brings the work home (commit, merge, push) or throws it away (discard,
undoable). The rules are `changes_rules`; this screen only shows and asks."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from cockpit.api import ChangedFile, EngineAPI
from cockpit.text.review import ReviewComment, review_prompt
from cockpit.ui.changes_rules import (
    ASK_TO_COMMIT,
    comment_on,
    file_line,
    hunk_words,
    hunks,
    merge_question,
    merge_words,
)
from cockpit.ui.dialog import Dialog, escape
from cockpit.ui.diffs.palette import diff_styles
from cockpit.ui.diffs.render import render_diff
from cockpit.ui.keys_in_order import Field
from cockpit.ui.one_line import clean_line
from cockpit.ui.screens.questions import ConfirmScreen

SHELL = "shell"
"""What the screen answers when the user asked for a shell in the worktree: the app puts
`!` in the prompt (a `!command` runs in the session's folder, the worktree)."""

KEYS = (
    "↑↓ file  [ ] hunk  c comment  s send comments  C commit  m merge  p push"
    "  x discard  u undo it  ! shell (a !command prompt in the worktree)  Esc close"
)


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
    ChangesScreen #where { color: $text-muted; width: 1fr; }
    ChangesScreen #keys { color: $text-muted; margin-top: 0; width: 1fr; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        escape("Close"),
        Binding("q", "dismiss(None)", "Close", show=False),
        Binding("left_square_bracket", "hunk(-1)", "Previous hunk"),
        Binding("right_square_bracket", "hunk(1)", "Next hunk"),
        Binding("c", "comment", "Comment"),
        Binding("s", "send", "Send comments"),
        Binding("C", "commit", "Commit"),
        Binding("m", "merge", "Merge"),
        Binding("p", "push", "Push"),
        Binding("x", "discard", "Discard"),
        Binding("u", "undo_discard", "Undo discard"),
        Binding("exclamation_mark", "dismiss('shell')", "Shell"),
    ]

    def __init__(self, engine: EngineAPI, session: str, branch: str) -> None:
        super().__init__()
        self.engine = engine
        self.session = session
        self.branch = branch
        self.changes: list[ChangedFile] = []
        self.comments: list[ReviewComment] = []
        self.hunk = 0

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Content(f"Changes of {clean_line(self.branch)}"), classes="dialog-title")
            yield OptionList(id="files")
            with VerticalScroll(id="diff"):
                yield Static(id="diff-body")
            yield Label("Reading the changes…", id="where")
            yield Label(Content(KEYS), id="keys", classes="hint")

    def on_mount(self) -> None:
        self.query_one("#files", OptionList).focus()
        self.load()

    @work(exclusive=True, group="changes", exit_on_error=False)
    async def load(self) -> None:
        """Read the changes again (after a commit or a discard too)."""
        try:
            self.changes = await self.engine.worktree_changes(self.session)
        except ValueError as error:
            self.say(str(error), error=True)
            return
        files = self.query_one("#files", OptionList)
        files.clear_options()
        files.add_options(Option(Text(self._line(c))) for c in self.changes)
        if self.changes:
            files.highlighted = 0
        self.show()

    def _line(self, change: ChangedFile) -> str:
        return clean_line(file_line(change, sum(c.path == change.path for c in self.comments)))

    @property
    def chosen(self) -> ChangedFile | None:
        index = self.query_one("#files", OptionList).highlighted
        return self.changes[index] if index is not None and index < len(self.changes) else None

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.hunk = 0
        self.show()

    def show(self) -> None:
        """The chosen file's diff and where a comment goes."""
        change = self.chosen
        body = self.query_one("#diff-body", Static)
        if change is None:
            body.update("")
        elif not change.readable:
            body.update(
                Text(
                    f"{change.path}: binary"
                    if change.binary
                    else f"{change.path}: too large to show"
                )
            )
        else:
            width = max(self.query_one("#diff").size.width - 2, 40)
            body.update(
                render_diff(
                    change.path, change.old_text, change.new_text or "",
                    width=width, folded=False, styles=diff_styles(self),
                )
            )  # fmt: skip
        count = len(hunks(change)) if change is not None else 0
        self.hunk = min(self.hunk, max(count - 1, 0))
        self.query_one("#where", Label).update(Text(hunk_words(change, self.hunk, count)))

    def on_resize(self) -> None:
        self.show()

    def say(self, text: str, *, error: bool = False) -> None:
        self.app.notify(text, severity="error" if error else "information", markup=False)

    def action_hunk(self, step: int) -> None:
        change = self.chosen
        if change is not None:
            count = len(hunks(change))
            self.hunk = (self.hunk + step) % count if count else 0
            self.show()

    def action_comment(self) -> None:
        change = self.chosen
        if change is None:
            return
        index = self.hunk

        def add(text: str | None) -> None:
            if text and text.strip():
                self.comments.append(comment_on(change, index, text))
                self._relabel()

        self.app.push_screen(
            AskScreen(
                f"Comment on {self.query_one('#where', Label).content}",
                "Enter adds it; s sends every comment as one prompt",
            ),
            add,
        )

    def _relabel(self) -> None:
        files = self.query_one("#files", OptionList)
        for index, change in enumerate(self.changes):
            files.replace_option_prompt_at_index(index, Text(self._line(change)))

    def action_send(self) -> None:
        prompt = review_prompt(self.comments)
        if not prompt:
            self.say("No comments to send: c comments on the highlighted hunk.", error=True)
            return
        self.engine.send(self.session, prompt)
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

        self.app.push_screen(
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

        self.app.push_screen(
            ConfirmScreen(merge_question(self.branch, plan), "Merge", "Wait"), merge
        )

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
        self.app.push_screen(ConfirmScreen(question, "Discard", "Keep"), discard)

    def action_undo_discard(self) -> None:
        self.run_engine(self.engine.undo_discard(self.session), reload=True)
