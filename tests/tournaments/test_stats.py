"""Wilson and Student-t intervals against published tables (stats.py)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tournaments.stats import mean_ci, t_quantile, wilson


@pytest.mark.parametrize(("df", "expected"), [
    (1, 12.7062), (2, 4.3027), (3, 3.1824), (5, 2.5706), (10, 2.2281), (30, 2.0423), (120, 1.9799),
])
def test_t_quantile_matches_the_table(df, expected):
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-4)
    assert t_quantile(0.025, df) == pytest.approx(-expected, abs=1e-4)


def test_t_quantile_tends_to_the_normal_quantile():
    assert t_quantile(0.975, 100_000) == pytest.approx(1.95996, abs=1e-4)


def test_wilson_interval_known_values():
    iv = wilson(5, 10)
    assert (iv.value, iv.lo, iv.hi) == pytest.approx((0.5, 0.2366, 0.7634), abs=1e-4)
    iv = wilson(0, 10)
    assert iv.lo == 0.0 and iv.hi == pytest.approx(0.2775, abs=1e-4)
    assert wilson(0, 0).value is None


def test_mean_ci_known_values_and_small_samples():
    iv = mean_ci([1, 2, 3, 4])
    assert iv.value == 2.5
    assert iv.hi - iv.value == pytest.approx(3.1824 * math.sqrt((5 / 3) / 4), abs=1e-4)
    assert mean_ci([]).value is None
    one = mean_ci([7])
    assert one.value == 7 and one.lo is None and one.hi is None


@given(st.integers(0, 500), st.integers(1, 500))
def test_wilson_interval_is_inside_zero_one_and_holds_the_estimate(k, n):
    k = min(k, n)
    iv = wilson(k, n)
    assert 0.0 <= iv.lo <= iv.value <= iv.hi <= 1.0


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=50))
def test_mean_ci_contains_the_mean_and_has_width_or_is_none(values):
    iv = mean_ci(values)
    if len(set(values)) == 1:  # no spread to measure: no interval rather than one of zero width
        assert iv.value == values[0] and iv.lo is None and iv.hi is None
    elif iv.lo is None:  # a spread too small for a float's square (1e-300 apart): none either
        assert max(values) - min(values) < 1e-150 and iv.hi is None
    else:
        assert iv.lo <= iv.value + 1e-6 and iv.value <= iv.hi + 1e-6
        assert iv.lo < iv.hi
