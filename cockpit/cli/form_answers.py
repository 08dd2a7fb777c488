"""`cockpit answer SESSION --field k=v ... | --json FILE`: the oldest form a session's agent
asks, answered from the command line. A field not given takes the form's default, as on
screen. Values are checked against the form's schema here
first (a wrong one exits with a sentence naming the field, and the form still waits),
and by the engine again."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cockpit.api import EngineAPI, Form, PermissionRequest
from cockpit.cli.exits import EXIT_OK, EXIT_USAGE
from cockpit.form_rules import MASK, FormValueError, defaults, validate
from cockpit.text.sanitize import printable

MAX_JSON = 1024 * 1024
"""Bytes of a `--json` file read: a form's answer is far smaller."""


class BadAnswer(ValueError):
    """The values given cannot answer the form: the message says why."""


def given_values(fields: Sequence[str], json_file: str | None) -> dict[str, Any]:
    """The values `--field k=v` (as text) and `--json FILE` (`-` for stdin) give;
    BadAnswer saying why when they cannot be read."""
    values: dict[str, Any] = {}
    if json_file is not None:
        try:
            raw = sys.stdin.read(MAX_JSON + 1) if json_file == "-" else _read(Path(json_file))
            data = json.loads(raw)
        except OSError as error:
            raise BadAnswer(f"cannot read {json_file}: {error.strerror or error}") from None
        except ValueError as error:
            raise BadAnswer(f"{json_file} is not JSON: {error}") from None
        if not isinstance(data, dict):
            raise BadAnswer(f"{json_file} holds no object of field values")
        values.update(data)
    for item in fields:
        name, equals, value = item.partition("=")
        if not equals or not name:
            raise BadAnswer(f"--field takes NAME=VALUE, not {item!r}")
        values[name] = value
    return values


def _read(path: Path) -> str:
    if path.stat().st_size > MAX_JSON:
        raise BadAnswer(f"{path} is over {MAX_JSON:,} bytes")
    return path.read_text(encoding="utf-8")


def oldest_form(engine: EngineAPI, session: str) -> PermissionRequest | None:
    """The form of `session` that has waited longest."""
    return next((r for r in engine.pending_permissions(session) if r.form is not None), None)


def form_lines(session: str, form: Form) -> list[str]:
    """A form in words, for a terminal: its message, each field with what it takes, and
    how to answer it."""
    if form.is_link:
        return [
            f"? the agent asks you to open {form.url}: {form.message}",
            f"  say you opened it with `cockpit answer {session} --accept`, or `--decline`",
        ]
    lines = [f"? the agent asks: {form.message}"]
    for field in form.fields:
        takes = field.kind if not field.values else "one of " + ", ".join(field.values)
        if field.kind == "choices":
            takes = "any of " + ", ".join(field.values) + " (comma-separated)"
        mark = " (required)" if field.required else ""
        lines.append(f"  {field.name}: {field.label} — {takes}{mark}")
    lines.append(f"  answer with `cockpit answer {session} --field NAME=VALUE ...`")
    return [printable(line) for line in lines]


async def answer_form(
    engine: EngineAPI,
    session: str,
    fields: Sequence[str],
    json_file: str | None,
    action: str = "accept",
) -> int:
    """Answer the session's oldest form with the values given (or decline or cancel it)."""
    request = oldest_form(engine, session)
    if request is None or request.form is None:
        print(f"cockpit: no form waits in {session}", file=sys.stderr)
        return EXIT_USAGE
    form = request.form
    try:
        content: dict[str, Any] | None = None
        if action == "accept" and not form.is_link:
            content = validate(form, {**defaults(form), **given_values(fields, json_file)})
    except (BadAnswer, FormValueError) as error:
        print(printable(f"cockpit: {error}"), file=sys.stderr)
        print("\n".join(form_lines(session, form)), file=sys.stderr)
        return EXIT_USAGE
    try:
        await engine.answer_form(request.id, action, content, decided_by="cockpit answer")
    except KeyError:
        print(f"cockpit: the form was answered meanwhile in {session}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as error:
        print(printable(f"cockpit: {error}"), file=sys.stderr)
        return EXIT_USAGE
    secret = {field.name for field in form.fields if field.secret}
    shown = ", ".join(f"{k}={MASK if k in secret else v}" for k, v in (content or {}).items())
    print(printable(f"answered “{request.title}”: {action}" + (f" ({shown})" if shown else "")))
    return EXIT_OK
