"""An agent observes its own seat's view only (issue #24, RULES 0.6).

The observation is ``protocol.encoding``'s encoding of ``state.observe(seat)``
(what the protocol sends that seat) and nothing else: checked step by step in
random games, and by states that differ only in cards hidden from a seat,
which must give that seat the same observation (and another seat a different
one, so the check can fail).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from protocol.encoding import encoding_for
from referee.env import aec_env
from referee.games.back_alley.notation import DECK as BACK_ALLEY_DECK
from referee.games.back_alley.rules import BackAlleyState
from referee.games.pegs_and_jokers.rules import PegsAndJokersState
from referee.games.schmier.notation import CARDS as SCHMIER_CARDS
from referee.games.schmier.rules import SchmierState

from .conftest import CONFIGS, SHORT, config_id, random_steps


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_every_observation_is_the_encoding_of_that_seats_view(config):
    game, opts = config
    env = aec_env(game, **{**opts, **SHORT[game]})
    env.reset(seed=11)
    raw = env.unwrapped
    fresh = encoding_for(game, raw.options)  # no memo shared with the environment's
    rng = random.Random(3)
    checked = 0
    for agent, _ in random_steps(env, rng, limit=1500):
        for other in env.agents:
            seat = int(other.split("_")[1])
            prefix = raw._prefix if other == agent else ()
            got = env.observe(other)
            want = np.frombuffer(fresh.encode(raw.game_state.observe(seat), prefix), dtype=np.int32)
            assert np.array_equal(got["observation"], want), (other, checked)
            assert env.observation_space(other).contains(got), (other, checked)
            assert got["observation"].dtype == np.int32
            if other != agent:
                assert not got["action_mask"].any(), "only the agent to act has a non-zero mask"
        checked += 1
    assert checked > 100


def test_back_alley_hidden_cards_of_other_seats_do_not_change_an_observation():
    deck = list(BACK_ALLEY_DECK)
    random.Random(1).shuffle(deck)
    hands = [deck[13 * s : 13 * s + 13] for s in range(4)]
    stock = deck[52:]  # the two cards left over; the first is the turn-up
    swapped = [hands[0], hands[3], hands[2], hands[1]]  # seats 1 and 3 trade their (hidden) hands
    a, _ = BackAlleyState.from_deal(dealer=0, hands=hands, stock=stock)
    b, _ = BackAlleyState.from_deal(dealer=0, hands=swapped, stock=stock)
    enc = encoding_for("back-alley")
    for s in (0, 2):
        assert list(enc.encode(a.observe(s))) == list(enc.encode(b.observe(s)))
    assert list(enc.encode(a.observe(1))) != list(enc.encode(b.observe(1)))
    # ... and after the same public actions too (the bidding, then a card each).
    for action in ["pass", "1", "pass", "2"]:
        a.apply(action)
        b.apply(action)
    assert list(enc.encode(a.observe(0))) == list(enc.encode(b.observe(0)))


def test_schmier_hidden_cards_of_other_seats_and_the_stock_do_not_change_an_observation():
    deck = list(SCHMIER_CARDS)
    random.Random(2).shuffle(deck)
    hands = [deck[6 * s : 6 * s + 6] for s in range(6)]
    stock = deck[36:]
    swapped = [hands[0], hands[4], hands[2], hands[3], hands[1], hands[5]]
    a, _ = SchmierState.from_deal(0, hands, stock)
    b, _ = SchmierState.from_deal(0, swapped, list(reversed(stock)))
    enc = encoding_for("schmier")
    for s in (0, 2, 3, 5):
        assert list(enc.encode(a.observe(s))) == list(enc.encode(b.observe(s))), s
    assert list(enc.encode(a.observe(1))) != list(enc.encode(b.observe(1)))


def test_pegs_and_jokers_hidden_hands_and_draw_pile_do_not_change_an_observation():
    hands = {0: ["2C", "5D", "9H", "KS", "AC"], 1: ["3C", "4D", "6H", "7S", "8C"],
             2: ["TD", "JH", "QS", "2D", "3H"], 3: ["JK", "4S", "5C", "6D", "7H"]}
    swapped = {**hands, 1: hands[3], 3: hands[1]}
    a = PegsAndJokersState.from_position(4, hands=hands, to_act=0, seed=1)
    b = PegsAndJokersState.from_position(4, hands=swapped, to_act=0, seed=2)  # another draw-pile order
    enc = encoding_for("pegs-and-jokers", {"players": 4})
    for s in (0, 2):
        assert list(enc.encode(a.observe(s))) == list(enc.encode(b.observe(s)))
    assert list(enc.encode(a.observe(1))) != list(enc.encode(b.observe(1)))


def test_a_pegs_and_jokers_move_in_progress_is_seen_only_by_its_mover():
    env = aec_env("pegs-and-jokers", players=4)
    env.reset(seed=4)
    rng = random.Random(0)
    # Play until some agent is in the middle of a move (a card chosen, positions to come).
    for _ in range(2000):
        agent = env.agent_selection
        before = {a: env.observe(a)["observation"].copy() for a in env.agents}
        mask = env.observe(agent)["action_mask"]
        ids = np.flatnonzero(mask)
        env.step(int(ids[rng.randrange(len(ids))]))
        if env.agent_selection == agent and env.unwrapped._prefix:
            after = {a: env.observe(a)["observation"] for a in env.agents}
            assert not np.array_equal(before[agent], after[agent])  # the mover sees its choice ...
            for other in env.agents:
                if other != agent:  # ... nobody else does
                    assert np.array_equal(before[other], after[other]), other
            return
    pytest.fail("no multi-step move in 2000 steps")
