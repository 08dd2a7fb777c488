"""The page byte bound at its edge: rows whose sizes sum exactly to the budget fit in one
page ("push the total past `max_bytes`" is what ends a page, and reaching it is not
passing it). Random sizes almost never sum to the budget, so these tests build that case."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from store.paging import page_length


def test_rows_that_sum_exactly_to_the_byte_budget_fit_in_one_page() -> None:
    assert page_length([100, 200, 300], max_rows=10, max_bytes=600) == 3


def test_one_byte_past_the_budget_ends_the_page_before_that_row() -> None:
    assert page_length([100, 200, 301], max_rows=10, max_bytes=600) == 2


@given(
    st.lists(st.integers(min_value=0, max_value=5000), min_size=1, max_size=40),
    st.data(),
)
def test_a_prefix_that_reaches_the_budget_exactly_is_one_page(
    sizes: list[int], data: st.DataObject
) -> None:
    """Whatever the rows, a budget equal to the sum of the first `end` of them puts at
    least those rows in the page (more when the rows after them are empty)."""
    end = data.draw(st.integers(min_value=1, max_value=len(sizes)), label="end")
    budget = sum(sizes[:end])
    count = page_length(sizes, max_rows=len(sizes), max_bytes=budget)
    assert count >= end
    assert sum(sizes[:count]) == budget
