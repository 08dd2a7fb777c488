"""Telling the user a session needs them when they are not looking: the terminal title, the
bell, and desktop notifications through escape sequences (OSC 9 and OSC 777), which travel
over SSH; inside tmux they are wrapped for passthrough."""

from __future__ import annotations

from cockpit.text.sanitize import printable

BEL = "\x07"
ESC = "\x1b"


def _clean(text: str, limit: int = 200) -> str:
    """Text safe inside an OSC string: no controls, no `;` separators, bounded."""
    return printable(text).replace(";", ",").replace("\n", " ")[:limit]


def tmux_wrap(sequence: str) -> str:
    """A sequence tmux passes through to the outer terminal (needs `allow-passthrough`)."""
    return f"{ESC}Ptmux;" + sequence.replace(ESC, ESC + ESC) + f"{ESC}\\"


def notification(title: str, body: str, in_tmux: bool) -> str:
    """A desktop notification as both OSC 9 (iTerm2, kitty, WezTerm, Windows Terminal) and
    OSC 777 (foot, urxvt, VTE terminals); a terminal ignores the one it does not know."""
    sequences = [
        f"{ESC}]9;{_clean(title)}: {_clean(body)}{BEL}",
        f"{ESC}]777;notify;{_clean(title)};{_clean(body)}{BEL}",
    ]
    return "".join(tmux_wrap(s) if in_tmux else s for s in sequences)


def window_title(title: str) -> str:
    """Set the terminal window (or tmux pane) title."""
    return f"{ESC}]2;{_clean(title, 80)}{BEL}"


def title_for(waiting: int, unread: int) -> str:
    """The title that says at a glance how many sessions wait."""
    parts = []
    if waiting:
        parts.append(f"{waiting} waiting")
    if unread:
        parts.append(f"{unread} unread")
    return "Cockpit" + (f" ({', '.join(parts)})" if parts else "")
