"""The characters DejaVu Sans Mono has, the default monospace font of most Linux
terminals: every glyph Cockpit draws must be one of them, or it shows as a box.

The font's character map is kept as a small data file beside the tests
(`data/dejavu-sans-mono.txt`, ranges of code points), so the check runs on a machine
without the font. Where the font is installed, the test compares the file with the
font's own map (read with fontTools), and `python -m tests.support.font_coverage` writes the file
again from it."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from fontTools.ttLib import TTFont  # type: ignore[import-untyped]

FONT_FILE = "DejaVuSansMono.ttf"
DATA = Path(__file__).parents[1] / "data" / "dejavu-sans-mono.txt"
FONT_DIRS = (
    Path("/usr/share/fonts"),
    Path("/usr/local/share/fonts"),
    Path.home() / ".local" / "share" / "fonts",
    Path.home() / ".fonts",
    Path("/Library/Fonts"),
    Path.home() / "Library" / "Fonts",
)
"""Where Linux (Debian's fonts-dejavu-core, Fedora's dejavu-sans-mono-fonts...) and
macOS keep fonts."""


def installed_font() -> Path | None:
    """The regular DejaVu Sans Mono file of this machine, if it has one."""
    for folder in FONT_DIRS:
        found = sorted(folder.rglob(FONT_FILE)) if folder.is_dir() else []
        if found:
            return found[0]
    return None


def font_code_points(path: Path) -> set[int]:
    """The code points the font at `path` maps to a glyph."""
    with TTFont(path, lazy=True) as font:
        return set(font.getBestCmap())


def font_version(path: Path) -> str:
    """The font's own name and version, as its name table gives them."""
    with TTFont(path, lazy=True) as font:
        names = font["name"]
        return f"{names.getDebugName(4)}, {names.getDebugName(5)}"


def ranges(points: Iterable[int]) -> Iterator[tuple[int, int]]:
    """Consecutive code points as (first, last) pairs, in order."""
    first = last = None
    for point in sorted(set(points)):
        if last is not None and point == last + 1:
            last = point
            continue
        if first is not None and last is not None:
            yield first, last
        first = last = point
    if first is not None and last is not None:
        yield first, last


def render(points: Iterable[int], version: str) -> str:
    """The data file's text: a comment line, then `FIRST-LAST` in hex, one range a line."""
    lines = [f"# Code points of {version} (tests/support/font_coverage.py writes this file)"]
    lines += [f"{first:04X}-{last:04X}" for first, last in ranges(points)]
    return "\n".join(lines) + "\n"


def parse(text: str) -> set[int]:
    """The code points a data file lists."""
    points: set[int] = set()
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            first, _, last = line.partition("-")
            points.update(range(int(first, 16), int(last or first, 16) + 1))
    return points


def known_code_points() -> set[int]:
    """The code points of the committed data file."""
    return parse(DATA.read_text(encoding="utf-8"))


def main() -> int:
    path = installed_font()
    if path is None:
        print(f"{FONT_FILE} is not installed here", file=sys.stderr)
        return 1
    DATA.parent.mkdir(parents=True, exist_ok=True)
    DATA.write_text(render(font_code_points(path), font_version(path)), encoding="utf-8")
    print(f"wrote {DATA} from {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
