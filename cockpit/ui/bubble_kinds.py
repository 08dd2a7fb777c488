"""Which bubble widget shows a row of each kind: the reply, the user's prompt, a thought,
a tool card, the plan, a command the user ran, and a note for the rest (a notice, an
error, a decision)."""

from __future__ import annotations

from cockpit.ui.bubbles import (
    AgentBubble,
    BubbleWidget,
    NoteBubble,
    PlanBubble,
    ThoughtBubble,
    UserBubble,
)
from cockpit.ui.shell_card import ShellCard
from cockpit.ui.tool_card import ToolCard
from store import Bubble


def make_bubble(bubble: Bubble, live: bool = False) -> BubbleWidget:
    """The widget for a row of this kind."""
    if bubble.kind == "agent":
        return AgentBubble(bubble, live)
    kinds: dict[str, type[BubbleWidget]] = {
        "user": UserBubble,
        "thought": ThoughtBubble,
        "tool": ToolCard,
        "plan": PlanBubble,
        "shell": ShellCard,
    }
    return kinds.get(bubble.kind, NoteBubble)(bubble)
