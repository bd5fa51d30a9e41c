"""PettingZoo's own conformance tests on every game and player count (issue #24)."""

from __future__ import annotations

import pytest
from pettingzoo import test as pettingzoo_test

from referee.env import aec_env

from .conftest import CONFIGS, config_id

# api_test warns so for every Dict observation of an environment outside its own list
# (PettingZoo's classic card games included): expected, documented in docs/learning.md.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array:UserWarning"),
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be:UserWarning"),
]


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_api_test_passes(config):
    game, opts = config
    pettingzoo_test.api_test(aec_env(game, **opts), num_cycles=1000)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_seed_test_passes(config):
    game, opts = config
    pettingzoo_test.seed_test(lambda: aec_env(game, **opts), num_cycles=500)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_api_test_passes_under_the_illegal_is_loss_wrapper(config):
    game, opts = config
    pettingzoo_test.api_test(aec_env(game, illegal="lose", **opts), num_cycles=300)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_spaces_agents_and_teams(config):
    game, opts = config
    env = aec_env(game, **opts)
    n = opts.get("players", {"back-alley": 4, "schmier": 6}.get(game))
    assert env.possible_agents == [f"player_{s}" for s in range(n)]
    teams = 3 if game == "schmier" else 2
    assert env.teams == [[f"player_{s}" for s in range(n) if s % teams == t] for t in range(teams)]
    space = env.observation_space("player_0")
    assert space is env.observation_space(f"player_{n - 1}")
    assert space["observation"].shape == (env.encoding.size,)
    assert space["action_mask"].shape == (env.action_space("player_0").n,) == (env.encoding.num_actions,)
    assert env.metadata["name"].startswith("referee_" + game.replace("-", "_"))


def test_the_action_spaces_have_their_documented_sizes():
    assert aec_env("back-alley").action_space("player_0").n == 68  # pass, 1 … 12, board, 54 cards
    assert aec_env("schmier").action_space("player_0").n == 63  # pass, 3 … 6, 4 suits, done, 53 cards
    for players in (4, 6, 8):  # 53 plays, 53 discards, S + 18·n track holes + H1 … H5, end
        assert aec_env("pegs-and-jokers", players=players).action_space("player_0").n == 106 + 18 * players + 6 + 1


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_render_test_passes(config, capsys):
    game, opts = config
    pettingzoo_test.render_test(lambda render_mode=None: aec_env(game, render_mode=render_mode, **opts))
    assert f"{game} seed" in capsys.readouterr().out  # "human" printed its lines
