"""The time bank: pure arithmetic on durations."""

from __future__ import annotations

import pytest

from referee.match.clock import TimeBank


def test_a_reply_within_the_decision_time_costs_the_bank_nothing():
    bank = TimeBank(0.25, 1.0, seats=2)
    assert bank.charge(0, 0.25) and bank.charge(0, 0.0)
    assert bank.left == [1.0, 1.0] and bank.allowed[0] == 1.25


def test_an_overrun_is_drawn_from_that_seats_bank_only():
    bank = TimeBank(0.25, 1.0, seats=2)
    assert bank.charge(1, 0.5)
    assert bank.left == [1.0, 0.75] and bank.allowed[1] == 1.0 and bank.allowed[0] == 1.25


def test_a_reply_over_the_decision_time_and_the_bank_is_late_and_costs_nothing():
    bank = TimeBank(0.25, 0.5, seats=1)
    assert not bank.charge(0, 0.875)
    assert bank.left == [0.5]
    assert bank.charge(0, 0.75) and bank.left == [0.0]  # the whole bank, exactly
    assert not bank.charge(0, 0.25 + 1e-9) and bank.allowed[0] == 0.25


def test_without_a_bank_only_the_decision_time_counts():
    bank = TimeBank(1.0, 0.0, seats=4)
    assert bank.charge(3, 1.0) and not bank.charge(3, 1.001)


def test_each_seat_may_have_its_own_decision_time_and_bank():
    bank = TimeBank([0.25, 2.0], [0.0, 1.0], seats=2)
    assert bank.allowed == [0.25, 3.0]
    assert not bank.charge(0, 0.3), "seat 0 has no bank"
    assert bank.charge(1, 2.5) and bank.allowed[1] == 2.5
    with pytest.raises(ValueError, match="a time limit per seat"):
        TimeBank([1.0], 0.0, seats=2)
