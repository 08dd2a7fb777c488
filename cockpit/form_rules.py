"""The rules of the forms an agent asks the user to fill (`elicitation/create`): what a
schema the agent sent makes (`read_form`), how a typed value becomes the one the schema
asks for (`coerce`), and whether an answer fits the form (`validate`).

An agent is untrusted input: a schema that is not a flat form of text, numbers, yes/no
and choices, or that is too big to show, is refused with a sentence that says why
(`FormRefused`); the text it carries is made safe to show. Pure: no I/O, no engine, no
Textual; the engine, the screen and the command line share it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from cockpit.records import Form, FormField
from cockpit.text.sanitize import printable
from cockpit.text.secret_names import is_secret_field

MAX_FIELDS: Final = 32
"""Fields a form may have: more is not a question a person answers in a terminal."""
MAX_CHOICES: Final = 100
"""Choices one field may offer."""
MAX_SCHEMA: Final = 64 * 1024
"""Characters of a schema, as JSON: a bigger one is refused unread."""
MAX_NAME: Final = 100
"""Characters of a field's name (the key its value goes back under)."""
MAX_TITLE: Final = 200
"""Characters of a title or a choice's label shown; the rest is cut."""
MAX_TEXT: Final = 2000
"""Characters of the message or a description shown; the rest is cut."""
MAX_URL: Final = 4096
"""Characters of a link to open."""
MAX_VALUE: Final = 10_000
"""Characters of a text answer (less when the field says so)."""

MASK: Final = "••••••"
"""What a secret field's value is shown and stored as."""

ACTIONS: Final = ("accept", "decline", "cancel")
"""How a form is answered: filled in, declined, or put aside (Esc)."""

_TRUE: Final = frozenset({"true", "yes", "y", "on", "1"})
_FALSE: Final = frozenset({"false", "no", "n", "off", "0"})


class FormRefused(ValueError):
    """The agent's question cannot be shown: the message says why, in words for the user
    and the agent alike."""


class FormValueError(ValueError):
    """An answer does not fit the form: the message says which field and why."""


def shown(text: object, limit: int = MAX_TITLE) -> str:
    """An agent's text made safe to show and cut to `limit` characters."""
    cleaned = printable(text) if isinstance(text, str) else ""
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def read_form(message: object, mode: Mapping[str, Any]) -> Form:
    """The form (or the link) an `elicitation/create` asks for: `mode` is its params as
    sent (`requestedSchema`, or `url` and `elicitationId`). FormRefused when it cannot be
    shown."""
    text = shown(message, MAX_TEXT)
    url = mode.get("url")
    if url is not None:
        return _read_link(text, url, mode.get("elicitationId"))
    schema = mode.get("requestedSchema")
    if not isinstance(schema, Mapping):
        raise FormRefused("the form has no schema")
    if schema.get("type", "object") != "object":
        raise FormRefused("its schema is not an object of fields")
    properties = schema.get("properties") or {}
    if not isinstance(properties, Mapping):
        raise FormRefused("its fields are not an object")
    if len(properties) > MAX_FIELDS:
        raise FormRefused(
            f"it has {len(properties):,} fields; Cockpit shows forms of up to {MAX_FIELDS}"
        )
    size = len(json.dumps(schema, default=str))
    if size > MAX_SCHEMA:
        raise FormRefused(f"its schema is {size:,} characters; a form may have {MAX_SCHEMA:,}")
    required = schema.get("required") or []
    if not isinstance(required, list):
        raise FormRefused("its list of required fields is not a list")
    fields = tuple(_read_field(name, spec, name in required) for name, spec in properties.items())
    return Form(text, fields, title=shown(schema.get("title")))


def _read_link(text: str, url: object, elicitation_id: object) -> Form:
    if not isinstance(url, str) or not url.strip():
        raise FormRefused("its link is empty")
    if len(url) > MAX_URL:
        raise FormRefused(f"its link is {len(url):,} characters; Cockpit shows up to {MAX_URL:,}")
    if printable(url) != url or any(c.isspace() for c in url):
        raise FormRefused("its link holds spaces or control characters")
    if not url.lower().startswith(("https://", "http://")):
        raise FormRefused("its link is not a web address (http or https)")
    return Form(text, url=url, elicitation_id=shown(elicitation_id, MAX_NAME))


def _read_field(name: object, spec: object, required: bool) -> FormField:
    if not isinstance(name, str) or not name or len(name) > MAX_NAME or printable(name) != name:
        raise FormRefused(f"a field's name is empty, too long or not printable: {shown(name)!r}")
    if not isinstance(spec, Mapping):
        raise FormRefused(f"field {name!r} is not described by an object")
    kind = spec.get("type")
    title = shown(spec.get("title"))
    common: dict[str, Any] = {
        "name": name,
        "title": title,
        "description": shown(spec.get("description"), MAX_TEXT),
        "required": required,
        "secret": is_secret_field(name, title),
    }
    if kind == "string":
        return _string_field(spec, common)
    if kind in ("number", "integer"):
        low, high = _number(spec.get("minimum")), _number(spec.get("maximum"))
        if low is not None and high is not None and low > high:
            raise FormRefused(f"field {name!r} has a minimum above its maximum")
        default = _number(spec.get("default"))
        if kind == "integer" and default is not None and not float(default).is_integer():
            default = None
        return FormField(kind=kind, minimum=low, maximum=high, default=default, **common)
    if kind == "boolean":
        default = spec.get("default")
        return FormField(kind="boolean", default=default if isinstance(default, bool) else None,
                         **common)  # fmt: skip
    if kind == "array":
        return _choices_field(spec, common)
    raise FormRefused(
        f"field {name!r} is of type {shown(json.dumps(kind, default=str), 40)}; a form holds "
        "only text, numbers, yes/no and choices"
    )


def _string_field(spec: Mapping[str, Any], common: dict[str, Any]) -> FormField:
    name = common["name"]
    low, high = _count(spec.get("minLength")), _count(spec.get("maxLength"))
    if low is not None and high is not None and low > high:
        raise FormRefused(f"field {name!r} has a minimum length above its maximum")
    default = spec.get("default") if isinstance(spec.get("default"), str) else None
    if spec.get("enum") is not None or spec.get("oneOf") is not None:
        values, labels = _options(name, spec.get("enum"), spec.get("oneOf"))
        chosen = default if default in values else None
        return FormField(kind="choice", values=values, labels=labels, default=chosen, **common)
    if default is not None:
        default = default[:MAX_VALUE]
    return FormField(kind="string", min_length=low, max_length=high, default=default, **common)


def _choices_field(spec: Mapping[str, Any], common: dict[str, Any]) -> FormField:
    name = common["name"]
    items = spec.get("items")
    if not isinstance(items, Mapping):
        raise FormRefused(f"field {name!r} is a list without its items")
    if items.get("anyOf") is None and items.get("type") != "string":
        raise FormRefused(f"field {name!r} is a list of something else than choices")
    values, labels = _options(name, items.get("enum"), items.get("anyOf"))
    low, high = _count(spec.get("minItems")), _count(spec.get("maxItems"))
    if low is not None and high is not None and low > high:
        raise FormRefused(f"field {name!r} asks for more choices at least than at most")
    default = spec.get("default")
    chosen = (
        tuple(value for value in default if value in values) if isinstance(default, list) else None
    )
    return FormField(kind="choices", values=values, labels=labels, default=chosen,
                     min_items=low, max_items=high, **common)  # fmt: skip


def _options(name: str, enum: object, titled: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The values a choice may take and their labels, from `enum` (plain) or `oneOf` /
    `anyOf` (titled)."""
    values: list[str] = []
    labels: list[str] = []
    if titled is not None:
        if not isinstance(titled, list):
            raise FormRefused(f"field {name!r} lists its choices in something else than a list")
        for option in titled:
            const = option.get("const") if isinstance(option, Mapping) else None
            if not isinstance(const, str):
                raise FormRefused(f"field {name!r} has a choice that is not text")
            values.append(const)
            labels.append(shown(option.get("title")) or shown(const))
    else:
        if not isinstance(enum, list) or not all(isinstance(value, str) for value in enum):
            raise FormRefused(f"field {name!r} has choices that are not all text")
        values = list(enum)
        labels = [shown(value) for value in enum]
    if not values:
        raise FormRefused(f"field {name!r} offers no choice")
    if len(values) > MAX_CHOICES:
        raise FormRefused(
            f"field {name!r} offers {len(values):,} choices; Cockpit shows up to {MAX_CHOICES}"
        )
    if any(len(value) > MAX_TITLE for value in values) or len(set(values)) != len(values):
        raise FormRefused(f"field {name!r} has choices too long or listed twice")
    return tuple(values), tuple(labels)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None


def _count(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


# -- answers ----------------------------------------------------------------------------------


def coerce(field: FormField, text: str) -> Any:
    """The value `text` (typed, or given as `--field k=v`) stands for in `field`;
    FormValueError saying why when it stands for none."""
    text = text.strip() if field.kind != "string" else text
    if field.kind == "string":
        return text
    typed = "the value typed" if field.secret else repr(shown(text, 40))
    if field.kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise FormValueError(f"{field.label}: {typed} is not a whole number") from None
    if field.kind == "number":
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            raise FormValueError(f"{field.label}: {typed} is not a number")
        return int(number) if number.is_integer() and "." not in text else number
    if field.kind == "boolean":
        word = text.lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
        raise FormValueError(f"{field.label}: say yes or no, not {typed}")
    if field.kind == "choice":
        return _choice(field, text)
    return [_choice(field, part.strip()) for part in text.split(",") if part.strip()]


def _choice(field: FormField, text: str) -> str:
    if text in field.values:
        return text
    for value, label in zip(field.values, field.labels, strict=False):
        if text.casefold() in (label.casefold(), value.casefold()):
            return value
    offered = ", ".join(field.values[:10]) + (", …" if len(field.values) > 10 else "")
    raise FormValueError(f"{field.label}: {shown(text, 40)!r} is not one of {offered}")


def validate(form: Form, values: Mapping[str, Any]) -> dict[str, Any]:
    """The content to send the agent for these values: each checked against its field
    (text is coerced first), required fields present; FormValueError naming the first
    problem (an unknown field, a value of the wrong kind or out of its bounds)."""
    fields = {field.name: field for field in form.fields}
    for name in values:
        if name not in fields:
            known = ", ".join(fields) or "none"
            raise FormValueError(f"the form has no field {shown(name, 40)!r} (its fields: {known})")
    content: dict[str, Any] = {}
    for name, field in fields.items():
        value = values.get(name)
        if isinstance(value, str) and field.kind != "string":
            value = coerce(field, value) if value.strip() else None
        if value is None or (value == "" and field.kind == "string" and not field.min_length):
            if field.required:
                raise FormValueError(f"{field.label} is required")
            continue
        content[name] = _checked(field, value)
    return content


def _checked(field: FormField, value: Any) -> Any:
    """`value`, when it fits `field`."""
    label = field.label
    if field.kind == "string":
        if not isinstance(value, str):
            raise FormValueError(f"{label} takes text")
        limit = min(field.max_length if field.max_length is not None else MAX_VALUE, MAX_VALUE)
        if len(value) > limit:
            raise FormValueError(f"{label} takes at most {limit:,} characters")
        if field.min_length is not None and len(value) < field.min_length:
            raise FormValueError(f"{label} takes at least {field.min_length:,} characters")
        return value
    if field.kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise FormValueError(f"{label} takes a number")
        if not math.isfinite(value):
            raise FormValueError(f"{label} takes a finite number")
        if field.kind == "integer":
            if not float(value).is_integer():
                raise FormValueError(f"{label} takes a whole number")
            value = int(value)
        if field.minimum is not None and value < field.minimum:
            raise FormValueError(f"{label} is at least {_plain(field.minimum)}")
        if field.maximum is not None and value > field.maximum:
            raise FormValueError(f"{label} is at most {_plain(field.maximum)}")
        return value
    if field.kind == "boolean":
        if not isinstance(value, bool):
            raise FormValueError(f"{label} takes yes or no")
        return value
    if field.kind == "choice":
        if not isinstance(value, str) or value not in field.values:
            raise FormValueError(f"{label} takes one of {', '.join(field.values[:10])}")
        return value
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, Sequence) or not all(isinstance(item, str) for item in items):
        raise FormValueError(f"{label} takes a list of choices")
    for item in items:
        if item not in field.values:
            raise FormValueError(f"{label}: {shown(item, 40)!r} is not one of its choices")
    chosen = list(dict.fromkeys(items))
    if field.min_items is not None and len(chosen) < field.min_items:
        raise FormValueError(f"{label} takes at least {field.min_items} choices")
    if field.max_items is not None and len(chosen) > field.max_items:
        raise FormValueError(f"{label} takes at most {field.max_items} choices")
    return chosen


def _plain(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def defaults(form: Form) -> dict[str, Any]:
    """The values the form suggests (its fields' defaults), as a screen fills them in."""
    return {
        field.name: list(field.default) if isinstance(field.default, tuple) else field.default
        for field in form.fields
        if field.default is not None
    }


def masked(form: Form, content: Mapping[str, Any]) -> dict[str, Any]:
    """`content` as it may be shown and stored: a secret field's value is MASK."""
    secret = {field.name for field in form.fields if field.secret}
    return {name: MASK if name in secret else value for name, value in content.items()}


def answer_text(form: Form, action: str, content: Mapping[str, Any], by: str = "user") -> str:
    """The row an answer leaves, in words: what was asked, and what was answered (secret
    values masked)."""
    what = f"the link {form.url}" if form.is_link else f"the form “{shown(form.message, 80)}”"
    if action == "accept":
        if form.is_link:
            return f"Opened {what} ({by})."
        shown_values = masked(form, content)
        parts = [f"{name}={_value_text(value)}" for name, value in shown_values.items()]
        return f"Answered {what} ({by}): " + (", ".join(parts) if parts else "nothing filled in")
    if action == "decline":
        return f"Declined {what} ({by})."
    return f"Cancelled {what} ({by})."


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return "[" + ", ".join(shown(item, 40) for item in value) + "]"
    return shown(str(value), 80)
