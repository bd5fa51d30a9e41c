"""Running a tournament with a scripted match runner: parallelism, durability,
resume, refusals (runner.py, output.py).  Real bot processes are in test_cli_run.py."""

from __future__ import annotations

import dataclasses
import json
import random
import sys
from pathlib import Path

import pytest
import trio

from tournaments.config import ConfigError, parse, resolve
from tournaments.output import OutputDir
from tournaments.results import GameResult, parse_results
from tournaments.runner import NoProgress, TournamentError, run_tournament
from tournaments.standings import compute_standings
from tournaments.standings_files import first_dealer

from .helpers import SECRET, FakePlay, folder_secret, result_lines

ROOT = Path(__file__).resolve().parents[2]
BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"


def tournament(out: Path, *, names=("bot1", "bot2", "bot3"), secret: bytes | None = None, **overrides):
    """``secret``: give one to deal the same cards in several output directories."""
    data = {"game": "back-alley", "seed": 3, "games_per_pairing": 2, "jobs": 2, "output": str(out),
            "entrants": [{"name": n, "command": BOT, "args": ["{seed}"]} for n in names]}
    data.update(overrides)
    t = resolve(parse(data), ROOT)
    return t if secret is None else t.with_secret(secret)


def standings_json(run) -> str:
    return json.dumps(run.standings.to_json(), sort_keys=True)


async def test_every_scheduled_game_is_played_once_with_its_record(tmp_path):
    t = tournament(tmp_path / "out", secret=SECRET)
    play = FakePlay()
    run = await run_tournament(t, play=play)
    assert t.total_games() == 12 and run.played == 12 and run.resumed == 0
    assert sorted(play.calls) == sorted(g.seed for g in t.schedule())
    lines = (tmp_path / "out" / "results.jsonl").read_bytes().splitlines()
    assert sorted(json.loads(line)["game_id"] for line in lines) == list(range(12))
    for game_id, r in result_lines(tmp_path / "out").items():
        assert (tmp_path / "out" / r["record"]).is_file()
        assert r["record"] == f"records/{game_id:06d}.jsonl"
    stored = json.loads((tmp_path / "out" / "tournament.json").read_text())
    assert stored["identity"] == json.loads(json.dumps(t.identity()))
    assert stored["resolved"]["total_games"] == 12


async def test_standings_are_a_function_of_results_jsonl_alone(tmp_path):
    t = tournament(tmp_path / "out")
    run = await run_tournament(t, play=FakePlay())
    parsed = parse_results((tmp_path / "out" / "results.jsonl").read_bytes(), secret=folder_secret(tmp_path / "out"))
    # the first dealer, for the position effects, is the game's own function of each deal seed
    again = compute_standings(t.names, t.num_teams, parsed.results.values(), games_total=t.total_games(),
                              first_dealer=first_dealer(t))
    assert again.to_json() == run.standings.to_json()
    assert run.standings.to_json()["complete"] is True


async def test_no_more_than_jobs_games_run_at_once(tmp_path, autojump_clock):
    t = tournament(tmp_path / "out", jobs=3)
    play = FakePlay(delay=lambda n: 1.0)
    await run_tournament(t, play=play)
    assert play.max_running == 3


async def test_results_do_not_depend_on_jobs_or_finishing_order(tmp_path, autojump_clock):
    runs = []
    for jobs, seed in [(1, 1), (4, 2), (3, 3)]:
        rng = random.Random(seed)
        out = tmp_path / f"out{jobs}"
        run = await run_tournament(tournament(out, jobs=jobs, secret=SECRET),
                                   play=FakePlay(delay=lambda n, rng=rng: rng.random()))
        runs.append((standings_json(run), result_lines(out)))
    assert runs[0] == runs[1] == runs[2]


async def test_a_fault_ends_only_its_own_game_and_is_reported_per_entrant(tmp_path):
    t = tournament(tmp_path / "out", names=("bot1", "crash", "bot2"))
    run = await run_tournament(t, play=FakePlay())
    assert run.played == 12
    rows = {e["name"]: e for e in run.standings.to_json()["entrants"]}
    assert rows["crash"]["forfeits"] == 8 and rows["crash"]["forfeits_by_reason"] == {"exited": 8}
    assert rows["bot1"]["opponent_forfeits"] == 4 and rows["bot1"]["forfeits"] == 0
    # last in the order; its rank number is shared (=1) while 2 units per pairing cannot tell them apart
    assert list(rows)[-1] == "crash"


async def test_rerunning_a_finished_tournament_plays_nothing(tmp_path):
    t = tournament(tmp_path / "out")
    first = await run_tournament(t, play=FakePlay())
    again_play = FakePlay()
    second = await run_tournament(tournament(tmp_path / "out", jobs=1), play=again_play)
    assert again_play.calls == [] and second.resumed == 12 and second.played == 0
    assert standings_json(first) == standings_json(second)


async def test_resume_cuts_a_torn_line_and_replays_unfinished_games(tmp_path):
    reference = await run_tournament(tournament(tmp_path / "ref", secret=SECRET), play=FakePlay())

    out = tmp_path / "out"
    await run_tournament(tournament(out, secret=SECRET), play=FakePlay())
    # Rebuild the state a crash could leave: 5 complete lines, a torn sixth,
    # the sixth game's record half written.
    results = out / "results.jsonl"
    lines = results.read_bytes().splitlines(keepends=True)
    torn_id = json.loads(lines[5])["game_id"]
    results.write_bytes(b"".join(lines[:5]) + lines[5][:40])
    record = OutputDir(out).record_path(torn_id)
    record.write_bytes(b'{"record":"header"}\n{"record":"dec')

    play = FakePlay()
    run = await run_tournament(tournament(out), play=play)
    assert len(play.calls) == 12 - 5 and run.resumed == 5
    assert sorted(result_lines(out)) == list(range(12))
    assert record.read_bytes().endswith(b'{"record":"result"}\n'), "the half-written record was redone"
    assert standings_json(run) == standings_json(reference)
    assert result_lines(out) == result_lines(tmp_path / "ref")


async def test_a_changed_config_is_refused_saying_what_differs(tmp_path):
    await run_tournament(tournament(tmp_path / "out"), play=FakePlay())
    with pytest.raises(ConfigError, match="refusing to resume: seed was 3, now 4"):
        await run_tournament(tournament(tmp_path / "out", seed=4), play=FakePlay())
    with pytest.raises(ConfigError, match="refusing to resume: entrant 'bot3' removed"):
        await run_tournament(tournament(tmp_path / "out", names=("bot1", "bot2")), play=FakePlay())
    with pytest.raises(ConfigError, match="decision_s was 1.0, now 2.0"):
        await run_tournament(tournament(tmp_path / "out", limits={"decision_s": 2.0}), play=FakePlay())


async def test_a_directory_that_is_not_a_tournament_output_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not empty"):
        await run_tournament(tournament(out), play=FakePlay())
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match="cannot create output directory"):
        await run_tournament(tournament(blocker / "out"), play=FakePlay())


async def test_authentic_result_lines_from_another_schedule_are_refused(tmp_path):
    # Written with this directory's secret, so by a referee: the directory mixes tournaments.
    out = tmp_path / "out"
    await run_tournament(tournament(out), play=FakePlay())
    before = (out / "results.jsonl").read_bytes()
    first = GameResult.from_json(json.loads(before.splitlines()[0]))
    with open(out / "results.jsonl", "ab") as f:
        f.write(dataclasses.replace(first, game_id=999).to_line(folder_secret(out)))
    with pytest.raises(ConfigError, match="game 999 does not belong"):
        await run_tournament(tournament(out), play=FakePlay())
    assert not (out / "results.rejected.jsonl").exists()


async def test_a_forged_line_for_a_game_outside_the_schedule_is_only_set_aside(tmp_path):
    out = tmp_path / "out"
    await run_tournament(tournament(out), play=FakePlay())
    before = (out / "results.jsonl").read_bytes()
    line = json.loads(before.splitlines()[0])
    line["game_id"] = 999  # its MAC no longer matches
    with open(out / "results.jsonl", "ab") as f:
        f.write(json.dumps(line).encode() + b"\n")
    play = FakePlay()
    run = await run_tournament(tournament(out), play=play)
    assert play.calls == [] and run.resumed == 12
    assert (out / "results.jsonl").read_bytes() == before
    (aside,) = (out / "results.rejected.jsonl").read_text().splitlines()
    assert json.loads(aside)["game_id"] == 999 and json.loads(json.loads(aside)["raw"]) == line


async def test_a_referee_bug_stops_the_tournament_and_keeps_finished_games(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(TournamentError, match="game 2: RuntimeError: engine exploded"):
        await run_tournament(tournament(out, jobs=1), play=FakePlay(fail_on=3))
    assert sorted(result_lines(out)) == [0, 1]
    play = FakePlay()
    run = await run_tournament(tournament(out, jobs=1), play=play)
    assert len(play.calls) == 10 and run.standings.to_json()["complete"]


async def test_a_three_team_tournament_plays_every_seating_of_each_triple(tmp_path):
    t = tournament(tmp_path / "out", game="schmier", names=("bot1", "bot2", "bot3", "bot4"), games_per_pairing=1)
    run = await run_tournament(t, play=FakePlay())
    assert run.played == 4 * 6
    data = run.standings.to_json()
    assert [(p["a"], p["b"], p["deals"]) for p in data["paired"]][:2] == [("bot1", "bot2", 2), ("bot1", "bot3", 2)]
    assert all(e["games"] == 18 for e in data["entrants"])


async def test_cancellation_keeps_every_finished_game_and_resume_plays_the_rest(tmp_path):
    out = tmp_path / "out"

    class CancelAfter(NoProgress):
        def __init__(self, scope: trio.CancelScope, n: int) -> None:
            self.scope, self.n = scope, n

        def advance(self, result) -> None:
            self.n -= 1
            if self.n == 0:
                self.scope.cancel()

    with trio.CancelScope() as scope:
        # games after the fourth never end by themselves
        play = FakePlay(delay=lambda n: 0.0 if n <= 4 else float("inf"))
        await run_tournament(tournament(out, jobs=2), play=play, progress=CancelAfter(scope, 4))
    assert scope.cancelled_caught
    assert sorted(result_lines(out)) == [0, 1, 2, 3]
    play = FakePlay()
    await run_tournament(tournament(out, jobs=2), play=play)
    assert len(play.calls) == 8 and sorted(result_lines(out)) == list(range(12))


async def test_standings_files_show_the_games_finished_so_far_during_a_run(tmp_path, monkeypatch):
    import tournaments.runner as runner

    monkeypatch.setattr(runner, "STANDINGS_EVERY_S", 0.0)  # rewrite after every game
    out = tmp_path / "out"
    seen: list[tuple[int, int]] = []

    class Watch(NoProgress):
        def __init__(self, scope: trio.CancelScope) -> None:
            self.scope, self.finished = scope, 0

        def advance(self, result) -> None:
            self.finished += 1
            if (out / "standings.json").exists():  # as written after an earlier game
                data = json.loads((out / "standings.json").read_text())
                seen.append((self.finished, sum(e["games"] for e in data["entrants"]) // 2))
            if self.finished == 8:
                self.scope.cancel()

    # Each game lasts 0.25 s, far longer than a standings write (milliseconds), so
    # the write after one game is done before the next game ends.  (With instant
    # games, games finished during a write are only counted by the next one.)
    with trio.CancelScope() as scope:
        await run_tournament(tournament(out, jobs=1), play=FakePlay(delay=lambda n: 0.25), progress=Watch(scope))
    # During the run the files show every game but the one just finished.
    assert seen == [(finished, finished - 1) for finished in range(2, 9)]
    # After the stop they count exactly the games in results.jsonl (two entrants per game).
    data = json.loads((out / "standings.json").read_text())
    assert sum(e["games"] for e in data["entrants"]) // 2 == len(result_lines(out)) >= 6
    assert (out / "standings.csv").read_text().startswith("rank,name,games")


# ---------------------------------------------------------------------------
# The tournament secret and authenticated results.


async def test_a_new_directory_gets_a_private_secret_that_deals_other_cards(tmp_path):
    one, two = FakePlay(), FakePlay()
    await run_tournament(tournament(tmp_path / "one"), play=one)
    await run_tournament(tournament(tmp_path / "two"), play=two)
    for out in ("one", "two"):
        assert (tmp_path / out / "secret").stat().st_mode & 0o777 == 0o600
    assert folder_secret(tmp_path / "one") != folder_secret(tmp_path / "two")
    assert not set(one.calls) & set(two.calls), "the same seed, other cards"
    same = FakePlay()
    await run_tournament(tournament(tmp_path / "three", secret=folder_secret(tmp_path / "one")), play=same)
    assert same.calls == one.calls and folder_secret(tmp_path / "three") == folder_secret(tmp_path / "one")
    assert result_lines(tmp_path / "three") == result_lines(tmp_path / "one")


async def test_resuming_with_another_secret_is_refused_and_with_its_own_is_not(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(TournamentError):
        await run_tournament(tournament(out, jobs=1), play=FakePlay(fail_on=3))  # stops after two games
    with pytest.raises(ConfigError, match="was started with another secret, refusing to resume"):
        await run_tournament(tournament(out, secret=bytes(32)), play=FakePlay())
    play = FakePlay()
    run = await run_tournament(tournament(out, secret=folder_secret(out)), play=play)
    assert run.resumed == 2 and len(play.calls) == 10


async def test_a_directory_whose_secret_is_gone_is_refused(tmp_path):
    out = tmp_path / "out"
    await run_tournament(tournament(out), play=FakePlay())
    (out / "secret").unlink()
    with pytest.raises(ConfigError, match="holds a tournament but no secret file"):
        await run_tournament(tournament(out), play=FakePlay())
    (out / "secret").write_text("not hex\n")
    with pytest.raises(ConfigError, match="a tournament secret is 64 hex digits"):
        await run_tournament(tournament(out), play=FakePlay())


async def test_a_first_run_stopped_after_making_its_secret_starts_again_with_that_secret(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "secret").write_text(SECRET.hex() + "\n")
    play = FakePlay()
    await run_tournament(tournament(out), play=play)
    assert sorted(play.calls) == sorted(g.seed for g in tournament(out, secret=SECRET).schedule())


def tamper(out: Path) -> dict[str, object]:
    """Damage a finished tournament the ways a crash or a bot could, in the middle
    of results.jsonl: a corrupt line, a line edited to claim a win, a forged extra
    "win" line for a game that has its own line, and an altered record file."""
    path = out / "results.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    ids = [json.loads(line)["game_id"] for line in lines]
    corrupt, edited, extra, record = 2, 5, 7, 9  # line indexes
    forged = json.loads(lines[edited])
    forged["scores"] = forged["scores"][::-1]
    forged["winners"] = [1 - forged["winners"][0]] if forged["winners"] else [0]
    win = json.loads(lines[extra])
    win.pop("mac")
    win["winners"], win["status"] = [0], "win"
    bad = {corrupt: lines[corrupt][:30] + b"\xff\x00#@\n", edited: json.dumps(forged).encode() + b"\n"}
    tampered = [bad.get(i, line) for i, line in enumerate(lines)]
    tampered.insert(extra, json.dumps(win).encode() + b"\n")
    path.write_bytes(b"".join(tampered))
    record_file = OutputDir(out).record_path(ids[record])
    record_file.write_bytes(record_file.read_bytes().replace(b"result", b"resulT"))
    replayed = {ids[corrupt], ids[edited], ids[record]}
    kept = [line for i, line in enumerate(lines) if ids[i] not in replayed]
    return {"replayed": replayed, "kept": kept, "rejected": [bad[corrupt], bad[edited], tampered[extra], lines[record]],
            "extra_game": ids[extra]}


async def test_corrupt_forged_and_stale_lines_cost_only_their_own_games(tmp_path):
    untouched = await run_tournament(tournament(tmp_path / "ref", secret=SECRET), play=FakePlay())
    out = tmp_path / "out"
    await run_tournament(tournament(out, secret=SECRET), play=FakePlay())
    damage = tamper(out)

    play = FakePlay()
    run = await run_tournament(tournament(out), play=play)
    games = tournament(out, secret=SECRET).schedule()
    assert sorted(play.calls) == sorted(games[i].seed for i in damage["replayed"]), "only those games, same deals"
    assert run.resumed == 12 - 3 and run.played == 3
    after = (out / "results.jsonl").read_bytes().splitlines(keepends=True)
    assert after[:9] == damage["kept"], "every other line kept, in its place"
    assert {json.loads(line)["game_id"] for line in after[9:]} == damage["replayed"]
    assert result_lines(out) == result_lines(tmp_path / "ref")
    assert standings_json(run) == standings_json(untouched)
    assert (out / "standings.json").read_bytes() == (tmp_path / "ref" / "standings.json").read_bytes()

    aside = [json.loads(line) for line in (out / "results.rejected.jsonl").read_text().splitlines()]
    assert [a["raw"].encode("utf-8", "surrogateescape") + b"\n" for a in aside] == damage["rejected"]
    assert ["not JSON" in aside[0]["problem"], "authenticator does not match" in aside[1]["problem"],
            aside[2]["problem"], "does not match the SHA-256" in aside[3]["problem"]] == \
        [True, True, "no authenticator (mac)", True]
    assert aside[2]["game_id"] == damage["extra_game"] not in damage["replayed"], "its genuine line stands"

    again = FakePlay()
    await run_tournament(tournament(out), play=again)
    assert again.calls == [] and len((out / "results.rejected.jsonl").read_text().splitlines()) == 4


async def test_a_missing_record_has_its_game_played_again(tmp_path):
    out = tmp_path / "out"
    await run_tournament(tournament(out), play=FakePlay())
    OutputDir(out).record_path(4).unlink()
    play = FakePlay()
    run = await run_tournament(tournament(out), play=play)
    assert run.played == 1 and OutputDir(out).record_path(4).is_file()
    (aside,) = [json.loads(line) for line in (out / "results.rejected.jsonl").read_text().splitlines()]
    assert aside["game_id"] == 4 and aside["problem"] == "its record records/000004.jsonl is missing"


async def test_a_rejected_line_is_reported_in_one_line_and_logged(tmp_path, monkeypatch):
    from tournaments import output

    out = tmp_path / "out"
    await run_tournament(tournament(out), play=FakePlay())
    path = out / "results.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    game = json.loads(lines[1])["game_id"]
    path.write_bytes(lines[0] + lines[1].replace(b'"mac":"', b'"mac":"0') + b"".join(lines[2:]))
    logged = []
    monkeypatch.setattr(output.log, "info", lambda event, **kw: logged.append((event, kw)))
    opened = output.open_output(tournament(out))
    assert opened.problems == [
        f"{path} line 2 (game {game}): authenticator does not match (forged or altered, or written with another "
        f"secret); moved to results.rejected.jsonl, game {game} will be played again"]
    assert logged == [("result_rejected", {"path": str(path), "line": 2, "game": game, "replayed": True,
                                           "problem": "authenticator does not match (forged or altered, "
                                                      "or written with another secret)"})]
    assert sorted(opened.done) == sorted(set(range(12)) - {game})


async def test_a_torn_tail_is_cut_when_rejected_lines_are_set_aside_too(tmp_path):
    out = tmp_path / "out"
    await run_tournament(tournament(out), play=FakePlay())
    path = out / "results.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    ids = [json.loads(line)["game_id"] for line in lines]
    path.write_bytes(lines[0] + b"garbage\n" + b"".join(lines[2:11]) + lines[11][:50])
    play = FakePlay()
    run = await run_tournament(tournament(out), play=play)
    assert len(play.calls) == 2 and run.resumed == 10
    after = path.read_bytes().splitlines(keepends=True)
    assert after[:10] == [lines[0], *lines[2:11]]
    assert sorted(json.loads(line)["game_id"] for line in after[10:]) == sorted([ids[1], ids[11]])
    (aside,) = (out / "results.rejected.jsonl").read_text().splitlines()
    assert json.loads(aside)["raw"] == "garbage", "a torn tail is cut, not set aside"
