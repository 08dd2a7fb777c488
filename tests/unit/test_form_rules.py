"""The rules of an agent's forms (`cockpit.form_rules`): a schema read into fields, a bad
one refused with a reason, typed text coerced, answers validated and secrets masked."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.api import Form, FormField
from cockpit.form_rules import (
    MASK,
    MAX_FIELDS,
    FormRefused,
    FormValueError,
    answer_text,
    coerce,
    masked,
    read_form,
    validate,
)
from cockpit.text.secret_names import is_secret, is_secret_field

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 5},
        "password": {"type": "string"},
        "count": {"type": "integer", "minimum": 1, "maximum": 3, "default": 2},
        "ratio": {"type": "number", "maximum": 1.5},
        "ok": {"type": "boolean", "default": True},
        "size": {"type": "string", "enum": ["s", "m"], "default": "m"},
        "colour": {"type": "string", "oneOf": [{"const": "r", "title": "Red"},
                                               {"const": "g", "title": "Green"}]},
        "tags": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "Alpha"},
                                                     {"const": "b", "title": "Beta"}]},
                 "maxItems": 1},
    },
    "required": ["name"],
}  # fmt: skip


def form() -> Form:
    return read_form("Fill it", {"requestedSchema": SCHEMA})


def test_each_kind_of_field_is_read_with_its_bounds_and_defaults() -> None:
    fields = {field.name: field for field in form().fields}
    assert [(f.name, f.kind) for f in fields.values()] == [
        ("name", "string"), ("password", "string"), ("count", "integer"), ("ratio", "number"),
        ("ok", "boolean"), ("size", "choice"), ("colour", "choice"), ("tags", "choices"),
    ]  # fmt: skip
    assert fields["name"].required and (fields["name"].min_length, fields["name"].max_length) == (
        2,
        5,
    )
    assert (fields["count"].minimum, fields["count"].maximum, fields["count"].default) == (1, 3, 2)
    assert fields["ok"].default is True and fields["size"].default == "m"
    assert fields["colour"].labels == ("Red", "Green") and fields["tags"].max_items == 1
    assert [f.name for f in fields.values() if f.secret] == ["password"]


def test_a_link_is_read_and_only_a_web_address_is() -> None:
    link = read_form("Sign in", {"url": "https://a.example/x", "elicitationId": "e1"})
    assert link.is_link and link.elicitation_id == "e1" and link.fields == ()
    for url in ("javascript:alert(1)", "file:///etc/passwd", "https://a b", "https://a\x1b[2J"):
        with pytest.raises(FormRefused):
            read_form("x", {"url": url})


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"properties": {"a": {"type": "object"}}}, "of type \"object\""),
        ({"properties": 5}, "not an object"),
        ({"type": "array"}, "not an object of fields"),
        ({"properties": {f"f{n}": {"type": "string"} for n in range(MAX_FIELDS + 1)}},
         f"{MAX_FIELDS + 1} fields"),
        ({"properties": {"a": {"type": "string", "title": "x" * 70_000}}}, "characters"),
        ({"properties": {"a": {"type": "string", "enum": [1]}}}, "not all text"),
        ({"properties": {"a": {"type": "string", "enum": []}}}, "no choice"),
        ({"properties": {"a": {"type": "string", "enum": ["x", "x"]}}}, "listed twice"),
        ({"properties": {"a": {"type": "array", "items": {"type": "object"}}}}, "something else"),
        ({"properties": {"a": {"type": "integer", "minimum": 5, "maximum": 1}}}, "minimum above"),
        ({"properties": {"a\x1b[2J": {"type": "string"}}}, "not printable"),
        ({"properties": {"a": 7}}, "not described by an object"),
        ({"properties": {}, "required": "a"}, "not a list"),
    ],
)  # fmt: skip
def test_a_schema_cockpit_cannot_show_is_refused_with_why(schema: Any, reason: str) -> None:
    with pytest.raises(FormRefused, match=reason.replace("(", r"\(")):
        read_form("x", {"requestedSchema": schema})


def test_escape_sequences_in_titles_are_removed_and_long_text_cut() -> None:
    made = read_form(
        "\x1b]0;t\x07hi" + "m" * 5000,
        {"requestedSchema": {"properties": {"a": {"type": "string", "title": "\x1b[31mA"}}}},
    )
    assert made.fields[0].title == "A"
    assert made.message.startswith("hi") and len(made.message) == 2000


def test_typed_text_is_coerced_as_the_field_says() -> None:
    fields = {field.name: field for field in form().fields}
    assert coerce(fields["count"], " 3 ") == 3
    assert coerce(fields["ratio"], "0.5") == 0.5
    assert coerce(fields["ok"], "No") is False and coerce(fields["ok"], "yes") is True
    assert coerce(fields["colour"], "green") == "g" and coerce(fields["size"], "m") == "m"
    assert coerce(fields["tags"], "Alpha, b") == ["a", "b"]
    for name, text, why in [
        ("count", "three", "not a whole number"),
        ("ratio", "nan", "not a number"),
        ("ok", "maybe", "say yes or no"),
        ("colour", "blue", "not one of r, g"),
    ]:
        with pytest.raises(FormValueError, match=why):
            coerce(fields[name], text)


def test_answers_are_validated_against_the_form() -> None:
    made = form()
    assert validate(made, {"name": "ada", "count": "3", "tags": ["a"]}) == {
        "name": "ada",
        "count": 3,
        "tags": ["a"],
    }
    cases: list[tuple[dict[str, Any], str]] = [
        ({}, "Name is required"),
        ({"name": "a"}, "at least 2 characters"),
        ({"name": "abcdef"}, "at most 5 characters"),
        ({"name": "ada", "count": 4}, "at most 3"),
        ({"name": "ada", "count": 1.5}, "whole number"),
        ({"name": "ada", "ok": "perhaps"}, "yes or no"),
        ({"name": "ada", "tags": ["a", "b"]}, "at most 1 choices"),
        ({"name": "ada", "nope": 1}, "no field 'nope'"),
        ({"name": "ada", "ratio": True}, "takes a number"),
    ]
    for values, why in cases:
        with pytest.raises(FormValueError, match=why):
            validate(made, values)


def test_a_secret_is_masked_in_what_is_shown_and_stored() -> None:
    made = form()
    content = validate(made, {"name": "ada", "password": "hunter22"})
    assert masked(made, content) == {"name": "ada", "password": MASK}
    text = answer_text(made, "accept", content)
    assert "hunter22" not in text and f"password={MASK}" in text
    assert answer_text(made, "cancel", {}).startswith("Cancelled the form")


@pytest.mark.parametrize(
    ("names", "secret"),
    [
        (("password",), True), (("api_key",), True), (("x", "API token"), True),
        (("key",), True), (("x", "Your secret"), True), (("keyboard",), False),
        (("name", "Project name"), False), (("monkey",), False),
    ],
)  # fmt: skip
def test_the_secret_name_rule_reads_field_names_and_titles(
    names: tuple[str, ...], secret: bool
) -> None:
    assert is_secret_field(*names) is secret


def test_the_variable_rule_is_unchanged_by_forms() -> None:
    assert is_secret("GITHUB_TOKEN") and not is_secret("KEY") and not is_secret("KEYMAP")


# -- properties ---------------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip


@given(schema=JSON, message=st.text(max_size=50))
def test_any_json_is_read_or_refused_never_a_crash(schema: Any, message: str) -> None:
    reason = ""
    try:
        made: Form | None = read_form(message, {"requestedSchema": schema})
    except FormRefused as refused:
        made, reason = None, str(refused)
    if made is None:
        assert reason  # a sentence, never an empty refusal
    else:
        assert "\x1b" not in made.message and len(made.fields) <= MAX_FIELDS


@given(
    low=st.integers(-1000, 1000),
    span=st.integers(0, 1000),
    value=st.integers(-3000, 3000),
)
def test_an_integer_is_accepted_exactly_when_inside_its_bounds(
    low: int, span: int, value: int
) -> None:
    field = FormField("n", "integer", minimum=low, maximum=low + span)
    made = Form("m", (field,))
    inside = low <= value <= low + span
    try:
        assert validate(made, {"n": str(value)}) == {"n": value}
        assert inside
    except FormValueError:
        assert not inside


@given(st.lists(st.sampled_from(["a", "b", "c"]), max_size=5))
def test_choices_coerced_from_text_round_trip(chosen: list[str]) -> None:
    field = FormField("t", "choices", values=("a", "b", "c"), labels=("A", "B", "C"))
    assert coerce(field, ",".join(chosen)) == chosen


def test_a_refused_secret_is_not_repeated_in_the_message() -> None:
    field = FormField("pin", "integer", title="Password", secret=True)
    with pytest.raises(FormValueError) as refused:
        coerce(field, "hunter2")
    assert "hunter2" not in str(refused.value) and "not a whole number" in str(refused.value)
