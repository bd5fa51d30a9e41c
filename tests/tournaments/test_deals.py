"""Fixed deal sets: `deals = "FILE"` (config.read_deals, schedule) and
`referee deals GAME -n N --seed S [-o FILE]` (referee_cli/deals.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tournaments.config import ConfigError, parse, read_deals, resolve
from tournaments.runner import run_tournament

from .helpers import FakePlay, result_lines
from .test_cli_run import referee

ROOT = Path(__file__).resolve().parents[2]
BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
OTHER = bytes([7]) * 32


def tournament(tmp_path: Path, out: str = "out", secret: bytes | None = None, **settings):
    data = {"game": "back-alley", "seed": 3, "games_per_pairing": 2, "output": str(tmp_path / out),
            "entrants": [{"name": n, "command": BOT} for n in ("a", "b", "c")]}
    data.update(settings)
    t = resolve(parse(data), tmp_path)
    return t.with_secret(secret) if secret is not None else t


def test_two_tournaments_with_one_deals_file_play_the_same_deals_whatever_their_secrets(tmp_path):
    (tmp_path / "deals.txt").write_text("# three deals\n11\n\n22  # the second\n33\n")
    mine = tournament(tmp_path, deals="deals.txt", secret=bytes(32)).schedule()
    theirs = tournament(tmp_path, deals="deals.txt", secret=OTHER, seed=99).schedule()
    assert [(g.teams, g.deal, g.seed) for g in mine] == [(g.teams, g.deal, g.seed) for g in theirs]
    assert {g.seed for g in mine if g.deal == 0} == {11} and {g.seed for g in mine if g.deal == 1} == {22}
    without = tournament(tmp_path, secret=bytes(32)).schedule()
    assert {g.seed for g in without}.isdisjoint({11, 22, 33})


def test_the_deals_file_is_hidden_from_bots_and_its_seeds_decide_the_identity(tmp_path):
    (tmp_path / "deals.txt").write_text("11\n22\n33\n")
    t = tournament(tmp_path, deals="deals.txt")
    assert (tmp_path / "deals.txt").resolve() in t.hidden_paths()
    assert t.identity()["deal_seeds"] == [11, 22], "only the seeds played"
    assert "deal_seeds" not in tournament(tmp_path).identity()


@pytest.mark.parametrize(("text", "message"), [
    ("11\nx12\n", "line 2: 'x12' is not a deal seed"),
    ("11\n-5\n", "line 2: '-5' is not a deal seed"),
    ("1 2\n", "line 1: '1 2' is not a deal seed"),
    (f"{2**63}\n", "line 1: '9223372036854775808' is not a deal seed"),
    ("# nothing\n\n", "holds no deal seeds"),
    ("11\n", "has 1 deal seeds; the tournament needs 2 (rounds x games_per_pairing)"),
])
def test_a_bad_deals_file_is_a_one_line_error_with_its_line_number(tmp_path, text, message):
    (tmp_path / "deals.txt").write_text(text)
    with pytest.raises(ConfigError, match="deals file ") as caught:
        tournament(tmp_path, deals="deals.txt")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_missing_deals_file_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="deals file .*nope.txt: no such file"):
        tournament(tmp_path, deals="nope.txt")


async def test_growing_a_run_may_use_more_of_its_deals_file_but_not_other_seeds(tmp_path):
    (tmp_path / "deals.txt").write_text("11\n22\n33\n44\n")
    await run_tournament(tournament(tmp_path, deals="deals.txt"), play=FakePlay())
    before = result_lines(tmp_path / "out")
    run = await run_tournament(tournament(tmp_path, deals="deals.txt", games_per_pairing=4), play=FakePlay())
    after = result_lines(tmp_path / "out")
    assert {i: after[i] for i in before} == before and run.played == 12
    assert {after[i]["seed"] for i in range(12, 24)} == {33, 44}
    (tmp_path / "deals.txt").write_text("11\n99\n33\n44\n")
    with pytest.raises(ConfigError, match="deal 1 of the deals file was 22, now 99"):
        await run_tournament(tournament(tmp_path, deals="deals.txt", games_per_pairing=4), play=FakePlay())


def test_a_tournament_plays_a_deals_file_made_by_the_deals_command(tmp_path):
    assert referee("deals", "back-alley", "-n", "1", "--seed", "4", "-o", tmp_path / "d.txt").returncode == 0
    (tmp_path / "t.toml").write_text(f'''
game = "back-alley"
deals = "d.txt"
output = "out"
jobs = 1
[[entrants]]
name = "a"
command = "{BOT}"
[[entrants]]
name = "b"
command = "{BOT}"
''')
    res = referee("run", tmp_path / "t.toml", "--quiet")
    assert res.returncode == 0, res.stderr
    assert f"deals from {tmp_path / 'd.txt'}" in res.stderr
    seeds = {json.loads(line)["seed"] for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()}
    assert seeds == set(read_deals(tmp_path / "d.txt"))


# Tries to read the deals file lying in its own folder, says what it found on
# stderr, then plays the first legal action.
PEEKING_BOT = '''
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        try:
            with open(os.path.join(here, "deals.txt")) as f:
                sys.stderr.write("deals: read %r\\n" % f.read())
        except OSError as exc:
            sys.stderr.write("deals: %s\\n" % type(exc).__name__)
        sys.stderr.flush()
        print(json.dumps({"type": "ready", "name": "peek"}), flush=True)
    elif msg["type"] == "request":
        print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
    elif msg["type"] == "game_over":
        break
'''


@pytest.mark.parametrize("sandbox", ["required", "off"])
async def test_a_sandboxed_bot_cannot_read_the_deals_file_even_in_its_own_folder(tmp_path, sandbox):
    from referee.match import bubblewrap

    if sandbox == "required" and bubblewrap.probe() is not None:
        pytest.skip("bubblewrap does not work here")
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "peek.py").write_text(PEEKING_BOT)
    (bots / "deals.txt").write_text("424242\n")
    t = tournament(tmp_path, deals="bots/deals.txt", games_per_pairing=1, sandbox=sandbox, jobs=1,
                   entrants=[{"name": n, "command": [sys.executable, str(bots / "peek.py")]} for n in ("a", "b")])
    run = await run_tournament(t)
    assert run.played == 2 and {r.seed for r in run.results.values()} == {424242}
    said = [p.read_text() for p in (tmp_path / "out" / "stderr").glob("*/*.log")]
    assert len(said) == 8
    if sandbox == "required":
        assert all("deals: " in text and "424242" not in text for text in said), said
    else:  # unsandboxed it can, so the sandboxed case means something
        assert all("deals: read '424242\\n'" in text for text in said), said
