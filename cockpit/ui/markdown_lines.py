"""A reply's Markdown blocks rendered to lines, kept per console and width.

A finished block renders the same every time. Without a cache, every switch back to a
session, every page of history loaded again and every resize back to a width rendered each
of its blocks anew: in the seeded 2,000-key monkey, 14,122 block renders were of 264
distinct blocks, and they were half of the app's CPU. The cache is per Rich console (one
per app), so what the console decides (its theme stack, its encoding, which picks a
table's box characters) is the same for every hit; it lives as long as its console.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from rich.console import Console
from rich.markdown import Markdown as RichMarkdown
from textual.cache import LRUCache
from textual.strip import Strip

from cockpit.ui.diffs.palette import CODE_THEME

KEPT_BLOCKS = 512
"""Rendered blocks kept per console, the least recently used dropped first."""

LONGEST_KEPT = 2000
"""Blocks that render to more lines than this are not kept: a rare huge block would
otherwise hold a cache's worth of memory alone."""

_kept: WeakKeyDictionary[Console, LRUCache[tuple[str, int], tuple[Strip, ...]]] = (
    WeakKeyDictionary()
)


def render_markdown(console: Console, markdown: str, width: int) -> list[Strip]:
    """`markdown` rendered at `width`, without the blank lines Rich puts around it."""
    options = console.options.update(width=width, height=None)
    renderable = RichMarkdown(markdown, code_theme=CODE_THEME, hyperlinks=False)
    lines = [Strip(line) for line in console.render_lines(renderable, options, pad=False)]
    while lines and _blank(lines[0]):
        lines.pop(0)
    while lines and _blank(lines[-1]):
        lines.pop()
    return lines


def finished_markdown(console: Console, markdown: str, width: int) -> list[Strip]:
    """`render_markdown` of a block that will not change, from the cache when it is there.
    (Strips are not changed once made, so the lines are shared between bubbles.)"""
    cache = _kept.get(console)
    if cache is None:
        cache = _kept[console] = LRUCache(KEPT_BLOCKS)
    key = (markdown, width)
    lines = cache.get(key)
    if lines is None:
        rendered = render_markdown(console, markdown, width)
        if len(rendered) <= LONGEST_KEPT:
            cache[key] = tuple(rendered)
        return rendered
    return list(lines)


def _blank(line: Strip) -> bool:
    """A rendered line with nothing on it (the margins Rich puts around some blocks)."""
    return not line.text.strip() and not any(s.style and s.style.bgcolor for s in line)
