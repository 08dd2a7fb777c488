"""The service protocol's codec: every record and event of the contract crosses JSON and comes
back equal, frames as bare lists; what is not the contract's is refused."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit import api
from cockpit.protocol import RECORDS, ProtocolError, decode, encode, encode_frames_event
from store.model import Frame

text = st.text(max_size=20)
keys = text | st.sampled_from(["$", "$$", "$Row", "$$Nothing"])
"""An agent's keys, which may look like a record's tag."""
json_leaf = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | text
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=8,
)
mapping = st.dictionaries(keys, json_value, max_size=3)
times = st.floats(min_value=0, max_value=2e9, allow_nan=False)

frames = st.builds(
    Frame, text, text, st.integers(0, 10**6), text, st.integers(0, 999), text,
    st.booleans(), st.integers(0, 10**6), st.none() | mapping,
)  # fmt: skip
rows = st.builds(
    api.Row, text, st.integers(0, 10**6), text, text, text, st.integers(0, 999), text,
    st.none() | mapping, st.integers(0, 10**6), times, times,
)  # fmt: skip
records = st.builds(
    api.SessionRecord, text, text, st.tuples(text, text).map(tuple), text, st.none() | text, text,
    st.none() | text, times, times, st.none() | mapping, st.none() | st.tuples(mapping),
    st.none() | st.tuples(mapping, mapping), st.none() | mapping, st.none() | mapping,
    st.booleans(), text,
)  # fmt: skip
requests = st.builds(
    api.PermissionRequest, text, text, mapping, st.lists(mapping, max_size=3).map(tuple), times
)
specs = st.builds(
    api.AgentSpec, text, st.lists(text, min_size=1, max_size=3).map(tuple), text,
    st.dictionaries(text, text, max_size=2), text, text, text, st.integers(0, 19), text,
    st.lists(text, max_size=2).map(tuple), st.dictionaries(text, text, max_size=2),
)  # fmt: skip
events = st.one_of(
    st.builds(api.FramesEvent, text, st.lists(frames, max_size=4).map(tuple)),
    st.builds(api.StatusEvent, text, text, text, st.booleans()),
    st.builds(api.PermissionEvent, requests, st.booleans(), st.none() | text),
    st.builds(api.SessionEvent, text),
    st.builds(api.AttentionEvent, text, st.booleans()),
    st.builds(api.ProblemEvent, st.none() | text, text),
    st.builds(api.SavingEvent, st.none() | text),
)
worktree_statuses = st.builds(
    api.WorktreeStatus, text, st.integers(0, 10**6), st.integers(0, 10**6),
    st.integers(0, 10**6), st.booleans(),
)  # fmt: skip
values = st.one_of(
    events,
    rows,
    records,
    st.builds(api.Page, st.lists(rows, max_size=3).map(tuple), st.booleans()),
    st.builds(api.AgentInfo, specs, st.booleans()),
    st.builds(api.FileMatch, text, st.lists(st.integers(0, 99), max_size=4).map(tuple)),
    st.builds(api.WorktreeRequest, text, st.none() | text, st.booleans()),
    st.builds(api.RepositoryInfo, text, st.none() | text, st.booleans(), st.tuples(text, text)),
    worktree_statuses,
    st.builds(
        api.WorktreeListing,
        text,
        text,
        text,
        text,
        text,
        text,
        st.integers(0, 2**40),
        worktree_statuses,
        st.booleans(),
    ),
    st.builds(
        api.CleanupItem,
        text,
        text,
        text,
        text,
        text,
        st.integers(0, 2**40),
        st.booleans(),
        st.lists(text, max_size=3).map(tuple),
        st.floats(0, 2e9),
        st.booleans(),
        st.booleans(),
    ),
    st.builds(api.Checkpoint, text, st.integers(0, 999), text, text, times, st.integers(0, 99)),
    st.builds(
        api.FileChange, text, text, st.none() | text, st.none() | text, st.booleans(),
        st.booleans(), st.booleans(),
    ),
    st.builds(
        api.RestorePlan, text, *[st.lists(text, max_size=3).map(tuple)] * 4, st.none() | text
    ),
    st.builds(
        api.MergeResult,
        st.booleans(),
        text,
        text,
        text,
        st.lists(text, max_size=3).map(tuple),
        st.none() | text,
    ),
)  # fmt: skip


def through_the_wire(value: Any) -> Any:
    return decode(json.loads(json.dumps(encode(value))))


@given(values)
def test_every_record_and_event_comes_back_equal(value: Any) -> None:
    assert through_the_wire(value) == value


def test_an_agents_mapping_with_tag_keys_is_not_read_as_a_record() -> None:
    payload = {"$": None, "$$": "Row", "$Row": {"$": "Nothing"}, "plain": 1}
    row = api.Row("s", 1, "agent", "text", "", 0, "k", payload, 0, 0.0, 0.0)
    assert through_the_wire(row) == row
    assert through_the_wire(payload) == payload


@given(frames)
def test_a_frame_is_a_bare_list_and_comes_back_a_frame(frame: Frame) -> None:
    wire = encode(frame)
    assert isinstance(wire, list) and len(wire) == len(Frame._fields)
    assert decode(json.loads(json.dumps(wire)), Frame) == frame


def test_every_event_of_the_contract_can_cross() -> None:
    event_types = set(api.EngineEvent.__args__)
    assert event_types <= {RECORDS[name] for name in RECORDS}


@given(text, st.lists(frames, max_size=4))
def test_frames_go_the_short_way_and_come_back_equal(session: str, items: list[Frame]) -> None:
    event = api.FramesEvent(session, tuple(items))
    wire = encode_frames_event(session, items)
    assert wire == encode(event)
    assert all(isinstance(frame, list) for frame in wire["frames"])
    back = decode(json.loads(json.dumps(wire)))
    assert back == event and all(type(frame) is Frame for frame in back.frames)


@pytest.mark.parametrize(
    "data",
    [
        {"$": "Nothing"},
        {"$": "Row", "seq": 1},
        {"$": "SessionEvent", "session": "s", "x": 1},
        {"$": "FramesEvent", "session": "s", "frames": [["s", "k", 1]]},
        {"$": "FramesEvent", "session": "s", "frames": "not a list"},
        {"$": "FramesEvent", "session": "s", "frames": [], "x": 1},
        {"$": "FramesEvent", "frames": []},
    ],
)
def test_what_is_not_the_contracts_is_refused(data: dict[str, Any]) -> None:
    with pytest.raises(ProtocolError):
        decode(data)


def test_a_value_that_cannot_cross_says_so() -> None:
    with pytest.raises(ProtocolError, match="object"):
        encode(object())
