"""Screens read at one's pace, closed with Esc: a session's plan (which the user may edit),
and lasting information (the permission rules in force) that a toast would take away too
soon."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Label, Static, TextArea

from cockpit.api import Plan, PlanEntry, Unknown
from cockpit.plan_protocol import checklist, read_checklist
from cockpit.text.sanitize import printable
from cockpit.text.textout import plan_checklist, plan_source
from cockpit.ui.dialog import Dialog, escape
from cockpit.ui.keys_in_order import ran_own_binding
from cockpit.ui.one_line import clean_line


class PlanScreen(Dialog[tuple[PlanEntry, ...] | None]):
    """A session's plan, as a checklist with its revision and who wrote it; `e` edits it
    as text (one step a line, its status a mark in front), Ctrl+S saves it as the user's."""

    BINDINGS: ClassVar[list[BindingType]] = [
        escape("Close"),
        Binding("p,q", "close_unless_editing", "Close", show=False),
        Binding("e", "edit", "Edit", show=False),
        Binding("ctrl+s", "save", "Save", show=False, priority=True),
    ]

    def __init__(self, title: str, plan: Plan | Unknown | None) -> None:
        super().__init__()
        self.plan_title = title
        self.plan = plan
        self.lines = plan_checklist(plan) if plan is not None else []
        self.editing = False

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Content(f"Plan — {clean_line(self.plan_title)}"), classes="dialog-title")
            if isinstance(self.plan, Plan) and self.plan.revision:
                yield Label(plan_source(self.plan), classes="hint")
            body = "\n".join(printable(line) for line in self.lines)
            yield Static(Text(body or "This session has no plan yet."), id="plan-lines")
            problem = Label("", id="plan-problem", classes="problem")
            problem.display = False
            yield problem
            yield Label("e edits · Esc closes", id="plan-hint", classes="hint")

    def action_close_unless_editing(self) -> None:
        if not self.editing:
            self.dismiss(None)

    def action_edit(self) -> None:
        """Swap the checklist for an editor holding it."""
        if self.editing or isinstance(self.plan, Unknown):
            return
        self.editing = True
        entries = self.plan.entries if isinstance(self.plan, Plan) else ()
        editor = TextArea(checklist(entries), id="plan-editor", soft_wrap=True)
        editor.cursor_location = editor.document.end  # on a line of its own: a new step
        self.query_one("#plan-lines").remove()
        self.query_one("#dialog").mount(editor, before=self.query_one("#plan-problem"))
        self.query_one("#plan-hint", Label).update(
            Content("[ ] to do [~] doing [x] done [-] dropped · ^S saves · Esc drops")
        )
        editor.focus()

    async def on_key(self, event: events.Key) -> None:
        """The screen's own keys run as they come (`e` makes the editor before the next key
        arrives); a key typed right after `e`, before the editor has the keyboard, goes to
        it, in the order typed."""
        editor = self.query_one_optional("#plan-editor", TextArea)
        if editor is None:
            await ran_own_binding(self, event, text=False)
        elif self.focused is not editor:
            event.stop()
            event.prevent_default()
            editor.post_message(events.Key(event.key, event.character))

    def action_save(self) -> None:
        """Save what the editor holds as the plan, once the keys typed before Ctrl+S are in
        (a priority key runs as it arrives, ahead of them): after those still queued at
        this screen (`e` among them) and then at the editor."""
        self.call_later(self._save_after_editor)

    def _save_after_editor(self) -> None:
        editor = self.query_one_optional("#plan-editor", TextArea)
        if editor is not None:
            editor.call_later(self._save)

    def _save(self) -> None:
        """Save what the editor holds as the plan, or say why it cannot be one."""
        if not self.is_attached or not self.editing:
            return
        before = self.plan.entries if isinstance(self.plan, Plan) else ()
        found = read_checklist(self.query_one("#plan-editor", TextArea).text, before)
        if isinstance(found, str):
            problem = self.query_one("#plan-problem", Label)
            problem.update(found)
            problem.display = True
            return
        self.dismiss(found)


class TextScreen(Dialog[None]):
    """Lasting information the user reads at their pace (the permission rules in force):
    not a toast that vanishes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        escape("Close"),
        Binding("q", "dismiss(None)", "Close", show=False),
    ]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.heading = title
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Label(Content(clean_line(self.heading)), classes="dialog-title")
            yield Static(Text(printable(self.text)))
            yield Label("Esc closes", classes="hint")
