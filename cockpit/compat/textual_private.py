"""Every private part of Textual that Cockpit uses, and why: nothing else in Cockpit (or in
its tests and benchmarks) names a private Textual attribute. Each item says what it is,
why Cockpit needs it and what breaks without it. `tests/test_compat_textual.py` checks
each one against the installed Textual, so an upgrade that changes one fails there, saying
which, not somewhere deep in a screen. Pinned: textual==8.2.8 (`TESTED_WITH`).

Two kinds of items: functions that read or call a private attribute (the only places that
do), and records of the private methods Cockpit's widgets override (an override stays in
its widget; it is named here so that the test checks it still exists with the same
signature).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import RenderableType
from textual._styles_cache import StylesCache
from textual.app import App
from textual.command import CommandPalette
from textual.driver import Driver
from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import TextArea

TESTED_WITH = "8.2.8"
"""The Textual version every item here was checked against. When the installed version
differs, re-check each item (its docstring says what to look for) and only then change
this."""


# --- functions over private attributes --------------------------------------------------


def widget_is_mounted(widget: Any) -> bool:
    """Whether a widget (or the app) has been mounted (`_is_mounted`). `App.is_mounted(widget)`
    is public but reads the same flag; it is read here directly because the app overrides
    nothing of Textual's own method (a watcher may run before mounting ends). Without it
    the app acts on widgets that are not there yet."""
    return bool(getattr(widget, "_is_mounted", False))


def terminal_driver(app: App[Any]) -> Driver | None:
    """The driver that writes to the terminal (`App._driver`; None before it runs):
    Cockpit writes escape sequences Textual has no API for (window title, desktop
    notifications) straight to it, and tests feed it keys the way a terminal delivers a
    fast typist's burst. Without it those escapes are not sent."""
    driver = getattr(app, "_driver", None)
    return driver if isinstance(driver, Driver) else None


def release_style_caches(widgets: Iterable[Widget]) -> None:
    """Let go of what Textual keeps of removed widgets: each one's `_styles_cache` is
    emptied, and `StylesCache.get_inner_outer`'s `lru_cache` is cleared.

    Textual 8 caches `StylesCache.get_inner_outer` in an `lru_cache` keyed by the
    instance, so the style caches of the last 1,024 widgets that painted stay alive, with
    every line they rendered, long after the widgets are gone: in a long session that was
    most of what the transcript's bounded window is meant to save (RSS grew with the
    transcript). Without it memory grows with the length of a transcript again."""
    for widget in widgets:
        widget._styles_cache.clear()
    StylesCache.get_inner_outer.cache_clear()


def styles_cache_of(widget: Widget) -> object:
    """A widget's own style cache (`Widget._styles_cache`, a `StylesCache`), for the test
    that no cache outlives its widget (see `release_style_caches`)."""
    return widget._styles_cache


def is_styles_cache(candidate: object) -> bool:
    """Whether `candidate` is one of Textual's style caches (`textual._styles_cache.
    StylesCache`), for the same test."""
    return isinstance(candidate, StylesCache)


def anchor_released(widget: Widget) -> bool:
    """Whether the user scrolled an anchored widget away from its end
    (`Widget._anchor_released`: Textual keeps the anchor but stops following). The
    transcript sticks to the bottom only while anchored and not released; without it a
    reader scrolled up would be pulled back down by every new line."""
    return bool(getattr(widget, "_anchor_released", False))


def layout_pending(widget: Widget) -> bool:
    """Whether a change of `widget`'s children is not laid out yet (`Widget.
    _layout_required`, set when children are mounted or removed and handed to the screen
    on the widget's next idle; then `Screen._layout_required`, until the screen lays it
    out). Until then every region is the old one. The transcript keeps the reader's place
    by the regions after a page loads; read too early, the place is kept by stale ones and
    the view jumps by the rows that came or went (a wheel notch once moved 113 rows)."""
    screen = widget.screen
    return bool(getattr(widget, "_layout_required", False)) or bool(
        getattr(screen, "_layout_required", False)
    )


def run_command_list_action(palette: CommandPalette, action: str) -> None:
    """Run the command palette's list action (`CommandPalette._action_command_list`,
    behind its PageUp, PageDown... keys) as those keys do, for the test that pages the
    list before it is laid out (see `OVERRIDDEN`)."""
    palette._action_command_list(action)


def on_screen_update(app: App[Any], callback: Callable[[object], None]) -> None:
    """Call `callback(update)` after the app writes each update the screen composed, batched
    ones excepted (it wraps `App._display`, and reads `App._batch_count`). The TUI
    benchmark times keypress-to-screen latency by it: there is no public hook on the
    moment a frame is written."""
    original = app._display

    def display(screen: Screen[Any], update: Any) -> None:
        original(screen, update)
        if update is not None and not app._batch_count:
            callback(update)

    setattr(app, "_display", display)  # noqa: B010 (an instance attribute over a method)


def update_spans(update: object) -> Sequence[tuple[int, int, int]] | None:
    """The (y, x1, x2) spans an update repaints (`textual._compositor.ChopsUpdate.spans`),
    None for a full update (every line). The benchmark asks whether a frame painted a
    widget."""
    from textual._compositor import ChopsUpdate

    return update.spans if isinstance(update, ChopsUpdate) else None


def visible_clip(screen: Screen[Any], widget: Widget) -> Region:
    """The part of the screen where `widget` shows (`Screen._compositor.visible_widgets`):
    the benchmark reads the lines a widget shows as the terminal gets them."""
    return screen._compositor.visible_widgets[widget][1]


def screen_strips(screen: Screen[Any]) -> list[Strip]:
    """Every line of the screen as it would be written to the terminal
    (`Screen._compositor.render_strips`), for the same reading and for tests that read
    the screen as a user sees it."""
    return screen._compositor.render_strips()


def full_screen_update(app: App[Any]) -> RenderableType | None:
    """The whole screen as the app would write it, the screens under a modal one included
    (`Screen._compositor.render_update(full=True)` over `App._background_screens`): the
    legibility tests read the colour of every cell from it."""
    return app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)


# --- a Textual bug Cockpit works around ---------------------------------------------------

MIN_TIMER_DELAY = 0.001
"""The shortest delay a Textual timer is given (seconds)."""


def keep_timer_delays_positive() -> None:
    """Make every Textual timer wait at least MIN_TIMER_DELAY (it wraps `Timer.__init__`).

    Textual's timer loop (`Timer._run`, with `skip`, the default) never ends when its delay
    is negative: it computes a negative count of missed ticks and starts again, holding
    the event loop and a core for good. A delay under a microsecond is skipped instead and
    its callback never runs. Textual's own toast makes the negative one: it reads the
    notification's time left when it is built, and on a busy machine a toast built just
    after its notification's time ran out got a delay of -6 ms. The whole screen froze
    (seen in a test of names shown in toasts, under load). A late toast now goes after
    1 ms, and a paced repaint due within a microsecond still runs. Idempotent."""
    from textual.timer import Timer

    original = Timer.__init__
    if getattr(original, "cockpit_keeps_positive", False):
        return

    @functools.wraps(original)
    def init(self: Timer, event_target: Any, interval: float, *args: Any, **kwargs: Any) -> None:
        original(self, event_target, max(interval, MIN_TIMER_DELAY), *args, **kwargs)

    init.cockpit_keeps_positive = True  # type: ignore[attr-defined]
    Timer.__init__ = init  # type: ignore[method-assign]


def spell_out_alt_keys() -> None:
    """Give Textual's Linux driver a parser that reads Alt+letter in a burst: each read
    from the terminal goes through `alt_keys_spelled_out` first (it wraps the driver's
    `XTermParser`, a private module's class the driver names at each start).

    Textual's parser reports ESC w followed, in the same read, by another sequence (Alt+W
    then Down, typed fast or over SSH) as `^` and `w`: the new-session dialog's Alt+W
    did not happen and a `w` was typed. Without it Alt keys work only when they come
    alone. Idempotent."""
    from textual._xterm_parser import XTermParser
    from textual.drivers import linux_driver

    from cockpit.text.alt_keys import alt_keys_spelled_out

    if getattr(linux_driver.XTermParser, "cockpit_spells_alt", False):  # type: ignore[attr-defined]
        return

    class AltKeysParser(XTermParser):
        """Textual's parser, fed each read with its Alt+letters spelled out."""

        cockpit_spells_alt = True

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.pasting = False

        def feed(self, data: str) -> Iterable[Any]:
            spelled, self.pasting = alt_keys_spelled_out(data, self.pasting)
            return super().feed(spelled)

    linux_driver.XTermParser = AltKeysParser  # type: ignore[attr-defined]


# --- the test suite's pilot --------------------------------------------------------------

PILOT_IDLE_WINDOW = 0.002
"""Seconds the tests' pilot watches the process before it calls it idle (Textual's: 0.02)."""


def quicken_pilot_idle(window: float = PILOT_IDLE_WINDOW) -> None:
    """For the test suite only: the pilot's idle check (`textual._wait.wait_for_idle`,
    behind every `pilot.pause()` and every key `pilot.press` sends) watches `window`
    seconds at a time, with the same bar (under a twentieth of the window in CPU).

    Textual sleeps SLEEP_GRANULARITY (20 ms) at a time and calls the app idle when the
    process used under SLEEP_IDLE (1 ms) of CPU meanwhile: every pause sleeps at least
    20 ms. The suite makes thousands of them (a paging test scrolls a thousand times),
    so its UI tests slept twice as long as they worked. Both are module globals that
    `wait_for_idle` reads at each call. Without this the tests only run slower."""
    from textual import _wait

    _wait.SLEEP_GRANULARITY = window
    _wait.SLEEP_IDLE = window / 20


# --- private methods Cockpit's widgets override ------------------------------------------


@dataclass(frozen=True)
class PrivateOverride:
    """A private method of a Textual class that a Cockpit widget overrides (calling it
    with `super()`): its owner, name and parameters, and why."""

    owner: type
    name: str
    parameters: tuple[str, ...]
    why: str


OVERRIDDEN: tuple[PrivateOverride, ...] = (
    PrivateOverride(
        TextArea,
        "_on_key",
        ("self", "event"),
        "cockpit.ui.composer.Composer: the prompt's own keys (Enter sends, Ctrl+J a new"
        " line, Up/Down the history, the completion menu's keys) come before the text"
        " area's; without it Enter inserts a newline and nothing is ever sent.",
    ),
    PrivateOverride(
        CommandPalette,
        "_watch__list_visible",
        ("self",),
        "cockpit.ui.dialog.Palette: skipped once the palette is closed; without it a"
        " search started by a key typed in the same burst as Enter or Esc comes back to a"
        " list no longer there, and the app dies.",
    ),
    PrivateOverride(
        CommandPalette,
        "_action_command_list",
        ("self", "action"),
        "cockpit.ui.dialog.Palette: PageUp or PageDown before the list is laid out does"
        " nothing; without it Textual raises KeyError and the app dies.",
    ),
)
"""Every private method of Textual that a Cockpit widget overrides."""


UPDATE_IN_ONE_GO: tuple[tuple[type[Widget], str, tuple[str, ...]], ...] = (
    (Widget, "get_content_height", ("self", "container", "viewport", "width")),
    (Widget, "render_line", ("self", "y")),
)
"""Public methods whose call order Cockpit relies on, which Textual does not promise: the
screen's update asks a widget for its height (`get_content_height`, while arranging) and
its lines (`render_line`, while composing) in one go, without giving the event loop a
turn in between, so a callback a widget schedules with `call_next` at the first call
runs after the last one. The streaming reply (`cockpit.ui.bubbles.AgentBubble`) times
the screen's update that way to pace its repaints; if Textual spread an update over
several turns of the loop, the reply would measure only part of its cost and repaint
more often than its share of the time allows."""
