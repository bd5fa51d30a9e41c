"""Growing a finished run (output.py, schedule.plan): more deals, rounds or
entrants play only the new games and keep every finished one, with their ids;
a change that would alter a finished game is refused, naming it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tournaments.config import ConfigError, parse, resolve
from tournaments.runner import run_tournament

from .helpers import SECRET, FakePlay, result_lines
from .test_cli_run import BOT as REAL_BOT
from .test_cli_run import assert_user_error, referee

ROOT = Path(__file__).resolve().parents[2]
BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"


def tournament(out: Path, *, names=("bot1", "bot2", "bot3"), entrant_limits=None, **settings):
    data = {"game": "back-alley", "seed": 3, "games_per_pairing": 1, "jobs": 2, "output": str(out),
            "entrants": [{"name": n, "command": BOT, "args": ["{seed}"]} for n in names]}
    for name, limits in (entrant_limits or {}).items():
        next(e for e in data["entrants"] if e["name"] == name)["limits"] = limits
    data.update(settings)
    return resolve(parse(data), ROOT).with_secret(SECRET)


def key(line: dict) -> tuple:
    return (tuple(line["teams"]), line["deal"], line["seed"])


async def grow(tmp_path, first: dict, second: dict):
    """Run ``first``, then ``second`` on the same folder; the lines after each, and the second's run."""
    out = tmp_path / "out"
    await run_tournament(tournament(out, **first), play=FakePlay())
    before = result_lines(out)
    play = FakePlay()
    t = tournament(out, **second)
    run = await run_tournament(t, play=play)
    return before, result_lines(out), run, play


async def fresh(tmp_path, settings: dict) -> dict[int, dict]:
    """The lines of a run that had ``settings`` from the start (same secret: same cards)."""
    out = tmp_path / "fresh"
    await run_tournament(tournament(out, **settings), play=FakePlay())
    return result_lines(out)


def assert_grew(before, after, run, play, expected_games):
    # every finished game is kept as it was, under its id; the new ones come after
    assert {i: after[i] for i in before} == before
    new = sorted(set(after) - set(before))
    assert new == list(range(len(before), len(after)))
    assert run.resumed == len(before) and run.played == len(new) == len(play.calls)
    assert sorted(play.calls) == sorted(after[i]["seed"] for i in new), "only the new games were played"
    # the grown run holds exactly the games of a run that was this big from the start
    assert sorted(map(key, after.values())) == sorted(map(key, expected_games.values()))
    assert run.standings.games_played == run.standings.games_total == len(after)


async def test_raising_games_per_pairing_plays_only_the_new_deals(tmp_path):
    before, after, run, play = await grow(tmp_path, {}, {"games_per_pairing": 3})
    assert len(before) == 6 and len(after) == 18
    assert_grew(before, after, run, play, await fresh(tmp_path, {"games_per_pairing": 3}))
    assert {after[i]["deal"] for i in range(6, 18)} == {1, 2}


async def test_more_rounds_play_only_the_new_rounds(tmp_path):
    before, after, run, play = await grow(tmp_path, {"games_per_pairing": 2}, {"games_per_pairing": 2, "rounds": 2})
    assert len(before) == 12 and len(after) == 24
    assert_grew(before, after, run, play, await fresh(tmp_path, {"games_per_pairing": 4}))
    assert run.standings.paired[0].to_json()["deals"] == 4


async def test_adding_an_entrant_plays_only_its_games_and_keeps_the_ids(tmp_path):
    four = ("bot1", "bot4", "bot2", "bot3")  # listed anywhere: the games already played keep their ids
    before, after, run, play = await grow(tmp_path, {"games_per_pairing": 2}, {"games_per_pairing": 2, "names": four})
    assert len(before) == 12 and len(after) == 24
    assert_grew(before, after, run, play, await fresh(tmp_path, {"games_per_pairing": 2, "names": four}))
    assert all("bot4" in after[i]["teams"] for i in range(12, 24))
    assert {e.name for e in run.standings.entrants} == set(four)
    assert all(e.record.games == 12 for e in run.standings.entrants)


async def test_a_grown_run_resumes_as_grown_and_can_grow_again(tmp_path):
    out = tmp_path / "out"
    await run_tournament(tournament(out), play=FakePlay())
    await run_tournament(tournament(out, names=("bot1", "bot2", "bot3", "bot4")), play=FakePlay())
    again = FakePlay()
    run = await run_tournament(tournament(out, names=("bot1", "bot2", "bot3", "bot4")), play=again)
    assert again.calls == [] and run.resumed == 12
    history = json.loads((out / "tournament.json").read_text())["history"]
    assert [h["names"] for h in history] == [["bot1", "bot2", "bot3"], ["bot1", "bot2", "bot3", "bot4"]]
    before = result_lines(out)
    run = await run_tournament(tournament(out, names=("bot1", "bot2", "bot3", "bot4"), games_per_pairing=2),
                               play=FakePlay())
    after = result_lines(out)
    assert {i: after[i] for i in before} == before and len(after) == 24 and run.played == 12


async def test_a_folder_from_before_growing_existed_grows_too(tmp_path):
    # tournament.json without "history": the single shape its identity describes
    out = tmp_path / "out"
    await run_tournament(tournament(out), play=FakePlay())
    config = json.loads((out / "tournament.json").read_text())
    del config["history"]
    (out / "tournament.json").write_text(json.dumps(config))
    before, after, run, play = await grow(tmp_path, {}, {"games_per_pairing": 2})
    assert_grew(before, after, run, play, await fresh(tmp_path, {"games_per_pairing": 2}))


async def test_opening_a_gauntlet_to_a_round_robin_plays_the_missing_pairings(tmp_path):
    gauntlet = {"format": "gauntlet", "challengers": ["bot1"], "names": ("bot1", "bot2", "bot3", "bot4")}
    before, after, run, play = await grow(tmp_path, gauntlet, {"names": gauntlet["names"]})
    assert len(before) == 6 and len(after) == 12
    assert_grew(before, after, run, play, await fresh(tmp_path, {"names": gauntlet["names"]}))


@pytest.mark.parametrize(("second", "named"), [
    ({"seed": 4}, "seed was 3, now 4"),
    ({"options": {"max_redeals": 2}}, "options.max_redeals was"),
    ({"limits": {"decision_s": 2.0}}, "limits.decision_s was 1.0, now 2.0"),
    ({"entrant_limits": {"bot2": {"memory_mb": 512}}}, "entrant 'bot2'.limits added ({'memory_mb': 512})"),
    ({"names": ("bot1", "bot2")}, "entrant 'bot3' removed"),
    ({"games_per_pairing": 1, "rounds": 1}, "deals per pairing (rounds x games_per_pairing) was 2, now 1"),
    ({"games_per_pairing": 2, "format": "gauntlet", "challengers": ["bot1"]},
     "challengers were none (a round robin), now bot1: pairing bot2-bot3 would no longer be played"),
])
async def test_a_change_to_finished_games_is_refused_naming_it(tmp_path, second, named):
    out = tmp_path / "out"
    await run_tournament(tournament(out, games_per_pairing=2), play=FakePlay())
    before = (out / "results.jsonl").read_bytes(), (out / "tournament.json").read_bytes()
    settings = {"games_per_pairing": 2, **second}
    with pytest.raises(ConfigError, match="refusing to resume: ") as caught:
        await run_tournament(tournament(out, **settings), play=FakePlay())
    assert named in str(caught.value) and "\n" not in str(caught.value)
    assert ((out / "results.jsonl").read_bytes(), (out / "tournament.json").read_bytes()) == before


async def test_a_changed_command_is_refused(tmp_path):
    out = tmp_path / "out"
    await run_tournament(tournament(out), play=FakePlay())
    t = resolve(parse({"game": "back-alley", "seed": 3, "output": str(out), "entrants": [
        {"name": "bot1", "command": BOT, "args": ["{seed}", "--other"]},
        {"name": "bot2", "command": BOT, "args": ["{seed}"]}, {"name": "bot3", "command": BOT, "args": ["{seed}"]},
    ]}), ROOT).with_secret(SECRET)
    with pytest.raises(ConfigError, match=r"entrant 'bot1'.argv had 3 items, now 4"):
        await run_tournament(t, play=FakePlay())


async def test_an_added_entrant_may_have_limits_of_its_own(tmp_path):
    before, after, run, play = await grow(
        tmp_path, {}, {"names": ("bot1", "bot2", "bot3", "bot4"), "entrant_limits": {"bot4": {"decision_s": 3.0}}})
    assert len(after) == 12 and run.played == 6


def test_growing_from_the_command_line_with_real_bots(tmp_path):
    def args(seed=7):
        return ("run", "--game", "back-alley", "-e", f"a={REAL_BOT}", "-e", f"b={REAL_BOT}", "--seed", seed,
                "--output", tmp_path / "out", "--quiet", "--jobs", "1")
    first = referee(*args(), "-n", "1")
    assert first.returncode == 0, first.stderr
    assert "1 pairing x 1 deal x 2 seatings = 2 games" in first.stderr
    grown = referee(*args(), "-n", "2")
    assert grown.returncode == 0, grown.stderr
    assert "1 pairing x 2 deals x 2 seatings = 4 games (1 growth since the first run)" in grown.stderr
    assert "resuming, 2 already played" in grown.stderr
    lines = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert [line["game_id"] for line in lines] == [0, 1, 2, 3]
    standings = json.loads((tmp_path / "out" / "standings.json").read_text())
    assert standings["games_played"] == standings["games_total"] == 4
    refused = referee(*args(seed=8), "-n", "2")
    assert_user_error(refused, "refusing to resume: seed was 7, now 8")
