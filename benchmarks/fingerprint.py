"""Fingerprint of seeded games: one SHA-256 per game and player count.

    .venv/bin/python benchmarks/fingerprint.py [--games N] > before.txt
    ... change an engine ...
    .venv/bin/python benchmarks/fingerprint.py [--games N] > after.txt
    diff before.txt after.txt    # no output: the engines play exactly the same games

Plays N seeded games of every registered game and player count with a seeded
uniform random policy and hashes everything a game shows: the events of its
creation, and at every decision the seat, the decision kind, the legal list,
the seat's observation, the action and the events it produced (data and
audience), then the outcome.  A refactoring that keeps the rules keeps every
line of the output; the first line that differs names the game that changed.
Standard library + the project only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random

from referee.games import GAMES

#: Every player count of every game (options beyond the defaults).
CONFIGS = {
    "back-alley": [{}],
    "schmier": [{}],
    "pegs-and-jokers": [{"players": 4}, {"players": 6}, {"players": 8}],
}


def _feed(h, value) -> None:
    h.update(json.dumps(value, sort_keys=True, separators=(",", ":")).encode())
    h.update(b"\n")


def _events(h, events) -> None:
    for e in events:
        _feed(h, [e.data, None if e.to is None else list(e.to)])


def game_digest(name: str, options: dict, seed: int) -> str:
    spec = GAMES[name]
    options = spec.normalize_options(options)
    h = hashlib.sha256()
    state, events = spec.new_game(seed, options)
    _events(h, events)
    choice = random.Random(1_000_003 * seed + 17).choice
    while (seat := state.to_act()) is not None:
        legal = state.legal_actions()
        action = choice(legal)
        _feed(h, [seat, state.decision(), legal, state.observe(seat), action])
        _events(h, state.apply(action))
    _feed(h, state.outcome().to_json())
    return h.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    missing = sorted(set(GAMES) - set(CONFIGS))
    if missing:
        raise SystemExit(f"fingerprint.py: no CONFIGS for {', '.join(missing)}")
    for name, option_sets in CONFIGS.items():
        for options in option_sets:
            total = hashlib.sha256()
            for seed in range(args.seed, args.seed + args.games):
                digest = game_digest(name, options, seed)
                total.update(digest.encode())
            label = name + "".join(f" {k}={v}" for k, v in options.items())
            print(f"{label:28s} {args.games} games  {total.hexdigest()}", flush=True)


if __name__ == "__main__":
    main()
