"""The `cockpit` command's entry point: importing the command line takes a few tenths of a
second (the ACP SDK, the store), and a Ctrl-C then printed a KeyboardInterrupt traceback."""

from __future__ import annotations

from cockpit.cli.interrupts import noted, say_interrupted


def main() -> int:
    with noted() as interrupted:
        from cockpit.cli.main import main as command_line
    if interrupted:
        return say_interrupted()
    return command_line()
