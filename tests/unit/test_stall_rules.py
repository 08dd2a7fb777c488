"""When a starting agent has stalled (`cockpit.engine.stall`): the pure rule, and the
setting that changes its limit."""

from __future__ import annotations

import math
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.engine.stall import (
    STALL_ENV,
    STALL_LIMIT,
    Sample,
    busy,
    quiet_since,
    stall_limit_setting,
    stalled,
)


def quiet(*ats: float, cpu: float = 1.0, written: int = 10) -> list[Sample]:
    """Samples at these moments of an agent that does nothing between them."""
    return [Sample(at, cpu, written) for at in ats]


def test_an_agent_that_does_nothing_stalls_at_the_limit() -> None:
    assert not stalled(quiet(0, 1, 29.9), 30)
    assert stalled(quiet(0, 1, 30), 30)
    assert stalled(quiet(0, 31), 30)


def test_cpu_time_restarts_the_count() -> None:
    samples = [*quiet(0, 10), Sample(11, 1.01, 10), *quiet(20, 40, cpu=1.01)]
    assert quiet_since(samples).at == 11
    assert not stalled(samples, 30)
    assert stalled([*samples, Sample(41, 1.01, 10)], 30)


def test_output_restarts_the_count() -> None:
    samples = [*quiet(0, 10), Sample(11, 1.0, 11), *quiet(40, cpu=1.0, written=11)]
    assert not stalled(samples, 30)
    assert stalled([*samples, Sample(41, 1.0, 11)], 30)


def test_cpu_time_that_falls_is_something_happening() -> None:
    """A child reaped by a process outside the group takes its time with it: the group's
    sum falls, and a process ended, which is no stall."""
    assert busy(Sample(0, 2.0, 0), Sample(1, 1.5, 0))
    assert not stalled([Sample(0, 2.0, 0), Sample(40, 1.5, 0)], 30)


def test_without_a_cpu_reading_an_agent_never_stalls() -> None:
    """Elsewhere than Linux the CPU time is unknown: a silent agent that computes would
    look hung, so only the ceiling ends its start."""
    samples = [Sample(at, None, 0) for at in (0, 30, 60, 600)]
    assert not stalled(samples, 30)
    assert quiet_since(samples).at == 600


def test_the_first_sample_is_the_spawn() -> None:
    assert quiet_since(quiet(5)).at == 5
    assert not stalled(quiet(5), 30)


SAMPLES = st.lists(
    st.tuples(
        st.floats(min_value=0, max_value=20),
        st.sampled_from([0.0, 0.0, 0.0, 0.01, 0.5, -0.01]),
        st.sampled_from([0, 0, 0, 1, 4096]),
        st.booleans(),
    ),
    min_size=1,
    max_size=40,
)


def build(steps: list[tuple[float, float, int, bool]], cpu_known: bool = True) -> list[Sample]:
    """Samples from steps of (seconds later, CPU used meanwhile, bytes written meanwhile,
    whether the CPU time could be read)."""
    at, cpu, written, samples = 0.0, 0.0, 0, []
    for gap, used, wrote, readable in steps:
        at, cpu, written = at + gap, cpu + used, written + wrote
        samples.append(Sample(at, cpu if readable or cpu_known else None, written))
    return samples


@given(SAMPLES)
def test_keeping_only_the_anchor_and_the_newest_sample_decides_the_same(
    steps: list[tuple[float, float, int, bool]],
) -> None:
    """The watch keeps two samples, not the whole start: the one the quiet counts from and
    the newest. Folding them one at a time finds the same anchor as the whole list."""
    samples = build(steps, cpu_known=False)
    anchor = samples[0]
    for sample in samples[1:]:
        anchor = quiet_since([anchor, sample])
    assert anchor == quiet_since(samples)


@given(SAMPLES, st.floats(min_value=0.1, max_value=60))
def test_a_stall_is_a_limit_with_nothing_done(
    steps: list[tuple[float, float, int, bool]], limit: float
) -> None:
    """Stalled exactly when the agent did nothing in the last `limit` seconds (between
    any two samples, the later one that recent) and was watched for that long."""
    samples = build(steps)
    newest = samples[-1].at
    recent = any(busy(a, b) and newest - b.at < limit for a, b in pairwise(samples))
    watched = newest - samples[0].at >= limit
    assert stalled(samples, limit) == (watched and not recent)


@given(st.lists(st.floats(min_value=0, max_value=10), min_size=1), st.floats(0.1, 60))
def test_an_agent_that_never_does_anything_stalls_once_the_limit_has_passed(
    gaps: list[float], limit: float
) -> None:
    samples = quiet(*[sum(gaps[: i + 1]) for i in range(len(gaps))])
    assert stalled(samples, limit) == (samples[-1].at - samples[0].at >= limit)


@given(SAMPLES, st.floats(0.1, 60), st.floats(0.1, 60))
def test_a_shorter_limit_stalls_no_later(
    steps: list[tuple[float, float, int, bool]], limit: float, other: float
) -> None:
    samples = build(steps)
    shorter, longer = sorted((limit, other))
    if stalled(samples, longer):
        assert stalled(samples, shorter)


@given(SAMPLES, st.floats(0.1, 60))
def test_doing_something_ends_any_stall(
    steps: list[tuple[float, float, int, bool]], limit: float
) -> None:
    samples = build(steps)
    last = samples[-1]
    assert not stalled([*samples, Sample(last.at + 100, last.cpu, last.written + 1)], limit)


def test_the_stall_limit_setting() -> None:
    assert stall_limit_setting(None) == (STALL_LIMIT, None)
    assert stall_limit_setting(" ") == (STALL_LIMIT, None)
    assert stall_limit_setting("2.5") == (2.5, None)
    assert stall_limit_setting("120") == (120.0, None)


@pytest.mark.parametrize("text", ["abc", "0", "-3", "nan", "inf", "1e999"])
def test_a_bad_stall_limit_is_said_and_the_default_kept(text: str) -> None:
    value, problem = stall_limit_setting(text)
    assert value == STALL_LIMIT
    assert problem is not None
    assert problem.startswith(f"{STALL_ENV} must be a number of seconds above 0")
    assert repr(text) in problem and f"{STALL_LIMIT:g} s" in problem
    assert math.isfinite(value)
