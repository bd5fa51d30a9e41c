#!/usr/bin/env python3
"""Train the Back Alley bidding table in-process, then play it in a tournament.

    .venv/bin/python sample_bots/learning/train.py [--seconds 60] [--out POLICY] [--no-tournament]

Self-play through ``referee.env.aec_env("back-alley")`` (the PettingZoo AEC
API, docs/learning.md): all four seats play ``bidding.BiddingPolicy``, which
explores other bids near its estimate 20 % of the time; when a deal is over,
the reward a seat has received since its bid — its team's deal score
(``rewards="score"``), or 0 if all passed — is credited to the table cell of
that bid.  After ``--seconds`` the table
goes to ``--out`` (default ``runs/bidding_policy.json`` beside this file) and,
unless ``--no-tournament``, ``referee run tournament.toml`` plays the
learned bot against the heuristic bot and the untrained one.  The tournament
plays the default table (``--out`` elsewhere needs ``--no-tournament``), and
anew each time: a tournament an earlier run left in its output directory was
played with a table this run has replaced, so it is removed, not resumed.

A trainer, not a bot: it imports ``referee.env`` (the bots beside it use
``protocol`` only, tests/test_layering.py).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bidding import CARD0, BiddingPolicy, features, field  # noqa: E402  (beside this file)

from referee.env import aec_env  # noqa: E402

TOURNAMENT = HERE / "tournament.toml"
#: The table the tournament's learned entrant plays (its command in tournament.toml).
DEFAULT_OUT = HERE / "runs" / "bidding_policy.json"


def deal_of(obs: np.ndarray) -> tuple[int, int]:
    """Which deal an observation is in: (deal number, all-pass redeals before it)."""
    return int(np.argmax(field(obs, "deal"))), int(field(obs, "redeals")[0])


def train(seconds: float, seed: int = 1) -> tuple[BiddingPolicy, dict[str, float]]:
    policy = BiddingPolicy(epsilon=0.2, seed=seed)
    env = aec_env("back-alley")
    pending: dict[str, tuple[str, int, tuple[int, int]]] = {}  # agent -> (features key, bid, its deal)
    games = deals = steps = 0
    start = time.perf_counter()
    game_seed = seed
    while time.perf_counter() - start < seconds:
        env.reset(seed=game_seed)
        game_seed += 1
        pending.clear()
        for agent in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            vec = obs["observation"]
            if agent in pending and (term or trunc or deal_of(vec) != pending[agent][2]):
                # The deal this agent bid in is over: its reward since then is that deal's score
                # (0 when all passed and the cards were dealt again).
                key, bid, _ = pending.pop(agent)
                policy.learn(key, bid, reward)
                deals += 1
            if term or trunc:
                env.step(None)
                continue
            action = policy(vec, obs["action_mask"])
            if action < CARD0:
                pending[agent] = (features(vec), action, deal_of(vec))
            env.step(action)
            steps += 1
        games += 1
    elapsed = time.perf_counter() - start
    policy.epsilon = 0.0
    return policy, {"games": games, "scored_bids": deals, "agent_steps": steps, "seconds": round(elapsed, 1)}


def tournament_output() -> Path:
    """The tournament's output directory (``output`` in tournament.toml, relative to it)."""
    output = tomllib.loads(TOURNAMENT.read_text(encoding="utf-8"))["output"]
    return (TOURNAMENT.parent / output).resolve()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="training time (default 60)")
    parser.add_argument("--seed", type=int, default=1, help="first game seed of the self-play")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="where the table goes (default runs/bidding_policy.json beside this file, "
                             "the one the tournament plays; another needs --no-tournament)")
    parser.add_argument("--no-tournament", action="store_true", help="train only")
    args = parser.parse_args()
    stale = tournament_output()
    if not args.no_tournament:
        if args.out.resolve() != DEFAULT_OUT:
            parser.error(f"the tournament plays {DEFAULT_OUT}, not --out {args.out}: add --no-tournament")
        if stale.exists() and not stale.is_relative_to(HERE / "runs"):  # an edited tournament.toml
            parser.error(f"{stale} holds an earlier tournament: delete it to play anew")
    policy, stats = train(args.seconds, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    policy.save(args.out, **stats)
    cells = sum(len(row) for row in policy.table.values())
    print(f"trained {stats['seconds']} s: {stats['games']} games, {stats['agent_steps']:,} agent steps, "
          f"{stats['scored_bids']:,} scored bids; {len(policy.table)} hand keys, {cells} cells -> {args.out}")
    if args.no_tournament:
        return 0
    if stale.exists():  # played with the table this run replaced: resuming it would report that table
        shutil.rmtree(stale)  # (inside runs/, checked above)
        print(f"removed the earlier tournament in {stale} (it played the table this run replaced)")
    referee = Path(sys.executable).with_name("referee")
    command = [str(referee) if referee.exists() else sys.executable, *([] if referee.exists() else
               ["-m", "referee"]), "run", str(TOURNAMENT)]
    print("$", " ".join(command), flush=True)
    return subprocess.run(command, check=False).returncode


if __name__ == "__main__":
    np.seterr(all="raise")
    sys.exit(main())
