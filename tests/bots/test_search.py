"""The search bots (sample_bots/search/): whole games through the referee, budgets, seeds.

Each game is played by ``referee play`` as a subprocess, the bots sandboxed as by
default, the search bot on one team against the heuristic bot (and the random bot
on Schmier's third team).  The strength of the search bots (search beats heuristic)
is measured by the SPRT runs of docs/reference-bots.md, not asserted here.
"""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from protocol.bot import Request
from referee.games import get_game
from referee.games.base import Event, GameState, InconsistentView, View

from .conftest import BOTS, HEURISTIC, ROOT

SEARCH = BOTS / "search"
sys.path.insert(0, str(SEARCH))
import pimc  # noqa: E402

BOT_FILE = {"back-alley": "back_alley.py", "schmier": "schmier.py", "pegs-and-jokers": "pegs_and_jokers.py"}
OPTIONS = {"back-alley": [], "schmier": [], "pegs-and-jokers": ["--players", "4"]}
REFEREE = [sys.executable, "-m", "referee"]


def search_command(game: str, *args: str) -> str:
    return f"{sys.executable} {SEARCH / BOT_FILE[game]} {' '.join(args)}"


def play(game: str, tmp_path: Path, seed: int, *search_args: str, record: str = "game.jsonl",
         decision_ms: int = 1000, options: tuple[str, ...] = ()) -> tuple[list[dict[str, Any]], Path]:
    """One game, search on team 0; the record's lines and the stderr folder."""
    bots = [search_command(game, *search_args), f"{sys.executable} {HEURISTIC[game]}"]
    if game == "schmier":
        bots.append(f"{sys.executable} {BOTS / 'random_bot.py'} {seed}")
    path = tmp_path / record
    argv = [*REFEREE, "play", game, *OPTIONS[game], *options, "--seed", str(seed), "--record", str(path),
            "--decision-ms", str(decision_ms), "-q"]
    for b in bots:
        argv += ["--bot", b]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return lines, path.with_suffix(".stderr")


def search_seats(lines: list[dict[str, Any]]) -> list[int]:
    ready = next(x for x in lines if x["record"] == "ready")
    return [s for s, name in enumerate(ready["names"]) if name == "search-v1"]


@pytest.mark.parametrize("game", sorted(BOT_FILE))
def test_the_search_bot_plays_a_whole_game_at_20_ms(game, tmp_path):
    """A whole game without a fault at a 20 ms budget, every search seat searching (no
    fall-back to the heuristic), its replies well inside the decision limit."""
    lines, stderr = play(game, tmp_path, 11, "--budget-ms", "20", "--seed", "1")
    result = lines[-1]
    assert result["record"] == "result" and "fault" not in result, result
    assert not any(x["record"] == "fault" for x in lines)
    assert result["outcome"]["status"] in ("win", "draw")
    seats = search_seats(lines)
    header = lines[0]
    teams = get_game(game).num_teams(header["options"])
    assert seats and all(s % teams == 0 for s in seats)
    for log in stderr.iterdir():
        assert "playing the heuristic's moves instead" not in log.read_text(), log.name
    ms = [x["ms"] for x in lines if x["record"] == "decision" and x["seat"] in seats and len(x["legal"]) > 1]
    assert ms, "the search bot made no choice"
    # A timeout would have been a fault (1 s); the budget keeps replies far below it.
    assert max(ms) < 1000
    assert sum(ms) / len(ms) < 20 * 5, f"mean {sum(ms) / len(ms):.0f} ms at a 20 ms budget"


@pytest.mark.slow
@pytest.mark.parametrize("game", sorted(BOT_FILE))
def test_a_seeded_search_capped_by_rollouts_replays_identically(game, tmp_path):
    """Same seed, same game, the rollout cap (not the clock) ending every search: the
    same decisions, move for move; another bot seed plays differently somewhere.
    (Pegs and Jokers keeps the heuristic's move unless a search of several samples
    says otherwise: it needs more rollouts for the seed to matter.)"""
    rollouts = "16" if game == "pegs-and-jokers" else "6"
    args = ("--seed", "5", "--rollouts", rollouts, "--budget-ms", "4000")
    # Pegs and Jokers to 80 turns: the whole game (155 decisions at seed 3) held a worker for 40 s of
    # a full run; the two bot seeds part at decision 8, so 80 turns show both properties.
    short = ("-o", "max_turns=80") if game == "pegs-and-jokers" else ()

    def actions(record: str, *a: str) -> list[tuple[int, str]]:
        lines, _ = play(game, tmp_path, 3, *a, record=record, decision_ms=20_000, options=short)
        return [(x["n"], x["action"]) for x in lines if x["record"] == "decision"]

    first = actions("a.jsonl", *args)
    assert actions("b.jsonl", *args) == first
    other = actions("c.jsonl", "--seed", "6", *args[2:])
    assert other != first


def test_budget_is_the_smaller_of_budget_ms_and_a_quarter_of_time_ms():
    seen: list[float] = []

    def choose(request: Request, view: View, rng: random.Random, budget: pimc.Budget) -> str:
        seen.append(budget.deadline - pimc.time.perf_counter())
        return request.legal[-1]

    bot = pimc.SearchBot("back-alley", pimc.parse_args("t", ["--budget-ms", "100"]), choose, lambda r: "x")
    state, _ = get_game("back-alley").new_game(1, {})
    bot.on_hello({"game": "back-alley", "options": {}})
    obs = state.observe(state.to_act())
    for time_ms, most in ((1000, 0.085 - pimc.MARGIN_S), (200, 0.0425 - pimc.MARGIN_S)):
        seen.clear()
        req = Request(1, state.to_act(), "bid", obs, state.legal_actions(), time_ms)
        assert bot.decide(req) == state.legal_actions()[-1]
        assert 0 < seen[0] <= most
    # One legal action: answered at once, no search.
    assert bot.decide(Request(2, 0, "play", obs, ["AS"], 1000)) == "AS" and len(seen) == 1


def test_a_view_no_state_fits_plays_the_fallback_and_says_so_once(monkeypatch):
    spec = get_game("back-alley")

    def no_state(view: View, rng: random.Random) -> GameState:
        raise InconsistentView("no hidden state fits")

    def choose(request: Request, view: View, rng: random.Random, budget: pimc.Budget) -> str:
        spec.determinize(view, rng)
        return request.legal[0]

    monkeypatch.setattr(spec, "determinize", no_state)
    bot = pimc.SearchBot("back-alley", pimc.parse_args("t", []), choose, lambda r: r.legal[1])
    bot.on_hello({"game": "back-alley", "options": {}})
    state, _ = spec.new_game(1, {})
    obs = state.observe(state.to_act())
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    for n in (1, 2):
        assert bot.decide(Request(n, state.to_act(), "bid", obs, state.legal_actions(), 1000)) == "1"
    assert err.getvalue().count("no hidden state fits; playing the heuristic's moves instead") == 1


# --- pimc on a toy game: known values, the rollout cap, common worlds ----------------


class Toy(GameState):
    """One decision; action ``k`` scores ``k`` plus the world's noise, shown by a
    ``deal_score`` event."""

    num_seats, num_teams = 2, 2

    def __init__(self, noise: float) -> None:
        self.noise = noise
        self.done = False

    def to_act(self) -> int | None:
        return None if self.done else 0

    def decision(self) -> str:
        return "play"

    def legal_actions(self) -> list[str]:
        return ["0", "3", "1"]

    def apply(self, action: str) -> list[Event]:
        self.done = True
        return [Event({"type": "deal_score", "value": int(action) + self.noise})]

    def observe(self, seat: int) -> dict[str, Any]:
        return {}

    def outcome(self) -> None:
        return None

    def clone(self) -> Toy:
        return Toy(self.noise)


class ToySpec:
    def __init__(self) -> None:
        self.worlds = 0

    def determinize(self, view: View, rng: random.Random) -> Toy:
        self.worlds += 1
        return Toy(rng.uniform(-10, 10))


class ToyPlug:
    def tracker(self, view: View) -> Any:
        return self

    def see(self, event: Any) -> None:
        pass

    def rollout_action(self, *a: Any) -> str:
        raise AssertionError("the toy game ends at once")

    def leaf_value(self, event: Any, team: int) -> float | None:
        return event["value"] if event["type"] == "deal_score" else None

    def horizon_value(self, state: GameState, team: int) -> float:
        return 0.0


def test_pimc_picks_the_best_mean_on_common_worlds_and_stops_at_the_cap():
    """The noise of a world is large (±10) against the actions' difference (1 to 3),
    but every action sees the same worlds: the best is found from few of them."""
    spec = ToySpec()
    budget = pimc.Budget(deadline=float("inf"), max_rollouts=30)
    view = View(0, {}, {})
    result = pimc.pimc(spec, view, ["0", "3", "1"], ToyPlug(), 0, random.Random(4), budget)  # type: ignore[arg-type]
    assert result.action == "3"
    assert result.rollouts == budget.rollouts == 30
    assert result.counts == {"0": 10, "3": 10, "1": 10} and spec.worlds == 10
    assert result.means["3"] - result.means["1"] == pytest.approx(2)
    # A bonus the rollouts do not see is added to the mean.
    budget = pimc.Budget(deadline=float("inf"), max_rollouts=30)
    result = pimc.pimc(spec, view, ["0", "3", "1"], ToyPlug(), 0, random.Random(4), budget,  # type: ignore[arg-type]
                       bonus={"0": 5.0})
    assert result.action == "0"


def test_pimc_past_its_deadline_returns_the_first_candidate_unsearched():
    budget = pimc.Budget(deadline=0.0)
    result = pimc.pimc(ToySpec(), View(0, {}, {}), ["1", "3"], ToyPlug(), 0,  # type: ignore[arg-type]
                       random.Random(1), budget)
    assert result.rollouts == 0 and result.means == {} and result.action == "1"


# --- the protocol side: long-lived, a pinned name ---------------------------------------


def test_one_process_plays_many_games_with_its_pinned_name():
    """Two games through one process (protocol version 2): two ``ready`` lines named
    ``search-v1`` saying ``games: many``, and a legal answer in each game."""
    spec = get_game("back-alley")
    lines = []
    legal_sets = []
    for table_seed in (1, 2):
        state, _ = spec.new_game(table_seed, {})
        seat = state.to_act()
        lines.append({"type": "hello", "protocol": 2, "game": "back-alley", "rules_version": "2",
                      "options": {"max_redeals": 10}, "seat": seat, "team": seat % 2, "seats": 4})
        legal = state.legal_actions()
        legal_sets.append(legal)
        lines.append({"type": "request", "id": 1, "seat": seat, "decision": state.decision(),
                      "state": state.observe(seat), "legal": legal, "time_ms": 1000})
        lines.append({"type": "game_over", "outcome": {}, "result": "win"})
    done = subprocess.run([sys.executable, str(SEARCH / "back_alley.py"), "--budget-ms", "30"],
                          input="".join(json.dumps(x) + "\n" for x in lines),
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    out = [json.loads(x) for x in done.stdout.splitlines()]
    assert [x["type"] for x in out] == ["ready", "action", "ready", "action"]
    assert all(x["name"] == "search-v1" and x["games"] == "many" for x in out[::2])
    assert out[1]["action"] in legal_sets[0] and out[3]["action"] in legal_sets[1]


def test_bad_options_are_refused_in_one_line():
    done = subprocess.run([sys.executable, str(SEARCH / "schmier.py"), "--budget-ms", "0"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "--budget-ms and --rollouts must be ≥ 1" in done.stderr
    assert "Traceback" not in done.stderr


PROBE = '''
import json, sys
from pathlib import Path
root = Path(sys.argv[1])
seen = {p: (root / p).exists() for p in ("referee/games/base.py", "referee/errors.py", "referee/match",
                                         "referee/match/runner.py", "referee_cli", "tournaments")}
from referee.games import get_game
seen["engine"] = get_game("back-alley").name
print(json.dumps(seen), file=sys.stderr, flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "probe", "events": False}), flush=True)
    elif msg["type"] == "request":
        print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
    elif msg["type"] == "game_over":
        break
'''


def test_the_sandbox_shows_a_bot_the_engines_and_nothing_else_of_the_referee(tmp_path):
    """A search bot imports the engine under the sandbox; the rest of the referee
    (the match runner, the CLI, tournaments/) stays out of its sight."""
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    bot = f"{sys.executable} {probe} {ROOT}"
    record = tmp_path / "g.jsonl"
    done = subprocess.run([*REFEREE, "play", "back-alley", "--bot", bot, "--bot", bot, "--seed", "1",
                           "--record", str(record), "--sandbox", "required", "-q"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    logs = sorted(record.with_suffix(".stderr").iterdir())
    assert len(logs) == 4
    for log in logs:
        seen = json.loads(log.read_text().splitlines()[0])
        assert seen == {"referee/games/base.py": True, "referee/errors.py": True, "referee/match": False,
                        "referee/match/runner.py": False, "referee_cli": False, "tournaments": False,
                        "engine": "back-alley"}, log.name


def test_a_prior_is_kept_unless_the_search_is_surely_better():
    sure = pimc._surely_better
    assert sure([{"a": 5, "b": 0}] * 3, "a", "b", {}, 2.0)  # the same gain on every world
    assert not sure([{"a": 10, "b": 0}, {"a": -8, "b": 0}, {"a": 4, "b": 0}], "a", "b", {}, 2.0)  # z ≈ 0.4
    assert not sure([{"a": 5, "b": 0}] * 2, "a", "b", {}, 2.0)  # two worlds say too little
    assert not sure([{"a": 5, "b": 0}, {"a": 5}, {"b": 0}, {"a": 5, "b": 0}], "a", "b", {}, 2.0)  # two shared
    assert sure([{"a": 0, "b": 0}] * 3, "a", "b", {"a": 1.0}, 2.0)  # the bonus counts
    assert not sure([{"a": 0, "b": 0}] * 3, "a", "b", {"b": 1.0}, 2.0)
    # Through pimc: on common worlds "3" beats the prior "1" by exactly 2 every time.
    budget = pimc.Budget(deadline=float("inf"), max_rollouts=12)
    result = pimc.pimc(ToySpec(), View(0, {}, {}), ["0", "3", "1"], ToyPlug(), 0,  # type: ignore[arg-type]
                       random.Random(2), budget, prior="1", min_z=2.0)
    assert result.action == "3"
    budget = pimc.Budget(deadline=float("inf"), max_rollouts=12)
    result = pimc.pimc(ToySpec(), View(0, {}, {}), ["0", "3", "1"], ToyPlug(), 0,  # type: ignore[arg-type]
                       random.Random(2), budget, prior="1", min_z=2.0, bonus={"1": 2.5})
    assert result.action == "1"


def test_a_rollout_running_at_its_deadline_is_abandoned():
    state, _ = get_game("pegs-and-jokers").new_game(1, {"players": 4})
    plug = ToyPlug()
    with pytest.raises(pimc.Late):
        pimc.rollout(state, plug, 0, random.Random(1), plug, [], 3, deadline=0.0)  # type: ignore[arg-type]
    # Through pimc: nothing past the deadline is counted.
    budget = pimc.Budget(deadline=0.0)
    result = pimc.pimc(get_game("pegs-and-jokers"), View(0, {}, {}), ["x"], plug, 0,  # type: ignore[arg-type]
                       random.Random(1), budget, abandon_late=True)
    assert result.rollouts == 0 and result.action == "x"


@pytest.mark.parametrize("game", ["back_alley", "schmier", "pegs_and_jokers"])
def test_search_v1s_frozen_rules_are_the_heuristic_v1_bot(game):
    """search-v1 carries a frozen copy of the heuristic rules (its own folder is all of
    sample_bots/ its sandbox shows it, and a pinned bot must not change under it). While
    the heuristic bot still calls itself ...-v1, the two are the same code: a change to the
    heuristic bot must bump its version, and then the copy stays what v1 was."""
    heuristic = (ROOT / "sample_bots" / "heuristic" / f"{game}.py").read_text()
    frozen = (SEARCH / f"rules_{game}.py").read_text()
    name = f"heuristic-{game.replace('_', '-')}-v1"
    if f'name="{name}"' not in heuristic:
        pytest.skip(f"the heuristic bot is past {name}: the frozen copy keeps v1")
    body = frozen[frozen.index('"""'):]  # after the copy's header comment
    assert body.replace('name="heuristic-' + game.replace("_", "-") + '"', f'name="{name}"') \
        == heuristic[heuristic.index('"""'):], f"sample_bots/heuristic/{game}.py changed: bump its version to v2"
