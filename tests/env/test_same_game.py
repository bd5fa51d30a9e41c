"""``reset(seed=S)`` is ``referee play --seed S``, and a policy plays alike in both (issue #24).

Real subprocesses: the same actions played through the environment and by
bots under ``referee play`` give the same record events; a policy entered
with ``protocol.bot.run_policy`` makes the same choices as in the
environment, sandboxed or not.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from referee.env import aec_env
from referee.match.record import EventLine, read_record

from .conftest import SHORT, config_id, random_steps
from .policy_bot import policy

HERE = Path(__file__).resolve().parent
GAMES = [("back-alley", {}), ("schmier", {}), ("pegs-and-jokers", {"players": 4}),
         ("pegs-and-jokers", {"players": 6}), ("pegs-and-jokers", {"players": 8})]


def play(game: str, opts: dict, seed: int, bot: list[str], tmp_path: Path, sandbox: str = "off") -> list:
    record = tmp_path / "game.jsonl"
    seats = opts.get("players", {"back-alley": 4, "schmier": 6}.get(game))
    args = [sys.executable, "-m", "referee", "play", game, "--seed", str(seed), "--record", str(record),
            "--sandbox", sandbox, "--quiet", "--decision-ms", "5000"]
    for key, value in {**opts, **SHORT[game]}.items():
        args += ["--players", str(value)] if key == "players" else ["--option", f"{key}={value}"]
    for _ in range(seats):
        args += ["--bot", subprocess.list2cmdline(bot)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rec = read_record(record)
    assert rec.result is not None and rec.result.outcome.status != "forfeit"
    return [(e.event, e.to) for e in rec.entries if isinstance(e, EventLine)]


def env_events(env) -> list:
    return [(e.data, None if e.to is None else list(e.to)) for e in env.unwrapped.events]


@pytest.mark.parametrize(("game", "opts"), GAMES, ids=[config_id(c) for c in GAMES])
def test_the_same_actions_give_the_same_record_events(game, opts, tmp_path):
    seed = 424242
    env = aec_env(game, **{**opts, **SHORT[game]})
    env.reset(seed=seed)
    raw = env.unwrapped
    for _ in random_steps(env, random.Random(seed)):
        pass
    actions: list[list[str]] = [[] for _ in env.possible_agents]
    for seat, text in raw.decisions:  # the action texts the environment applied
        actions[seat].append(text)
    assert raw.game_state.outcome() is not None
    script = tmp_path / "actions.json"
    script.write_text(json.dumps(actions))
    got = play(game, opts, seed, [sys.executable, str(HERE / "replay_bot.py"), str(script)], tmp_path)
    assert got == env_events(env)


def play_policy_in_env(game: str, opts: dict, seed: int):
    env = aec_env(game, **{**opts, **SHORT[game]})
    env.reset(seed=seed)
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else policy(obs["observation"], obs["action_mask"]))
    return env


@pytest.mark.parametrize(("game", "opts"), GAMES, ids=[config_id(c) for c in GAMES])
def test_a_policy_plays_alike_in_the_environment_and_as_a_subprocess_bot(game, opts, tmp_path):
    env = play_policy_in_env(game, opts, seed=77)
    got = play(game, opts, 77, [sys.executable, str(HERE / "policy_bot.py")], tmp_path)
    assert got == env_events(env)


def test_a_policy_bot_plays_in_the_bubblewrap_sandbox(tmp_path):
    venv_python = Path(sys.prefix) / "bin" / "python"
    env = play_policy_in_env("back-alley", {}, seed=5)
    got = play("back-alley", {}, 5, [str(venv_python), str(HERE / "policy_bot.py")], tmp_path, sandbox="required")
    assert got == env_events(env)


def test_a_policy_that_chooses_an_illegal_id_forfeits(tmp_path):
    bot = tmp_path / "bad_policy.py"
    bot.write_text("import sys\nfrom protocol.bot import run_policy\n"
                   "sys.exit(run_policy(lambda obs, mask: int((mask == 0).nonzero()[0][0])))\n")
    record = tmp_path / "bad.jsonl"
    good = subprocess.list2cmdline([sys.executable, str(HERE / "policy_bot.py")])
    done = subprocess.run([sys.executable, "-m", "referee", "play", "back-alley", "--seed", "1", "--record",
                           str(record), "--sandbox", "off", "--quiet",
                           "--bot", subprocess.list2cmdline([sys.executable, str(bot)]), "--bot", good],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    rec = read_record(record)
    assert rec.result.outcome.status == "forfeit"
    assert any("IllegalPolicyAction" in line for e in rec.entries if getattr(e, "record", "") == "fault"
               for line in e.stderr_tail)


def test_policy_observations_are_numpy_arrays_of_the_environments_dtypes():
    env = aec_env("back-alley")
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    assert obs["observation"].dtype == np.int32 and obs["action_mask"].dtype == np.int8
