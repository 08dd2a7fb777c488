"""Two rules about the screen the app's parts share: whether a dialog is open already, and
which permission prompt holds the keyboard."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widget import Widget

from cockpit.ui.form_prompt import FormPrompt
from cockpit.ui.permission_prompt import PermissionPrompt


def same_dialog(screen: Screen[Any], opened: Screen[Any]) -> bool:
    """True when `opened` is the dialog `screen` would open again (the same kind, and for a
    question, the same question)."""
    return type(screen) is type(opened) and getattr(screen, "question", None) == getattr(
        opened, "question", None
    )


def focused_prompt(focused: Widget | None) -> PermissionPrompt | FormPrompt | None:
    """The question (a permission prompt or a form) that holds the keyboard (itself or one
    of its parts)."""
    if focused is None:
        return None
    prompts = (PermissionPrompt, FormPrompt)
    return next((n for n in (focused, *focused.ancestors) if isinstance(n, prompts)), None)
