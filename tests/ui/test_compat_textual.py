"""Every private part of Textual that Cockpit uses (`cockpit.compat.textual_private`) still
exists and behaves as Cockpit expects: when Textual moves, a test here fails saying which
item changed and what to re-check, not a screen somewhere deep in the suite."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.driver import Driver
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

import cockpit.ui
from cockpit.compat.textual_private import (
    OVERRIDDEN,
    PILOT_IDLE_WINDOW,
    TESTED_WITH,
    UPDATE_IN_ONE_GO,
    PrivateOverride,
    anchor_released,
    full_screen_update,
    is_styles_cache,
    layout_pending,
    on_screen_update,
    release_style_caches,
    screen_strips,
    styles_cache_of,
    terminal_driver,
    update_spans,
    visible_clip,
    widget_is_mounted,
)
from tests.support.waiting import eventually

RECHECK = (
    "re-check every item in cockpit/compat/textual_private.py against the new Textual "
    "(each docstring says what Cockpit relies on), then set TESTED_WITH"
)


def parameters(function: Any) -> tuple[str, ...]:
    return tuple(inspect.signature(function).parameters)


def test_the_installed_textual_is_the_one_every_item_was_checked_with() -> None:
    installed = version("textual")
    assert installed == TESTED_WITH, f"Textual is {installed}, not {TESTED_WITH}: {RECHECK}"


@pytest.mark.parametrize("item", OVERRIDDEN, ids=lambda item: f"{item.owner.__name__}.{item.name}")
def test_every_overridden_private_method_still_exists_with_its_signature(
    item: PrivateOverride,
) -> None:
    method = getattr(item.owner, item.name, None)
    where = f"{item.owner.__module__}.{item.owner.__name__}.{item.name}"
    assert method is not None, f"{where} is gone: {item.why}"
    assert parameters(method) == item.parameters, (
        f"{where} now takes {parameters(method)}, not {item.parameters}: {item.why}"
    )


def textual_subclasses() -> list[type]:
    """Every class in `cockpit.ui` that subclasses one of Textual's."""
    found: list[type] = []
    for module_info in pkgutil.walk_packages(cockpit.ui.__path__, "cockpit.ui."):
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and value.__module__ == module.__name__
                and any(base.__module__.startswith("textual.") for base in value.__mro__)
            ):
                found.append(value)
    return found


def test_every_private_method_cockpit_overrides_is_named_in_the_compat_module() -> None:
    named = {(item.owner, item.name) for item in OVERRIDDEN}
    unnamed = []
    for cls in textual_subclasses():
        textual_bases = [base for base in cls.__mro__ if base.__module__.startswith("textual.")]
        for name, value in vars(cls).items():
            if not name.startswith("_") or name.startswith("__") or not inspect.isfunction(value):
                continue
            owners = [base for base in textual_bases if name in vars(base)]
            if owners and not any((owner, name) in named for owner in owners):
                unnamed.append(f"{cls.__module__}.{cls.__name__}.{name}")
    assert not unnamed, f"private Textual methods overridden but not in OVERRIDDEN: {unnamed}"


@pytest.mark.parametrize("item", UPDATE_IN_ONE_GO, ids=lambda item: item[1])
def test_the_methods_an_update_calls_keep_their_signature(
    item: tuple[type[Widget], str, tuple[str, ...]],
) -> None:
    owner, name, expected = item
    assert parameters(getattr(owner, name)) == expected, (
        f"{owner.__name__}.{name} now takes {parameters(getattr(owner, name))}: {RECHECK}"
    )


class Probe(Widget):
    """Records when the screen asks for its height and its lines, and when a callback
    scheduled at the first ask of an update runs (as the streaming reply does)."""

    DEFAULT_CSS = "Probe { height: auto; }"

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []
        self.waiting = False

    def _asked(self, what: str) -> None:
        self.calls.append(what)
        if not self.waiting:
            self.waiting = True
            self.call_next(self._over)

    def _over(self) -> None:
        self.calls.append("over")
        self.waiting = False

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._asked("height")
        return 3

    def render_line(self, y: int) -> Strip:
        self._asked("line")
        return Strip.blank(self.size.width)


class ProbeApp(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Probe()
            yield Static("below", id="below")


async def test_an_update_asks_for_height_and_lines_in_one_go() -> None:
    app = ProbeApp()
    async with app.run_test(size=(40, 10)) as pilot:
        probe = app.query_one(Probe)
        await eventually(lambda: probe.calls and not probe.waiting, what="the first update")
        probe.calls.clear()
        probe.refresh(layout=True)
        await pilot.pause()
        await eventually(lambda: "over" in probe.calls, what="the callback the update scheduled")
        calls = probe.calls
        assert "height" in calls and "line" in calls, f"the update asked for {calls}"
        assert calls.index("over") == len(calls) - 1, (
            f"the update gave the event loop a turn between its calls ({calls}): the "
            f"streaming reply's pacing (UPDATE_IN_ONE_GO) measures only part of it; {RECHECK}"
        )


def test_a_widget_has_the_private_attributes_the_functions_read() -> None:
    widget = Widget()
    for name in ("_is_mounted", "_anchor_released", "_styles_cache", "_layout_required"):
        assert hasattr(widget, name), f"Widget.{name} is gone: {RECHECK}"
    assert widget_is_mounted(widget) is False
    assert anchor_released(widget) is False
    assert is_styles_cache(styles_cache_of(widget)), f"Widget._styles_cache changed: {RECHECK}"
    assert not is_styles_cache(object())
    from textual._styles_cache import StylesCache

    assert hasattr(StylesCache.get_inner_outer, "cache_clear"), (
        f"StylesCache.get_inner_outer is no longer an lru_cache: {RECHECK}"
    )


def test_app_private_methods_keep_their_signature() -> None:
    from textual._compositor import ChopsUpdate, Compositor
    from textual.command import CommandPalette

    expected = {
        (App, "_display"): ("self", "screen", "renderable"),
        (CommandPalette, "_action_command_list"): ("self", "action"),
        (ChopsUpdate, "__init__"): ("self", "chops", "spans", "chop_ends"),
        (Compositor, "render_strips"): ("self", "size"),
        (Compositor, "render_update"): ("self", "full", "screen_stack", "simplify"),
    }
    for (owner, name), names in expected.items():
        found = parameters(getattr(owner, name))
        assert found == names, f"{owner.__name__}.{name} now takes {found}: {RECHECK}"
    assert isinstance(inspect.getattr_static(Compositor, "visible_widgets"), property), RECHECK
    assert isinstance(inspect.getattr_static(App, "_background_screens"), property), RECHECK


async def test_the_functions_read_what_they_say_in_a_running_app() -> None:
    app = ProbeApp()
    assert terminal_driver(app) is None
    updates: list[object] = []
    async with app.run_test(size=(40, 10)) as pilot:
        assert isinstance(terminal_driver(app), Driver), f"App._driver changed: {RECHECK}"
        assert app._batch_count == 0, f"App._batch_count changed: {RECHECK}"
        below = app.query_one("#below", Static)
        assert widget_is_mounted(below)
        on_screen_update(app, updates.append)
        below.update("changed")
        await pilot.pause()
        assert updates, f"App._display no longer writes the screen's updates: {RECHECK}"
        spans = [update_spans(update) for update in updates]
        assert all(found is None or all(len(span) == 3 for span in found) for found in spans)
        assert visible_clip(app.screen, below).contains_region(below.region)
        strips = screen_strips(app.screen)
        assert len(strips) == 10
        assert "changed" in strips[below.region.y].text
        whole = full_screen_update(app)
        assert len(getattr(whole, "strips", ())) == 10, f"a full update changed: {RECHECK}"


async def test_a_released_anchor_reads_as_released() -> None:
    app = ProbeApp()
    async with app.run_test(size=(40, 10)) as pilot:
        scroll = app.query_one(VerticalScroll)
        scroll.anchor()
        await pilot.pause()
        assert not anchor_released(scroll)
        scroll.release_anchor()
        assert anchor_released(scroll), f"Widget._anchor_released changed: {RECHECK}"


async def test_a_change_of_children_reads_as_pending_until_it_is_laid_out() -> None:
    app = ProbeApp()
    async with app.run_test(size=(40, 10)) as pilot:
        scroll = app.query_one(VerticalScroll)
        await pilot.pause()
        assert not layout_pending(scroll)
        await scroll.mount(Static("new"))
        scroll.refresh(layout=True)
        assert layout_pending(scroll), f"Widget._layout_required changed: {RECHECK}"
        await pilot.pause()
        await pilot.pause()
        assert not layout_pending(scroll), f"Screen._layout_required changed: {RECHECK}"
        assert hasattr(app.screen, "_layout_required"), f"Screen._layout_required: {RECHECK}"


async def test_releasing_style_caches_empties_them() -> None:
    from textual._styles_cache import StylesCache

    app = ProbeApp()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        below = app.query_one("#below", Static)
        assert StylesCache.get_inner_outer.cache_info().currsize
        release_style_caches([below])
        assert StylesCache.get_inner_outer.cache_info().currsize == 0
        assert not below._styles_cache._cache, f"StylesCache.clear changed: {RECHECK}"


TIMER_SCRIPT = """
import sys
from textual.app import App

if sys.argv[1] == "cockpit":
    from cockpit.compat.textual_private import keep_timer_delays_positive

    keep_timer_delays_positive()


class Late(App[int]):
    fired = 0

    def on_mount(self) -> None:
        self.set_timer(-0.006, self.fire)  # a toast's delay, its time run out as it was built
        self.set_timer(0.0000001, self.fire)  # a repaint due within a microsecond
        self.set_timer(5, lambda: self.exit(self.fired))  # one never fired

    def fire(self) -> None:
        self.fired += 1
        if self.fired == 2:  # both: a stalled machine may run the last timer first
            self.exit(self.fired)


app = Late()
app.run(headless=True)
print("fired", app.return_value)
"""
"""Timers whose delay is negative or under a microsecond, in an app that ends once both
fired (or after 5 s)."""


def run_timers(
    tmp_path: Path, patched: bool, timeout: float
) -> subprocess.CompletedProcess[str] | None:
    """Run TIMER_SCRIPT in a fresh interpreter; None when it did not end in `timeout` s."""
    script = tmp_path / "timers.py"
    script.write_text(TIMER_SCRIPT)
    try:
        return subprocess.run(
            [sys.executable, str(script), "cockpit" if patched else "textual"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None


def test_a_negative_or_tiny_timer_fires_and_leaves_the_app_running(tmp_path: Path) -> None:
    done = run_timers(tmp_path, patched=True, timeout=30)
    assert done is not None, "the app froze on a negative timer (keep_timer_delays_positive)"
    assert done.stdout.split() == ["fired", "2"], done.stderr


def test_textual_still_freezes_on_a_negative_timer(tmp_path: Path) -> None:
    # Frozen: the app never ends (its loop spins), so the run is cut after 4 s.
    done = run_timers(tmp_path, patched=False, timeout=4)
    assert done is None, (
        "Textual ends a timer with a negative delay by itself now: check the tiny one too, "
        "then keep_timer_delays_positive in cockpit/compat/textual_private.py can go"
    )


def test_the_pilots_idle_check_takes_its_window_at_each_call() -> None:
    """`quicken_pilot_idle` (the suite calls it in conftest) sets two globals that Textual's
    `wait_for_idle` must still read when it runs."""
    from textual import _wait

    read = set(_wait.wait_for_idle.__code__.co_names)
    assert {"SLEEP_GRANULARITY", "SLEEP_IDLE"} <= read, f"wait_for_idle reads {read}: {RECHECK}"


async def test_a_pause_of_the_suites_pilot_is_shorter_than_textuals_window() -> None:
    """Textual's pause sleeps 20 ms at least; the suite's, on an idle app, a few ms."""
    app = App[None]()
    async with app.run_test(size=(20, 5)) as pilot:
        took = []
        for _ in range(10):
            started = time.monotonic()
            await pilot.pause()
            took.append(time.monotonic() - started)
    assert min(took) < 0.02 and PILOT_IDLE_WINDOW < 0.02, (
        f"pauses took {min(took) * 1000:.1f} ms at best: quicken_pilot_idle has no effect; "
        f"{RECHECK}"
    )
