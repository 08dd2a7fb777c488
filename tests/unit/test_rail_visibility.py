"""When the session rail shows: the width decides, the user's Ctrl+B against it is kept."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cockpit.ui.rail_visibility import (
    RAIL_HIDES_BELOW,
    choice_after_toggle,
    rail_by_width,
    rail_shown,
)

WIDTHS = st.integers(20, 300)


def test_the_rail_hides_by_itself_below_80_columns() -> None:
    assert RAIL_HIDES_BELOW == 80
    assert not rail_shown(60, None)
    assert not rail_shown(79, None)
    assert rail_shown(80, None)
    assert rail_shown(200, None)


def test_ctrl_b_shows_it_on_a_narrow_terminal_and_hides_it_again() -> None:
    choice = choice_after_toggle(60, None)
    assert rail_shown(60, choice)
    choice = choice_after_toggle(60, choice)
    assert not rail_shown(60, choice)
    assert rail_shown(100, choice)  # grown back: it shows, the user did not hide it there


def test_a_rail_the_user_hid_stays_hidden_when_the_terminal_grows_back() -> None:
    choice = choice_after_toggle(120, None)
    assert not rail_shown(120, choice)
    assert not rail_shown(60, choice)
    assert not rail_shown(120, choice)


def test_a_rail_shown_on_a_narrow_terminal_stays_shown_through_resizes() -> None:
    choice = choice_after_toggle(60, None)
    for width in (100, 60, 70, 120):
        assert rail_shown(width, choice)


@given(width=WIDTHS, choice=st.sampled_from([None, True, False]))
def test_ctrl_b_always_flips_what_shows(width: int, choice: bool | None) -> None:
    assert rail_shown(width, choice_after_toggle(width, choice)) != rail_shown(width, choice)


@given(width=WIDTHS, choice=st.sampled_from([None, True, False]))
def test_ctrl_b_twice_gives_the_rail_back_to_the_width(width: int, choice: bool | None) -> None:
    twice = choice_after_toggle(width, choice_after_toggle(width, choice))
    assert rail_shown(width, twice) == rail_shown(width, choice)
    assert twice is None or twice != rail_by_width(width)


@given(presses=st.lists(WIDTHS, max_size=8), later=WIDTHS)
def test_a_kept_choice_always_goes_against_the_width_it_was_made_at(
    presses: list[int], later: int
) -> None:
    """Whatever Ctrl+B presses at whatever widths: no choice is kept that the width would
    have made anyway, and with no choice kept the width alone decides."""
    choice: bool | None = None
    for width in presses:
        choice = choice_after_toggle(width, choice)
        assert choice is None or choice != rail_by_width(width)
    if choice is None:
        assert rail_shown(later, choice) == (later >= RAIL_HIDES_BELOW)
