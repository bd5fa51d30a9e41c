"""Action ids both ways, illegal ids, and rewards (issue #24, docs/learning.md)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from protocol.encoding import encoding_for
from referee.env import IllegalActionId, NotResetError, aec_env
from referee.games import get_game

from .conftest import CONFIGS, SHORT, config_id, random_steps


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_every_legal_action_round_trips_through_its_ids(config):
    game, opts = config
    spec = get_game(game)
    options = spec.normalize_options(opts)
    enc = encoding_for(game, options)
    rng = random.Random(7)
    state, _ = spec.new_game(9, options)
    seen = 0
    while state.to_act() is not None and seen < 3000:
        view = state.observe(state.to_act())
        legal = state.legal_actions()
        decision = enc.decision(legal)
        for text in legal:
            ids = enc.tokens(text)
            assert all(0 <= i < enc.num_actions for i in ids)
            assert enc.action_text(ids, view) == text
            # The steps of the decision reach it: each token is allowed after its prefix.
            for k in range(len(ids)):
                assert decision.mask(ids[:k])[ids[k]] == 1
            full = ids if decision.text(ids) is not None else ids + (enc.end,)
            assert decision.text(full) == text
        seen += len(legal)
        state.apply(rng.choice(legal))
    assert seen > 100


def test_back_alley_and_schmier_ids_are_the_documented_ones():
    ba = encoding_for("back-alley")
    assert [ba.tokens(t) for t in ("pass", "1", "12", "board", "2C", "AC", "AS", "BJ", "LJ")] == [
        (0,), (1,), (12,), (13,), (14,), (26,), (65,), (66,), (67,)]
    sc = encoding_for("schmier")
    assert [sc.tokens(t) for t in ("pass", "3", "6", "C", "S", "done", "2C", "AS", "JK")] == [
        (0,), (1,), (4,), (5,), (8,), (9,), (10,), (61,), (62,)]
    with pytest.raises(ValueError, match="not a Back Alley action"):
        ba.tokens("13")


def test_pegs_and_jokers_ids_are_the_documented_ones():
    enc = encoding_for("pegs-and-jokers", {"players": 4})  # 72 track holes
    assert enc.tokens("discard 5S") == (53 + 42,)
    assert enc.tokens("KH 2:S-T44") == (37, 106, 106 + 45)
    assert enc.tokens("7C 0:T10-T11,0:T20-T25") == (5, 117, 118, 127, 132)
    assert enc.tokens("5S 0:T71-H2") == (42, 106 + 72, 106 + 74)
    assert enc.action_text((5, 117, 118, 127, 132), {"colour": 0}) == "7C 0:T10-T11,0:T20-T25"
    assert enc.end == enc.num_actions - 1 == 106 + 78


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_an_illegal_id_raises_and_changes_nothing(config):
    game, opts = config
    env = aec_env(game, **opts)
    env.reset(seed=3)
    rng = random.Random(5)
    for _ in random_steps(env, rng, limit=40):
        pass
    raw = env.unwrapped
    agent = env.agent_selection
    before = env.observe(agent)
    events, prefix = len(raw.events), raw._prefix
    illegal = int(np.flatnonzero(before["action_mask"] == 0)[0])
    for bad in (illegal, -1, env.action_space(agent).n, 10**9):
        with pytest.raises(IllegalActionId, match="not legal"):
            env.step(bad)
    for bad in ("pass", 1.5, [0]):
        with pytest.raises(IllegalActionId, match="integer id"):
            env.step(bad)
    after = env.observe(agent)
    assert env.agent_selection == agent and raw._prefix == prefix and len(raw.events) == events
    assert np.array_equal(before["observation"], after["observation"])
    assert np.array_equal(before["action_mask"], after["action_mask"])
    # ... and the game goes on from there.
    env.step(int(np.flatnonzero(after["action_mask"])[0]))
    assert len(raw.events) > events or raw._prefix != prefix


def test_an_illegal_id_mid_move_keeps_the_move_so_far():
    env = aec_env("pegs-and-jokers", players=6)
    env.reset(seed=2)
    rng = random.Random(1)
    for _ in range(3000):
        agent = env.agent_selection
        mask = env.observe(agent)["action_mask"]
        ids = np.flatnonzero(mask)
        env.step(int(ids[rng.randrange(len(ids))]))
        prefix = env.unwrapped._prefix
        if prefix and env.agent_selection == agent:
            mask = env.observe(agent)["action_mask"]
            with pytest.raises(IllegalActionId):
                env.step(int(np.flatnonzero(mask == 0)[0]))
            assert env.unwrapped._prefix == prefix
            assert np.array_equal(env.observe(agent)["action_mask"], mask)
            return
    pytest.fail("no multi-step move")


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_under_illegal_lose_an_illegal_id_ends_the_game_with_minus_one_for_the_mover(config, caplog):
    game, opts = config
    env = aec_env(game, illegal="lose", **opts)
    env.reset(seed=8)
    agent = env.agent_selection
    mask = env.observe(agent)["action_mask"]
    env.step(int(np.flatnonzero(mask == 0)[0]))
    assert "Illegal move made" in caplog.text  # PettingZoo's own warning
    assert all(env.terminations.values())
    assert env.rewards[agent] == -1
    assert all(r == 0 for a, r in env.rewards.items() if a != agent)
    assert not any(env.observe(a)["action_mask"].any() for a in env.agents)  # nobody may act any more


def test_step_or_observe_before_reset_is_refused():
    env = aec_env("back-alley")
    with pytest.raises(NotResetError):
        env.step(0)
    with pytest.raises(NotResetError):
        env.observe("player_0")


@pytest.mark.parametrize("game", ["back-alley", "schmier", "pegs-and-jokers"])
def test_score_rewards_add_up_to_each_teams_final_score(game):
    env = aec_env(game, **SHORT[game])
    env.reset(seed=21)
    totals = dict.fromkeys(env.agents, 0.0)
    paid_before_end = False
    rng = random.Random(2)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        if reward and not term:
            paid_before_end = True
        if term or trunc:
            env.step(None)
            continue
        ids = np.flatnonzero(obs["action_mask"])
        env.step(int(ids[rng.randrange(len(ids))]))
    outcome = env.unwrapped.game_state.outcome()
    assert outcome.status != "aborted"
    for t, members in enumerate(env.teams):
        for agent in members:
            assert totals[agent] == outcome.scores[t], (agent, totals, outcome)
    if game != "pegs-and-jokers" or any(outcome.scores):
        assert paid_before_end  # per deal (or per peg home), not only at the end


def test_outcome_rewards_pay_the_winners_one_and_the_others_minus_one():
    env = aec_env("schmier", rewards="outcome", max_deals=2)
    for seed in range(20):
        env.reset(seed=seed)
        totals = dict.fromkeys(env.agents, 0.0)
        for agent in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            totals[agent] += reward
            if term or trunc:
                env.step(None)
                continue
            env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
        outcome = env.unwrapped.game_state.outcome()
        if outcome.status == "win":
            break
    assert outcome.status == "win"
    for t, members in enumerate(env.teams):
        for agent in members:
            assert totals[agent] == (1.0 if t in outcome.winners else -1.0)


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    (("chess",), {}, "unknown game 'chess'"),
    (("pegs-and-jokers",), {"players": 5}, "players must be 4, 6 or 8"),
    (("back-alley",), {"players": 4}, "unknown Back Alley option"),
    (("schmier",), {"rewards": "money"}, "rewards must be 'score' or 'outcome'"),
    (("schmier",), {"illegal": "ignore"}, "illegal must be 'raise' or 'lose'"),
    (("schmier",), {"render_mode": "rgb_array"}, "render_mode must be None, 'ansi' or 'human'"),
])
def test_bad_environment_options_are_refused_as_the_users_fault(args, kwargs, message):
    from referee.errors import UserFault

    with pytest.raises(UserFault, match=message):
        aec_env(*args, **kwargs)


def test_ansi_render_names_the_agent_to_act_and_then_the_outcome():
    env = aec_env("schmier", render_mode="ansi", max_deals=1)
    env.reset(seed=4)
    line = env.render()
    assert line.startswith("schmier seed 4: player_") and "to bid; legal: pass 3 4 5 6" in line
    rng = random.Random(0)
    for _ in random_steps(env, rng):
        pass
    assert "over" in env.render()
