"""`referee run` as a user runs it: real processes, real bots."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tournaments.results import parse_results

from ..conftest import PATIENT_FLAGS, built_once
from ..match.hostile import alive, count_lines, kill_when
from .helpers import SECRET, folder_secret, result_lines

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "tournaments" / "examples"
BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"


def referee_cmd(*args) -> list[str]:
    return [sys.executable, "-m", "referee", *map(str, args)]


def referee(*args, cwd=None, timeout=300):
    return subprocess.run(referee_cmd(*args), capture_output=True, text=True, cwd=cwd or ROOT, timeout=timeout)


def assert_user_error(res, *fragments):
    assert res.returncode == 2, (res.returncode, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("referee: error: ") and "Traceback" not in res.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    assert res.stdout == ""


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    """The Back Alley example, from an unrelated current directory (run once per test run:
    the tests read it, or resume a copy)."""
    def build(elsewhere):
        res = referee("run", EXAMPLES / "back-alley.toml", "--output", "out", "-n", "1", cwd=elsewhere)
        assert res.returncode == 0, res.stderr
        (elsewhere / "res.json").write_text(json.dumps([res.stdout, res.stderr]))

    elsewhere = built_once(tmp_path_factory, "example-run", build)
    stdout, stderr = json.loads((elsewhere / "res.json").read_text())
    return elsewhere / "out", subprocess.CompletedProcess([], 0, stdout, stderr)


def test_the_example_runs_out_of_the_box_from_any_directory(example_run):
    out, res = example_run
    assert "Standings (6 games)" in res.stdout and "Head to head" in res.stdout and "Duplicate deals" in res.stdout
    assert "Decision time (ms per reply)" in res.stderr  # measured: not on stdout, not in standings.json
    assert "Decision time" not in res.stdout
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert all(len(x["times"]) == 2 and x["times"][0][0] > 0 for x in lines)  # per team: replies, ms, max
    assert "times" not in (out / "standings.json").read_text()
    assert "back-alley: 3 entrants, 3 pairings x 1 deal x 2 seatings = 6 games" in res.stderr
    assert "games 6/6 (100%)" in res.stderr, "plain progress lines when stderr is not a terminal"
    for name in ("tournament.json", "results.jsonl", "standings.json", "standings.csv", "records/000005.jsonl"):
        assert (out / name).is_file(), name
    parsed = parse_results((out / "results.jsonl").read_bytes())
    assert sorted(parsed.results) == list(range(6)) and parsed.dropped == 0
    assert all(r.fault is None for r in parsed.results.values())
    standings = json.loads((out / "standings.json").read_text())
    assert standings["complete"] and sum(e["games"] for e in standings["entrants"]) == 12
    csv_lines = (out / "standings.csv").read_text().splitlines()
    assert csv_lines[0].startswith("rank,name,games,wins,draws,losses") and len(csv_lines) == 4


def test_a_changed_config_on_resume_is_refused_in_one_line(example_run, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(example_run[0], out)
    res = referee("run", EXAMPLES / "back-alley.toml", "--output", out, "-n", "1", "--seed", "4")
    assert_user_error(res, "refusing to resume", "seed was 3, now 4")


def test_resuming_a_finished_tournament_plays_nothing_and_prints_the_same_standings(example_run, tmp_path):
    first = example_run[1]
    out = tmp_path / "out"
    shutil.copytree(example_run[0], out)
    before = (out / "standings.json").read_bytes()
    res = referee("run", EXAMPLES / "back-alley.toml", "--output", out, "-n", "1", "--jobs", "1")
    assert res.returncode == 0, res.stderr
    assert "resuming, 6 already played" in res.stderr
    assert (out / "standings.json").read_bytes() == before
    assert res.stdout == first.stdout


def test_settings_can_be_given_as_flags_without_a_file(tmp_path):
    res = referee("run", "--game", "pegs-and-jokers", "--players", "4", "--entrant", f"a={BOT} {{seed}}",
                  "--entrant", f"b={BOT}", "-n", "1", "--output", tmp_path / "out", "--quiet")
    assert res.returncode == 0, res.stderr
    resolved = json.loads((tmp_path / "out" / "tournament.json").read_text())["resolved"]
    assert resolved["options"]["players"] == 4 and resolved["total_games"] == 2
    assert resolved["entrants"][0]["cwd"] == str(ROOT)
    # --quiet: one summary line on stdout, no tables
    assert res.stdout.count("\n") == 1 and res.stdout.startswith("pegs-and-jokers: 2 games; "), res.stdout
    assert "Standings" not in res.stdout + res.stderr and f"output: {tmp_path / 'out'} (" in res.stderr


@pytest.mark.parametrize("example", ["schmier", "pegs-and-jokers"])
def test_the_other_examples_are_valid(example):
    res = referee("run", EXAMPLES / f"{example}.toml", "--dry-run")
    assert res.returncode == 0, res.stderr
    assert f"{example}: " in res.stderr and res.stdout == ""


def test_a_crashing_bot_forfeits_only_its_own_games(tmp_path):
    crasher = f'{sys.executable} -c "import sys; sys.exit(3)"'
    res = referee("run", "--game", "back-alley", "--entrant", f"rnd={BOT}", "--entrant", f"crash={crasher}",
                  "--entrant", f"rnd2={BOT}", "-n", "1", "--output", tmp_path / "out", "-q",
                  *PATIENT_FLAGS)  # only the crasher may forfeit, however busy the machine
    assert res.returncode == 0, res.stderr
    rows = {e["name"]: e for e in json.loads((tmp_path / "out" / "standings.json").read_text())["entrants"]}
    assert rows["crash"]["forfeits"] == 4 and rows["crash"]["losses"] == 4
    assert rows["rnd"]["forfeits"] == rows["rnd2"]["forfeits"] == 0
    assert rows["rnd"]["games"] == 4 and rows["rnd"]["opponent_forfeits"] == 2
    faults = [line for line in res.stderr.splitlines() if line.startswith("fault: back-alley game ")]
    assert len(faults) == 4 and all("(crash)" in line and ": exited: " in line for line in faults), res.stderr
    summary = res.stderr.split("4 games ended by a forfeit:\n")[1].splitlines()[:4]
    assert sorted(line.strip() for line in summary) == sorted(faults)  # the same lines live and in the summary


@pytest.mark.parametrize(("args", "fragments"), [
    (["--game", "poker", "--entrant", f"a={BOT}"], ["unknown game 'poker'"]),
    (["--game", "schmier", "--entrant", f"a={BOT}", "--entrant", f"b={BOT}"], ["at least 3 entrants"]),
    (["--game", "back-alley", "--entrant", "a=no-such-bot-program", "--entrant", f"b={BOT}"],
     ["entrant 'a'", "not found"]),
    (["--game", "back-alley", "--entrant", "a=python3 missing.py", "--entrant", f"b={BOT}"],
     ["script 'missing.py' not found"]),
    (["--entrant", f"a={BOT}"], ["no game"]),
    (["--game", "back-alley"], ["no entrants"]),
    (["--game", "back-alley", "--entrant", "nameonly"], ["expected NAME=COMMAND"]),
    (["--game", "back-alley", "--entrant", f"a={BOT}", "--entrant", f"b={BOT}", "--secret", "abc"],
     ["--secret: a tournament secret is 64 hex digits"]),
])
def test_bad_settings_print_one_line_and_exit_2(tmp_path, args, fragments):
    assert_user_error(referee("run", *args, "--output", tmp_path / "out"), *fragments)
    assert not (tmp_path / "out").exists(), "refused before anything is written"


def test_a_bad_file_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "t.toml"
    bad.write_text('game = "back-alley"\nentrants = [{name = "a"}]\n')
    assert_user_error(referee("run", bad), "entrants.0.command: Field required")
    bad.write_text("game = \n")
    assert_user_error(referee("run", bad), "not valid TOML")
    assert_user_error(referee("run", tmp_path / "missing.toml"), "no such tournament file")


def test_an_unusable_output_is_refused_in_one_line(tmp_path):
    (tmp_path / "file").write_text("")
    assert_user_error(referee("run", "--game", "back-alley", "--entrant", f"a={BOT}", "--entrant", f"b={BOT}",
                              "--output", tmp_path / "file" / "out"), "cannot create output directory")


# ---------------------------------------------------------------------------
# Kill -9 at an arbitrary point, resume, and compare with an uninterrupted run.

KILL_TOML = """\
game = "back-alley"
seed = 11
games_per_pairing = 2
secret_file = "secret.hex"   # both directories deal the same cards
[limits]
decision_s = 20.0      # no timeouts on a busy machine: forfeits would break determinism
handshake_s = 60.0
[[entrants]]
name = "r1"
command = "{python} {bot} {{seed}}"
[[entrants]]
name = "r2"
command = "{python} {bot} {{seed}}"
[[entrants]]
name = "r3"
command = "{python} {bot} {{seed}}"
"""


def run_until_killed(toml: Path, out: Path, *, jobs: int, at_least: int) -> int:
    """Start a run and SIGKILL its process group once ``at_least`` games are in
    results.jsonl.  Returns the number of lines found at the kill."""
    proc = subprocess.Popen(referee_cmd("run", toml, "--output", out, "--jobs", jobs, "-q"), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    kill_when(proc, lambda: count_lines(out / "results.jsonl") >= at_least, timeout=240, group=True)
    return count_lines(out / "results.jsonl")


def unfinished_records(out: Path) -> set[int]:
    """Records of games that were running at the kill (no result line)."""
    done = set(parse_results((out / "results.jsonl").read_bytes()).results)
    return {int(p.stem) for p in (out / "records").glob("*.jsonl")} - done


@pytest.mark.slow
def test_sigkill_and_resume_give_exactly_the_standings_of_an_uninterrupted_run(tmp_path):
    toml = tmp_path / "t.toml"
    toml.write_text(KILL_TOML.format(python=sys.executable, bot=ROOT / "sample_bots" / "random_bot.py"))
    (tmp_path / "secret.hex").write_text(SECRET.hex())
    total = 3 * 2 * 2

    broken = tmp_path / "broken"
    first = run_until_killed(toml, broken, jobs=2, at_least=2)
    assert 2 <= first < total
    half_written = unfinished_records(broken)
    second = run_until_killed(toml, broken, jobs=2, at_least=first + 3)
    assert first + 3 <= second < total
    half_written |= unfinished_records(broken)
    assert half_written, "games were running at the kills, leaving records without results"
    res = referee("run", toml, "--output", broken, "--jobs", "2", "-q")
    assert res.returncode == 0, res.stderr
    assert f"resuming, {second} already played" in res.stderr

    whole = tmp_path / "whole"
    res_whole = referee("run", toml, "--output", whole, "--jobs", "1", "-q")
    assert res_whole.returncode == 0, res_whole.stderr

    assert sorted(result_lines(broken)) == list(range(total))
    assert result_lines(broken) == result_lines(whole)
    assert (broken / "standings.json").read_bytes() == (whole / "standings.json").read_bytes()
    assert (broken / "standings.csv").read_bytes() == (whole / "standings.csv").read_bytes()
    assert res.stdout == res_whole.stdout
    assert not any(p.name.startswith(".") for p in broken.iterdir()), "no temporary files left behind"


#: The example with one deal per pairing: 6 games, enough to stop a run after two and resume it.
SIX_GAMES = (EXAMPLES / "back-alley.toml", "-n", "1")


@pytest.mark.slow
def test_ctrl_c_stops_with_one_line_keeps_finished_games_and_resumes(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen(referee_cmd("run", *SIX_GAMES, "--output", out, "-q"), cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while count_lines(out / "results.jsonl") < 2:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.005)
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends to the foreground group
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("referee: interrupted;")
    kept = parse_results((out / "results.jsonl").read_bytes())
    assert kept.dropped == 0 and 2 <= len(kept.results) < 6
    res = referee("run", *SIX_GAMES, "--output", out, "-q")
    assert res.returncode == 0 and f"resuming, {len(kept.results)} already played" in res.stderr
    assert sorted(parse_results((out / "results.jsonl").read_bytes()).results) == list(range(6))


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (worker processes, sandboxes, bots), from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


@pytest.mark.parametrize(("signum", "group"), [(signal.SIGTERM, False), (signal.SIGTERM, True),
                                                (signal.SIGHUP, False)], ids=["term", "term-group", "hup"])
@pytest.mark.slow
def test_sigterm_or_sighup_stops_cleanly_ends_every_process_and_resumes(tmp_path, signum, group):
    """A service manager's `kill PID` (or one to the whole group), or a closed terminal: the
    games in play end with their bots, the finished ones are kept, one line says so, exit
    128 + the signal, and nothing the run started is left running."""
    out = tmp_path / "out"
    proc = subprocess.Popen(referee_cmd("run", *SIX_GAMES, "--output", out, "-q"), cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while count_lines(out / "results.jsonl") < 2 or not any("random_bot" in _cmdline(p)
                                                                 for p in descendants(proc.pid)):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.005)
        started = descendants(proc.pid)  # the workers and the bots in play
        if group:
            os.killpg(proc.pid, signum)
        else:
            os.kill(proc.pid, signum)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 128 + signum, err
    name = signal.Signals(signum).name
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith(f"referee: stopped by {name};"), err
    deadline = time.monotonic() + 10  # a sandbox's last process may take a moment to be reaped
    while (left := {p for p in started if alive(p)}) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"left running: {[_cmdline(p) for p in left]}"
    kept = parse_results((out / "results.jsonl").read_bytes())
    assert kept.dropped == 0 and 2 <= len(kept.results) < 6
    assert json.loads((out / "standings.json").read_text())["games_played"] == len(kept.results)
    res = referee("run", *SIX_GAMES, "--output", out, "-q")
    assert res.returncode == 0 and f"resuming, {len(kept.results)} already played" in res.stderr
    assert sorted(parse_results((out / "results.jsonl").read_bytes()).results) == list(range(6))


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


# ---------------------------------------------------------------------------
# The tournament secret and authenticated results, with real bots.

# Pegs and Jokers cut at 60 turns: eighteen games are played for these tests (three runs of six),
# and what they check (seeds, schedules, MACs, records, standings) does not depend on a game's length.
SECRET_TOML = """\
game = "pegs-and-jokers"
options = {{ players = 4, max_turns = 60 }}
seed = 5
games_per_pairing = 1
[limits]
decision_s = 20.0      # no timeouts on a busy machine: forfeits would break determinism
handshake_s = 60.0
[[entrants]]
name = "r1"
command = "{bot} {{seed}}"
[[entrants]]
name = "r2"
command = "{bot} {{seed}}"
[[entrants]]
name = "r3"
command = "{bot} {{seed}}"
"""


@pytest.fixture(scope="module")
def secret_runs(tmp_path_factory):
    """One tournament run three times: in ``a``; in ``b`` (same file, own secret);
    in ``c`` with ``--secret`` of ``a``."""
    def build(root):
        toml = root / "t.toml"
        toml.write_text(SECRET_TOML.format(bot=BOT))
        for name in "ab":
            res = referee("run", toml, "--output", root / name, "-q")
            assert res.returncode == 0, res.stderr
        res = referee("run", toml, "--output", root / "c", "--secret", folder_secret(root / "a").hex(), "-q")
        assert res.returncode == 0, res.stderr

    root = built_once(tmp_path_factory, "secret-runs", build)  # made once per test run: tests read it
    return root / "t.toml", {name: root / name for name in "abc"}


def seeds(out: Path) -> dict[int, int]:
    return {i: r["seed"] for i, r in result_lines(out).items()}


def public(out: Path) -> dict[int, tuple]:
    return {i: (r["pairing"], r["deal"], r["arrangement"], r["teams"]) for i, r in result_lines(out).items()}


@pytest.mark.slow
def test_a_new_directory_deals_other_cards_on_the_same_schedule_unless_given_the_secret(secret_runs):
    _, outs = secret_runs
    a, b, c = outs["a"], outs["b"], outs["c"]
    assert sorted(seeds(a)) == list(range(6)) and public(a) == public(b) == public(c)
    assert folder_secret(a) != folder_secret(b)
    assert not set(seeds(a).values()) & set(seeds(b).values()), "same tournament file, other cards"
    assert folder_secret(c) == folder_secret(a) and seeds(c) == seeds(a)
    assert result_lines(c) == result_lines(a), "same secret, same seeded bots: same games"
    assert (c / "standings.json").read_bytes() == (a / "standings.json").read_bytes()


def test_the_secret_file_is_private_and_written_nowhere_else(secret_runs):
    _, outs = secret_runs
    for out in outs.values():
        secret = out / "secret"
        assert secret.stat().st_mode & 0o777 == 0o600
        text = secret.read_text()
        assert len(text.strip()) == 64 and "secret" not in json.loads((out / "tournament.json").read_text())
        elsewhere = [p for p in out.rglob("*") if p.is_file() and p != secret]
        assert len(elsewhere) > 6
        assert not [p for p in elsewhere if text.strip().encode() in p.read_bytes()]


def test_resuming_with_another_secret_is_refused_in_one_line(secret_runs, tmp_path):
    toml, outs = secret_runs
    a = tmp_path / "a"
    shutil.copytree(outs["a"], a)  # resumed below: a copy, as the other tests read the original
    before = (a / "results.jsonl").read_bytes()
    res = referee("run", toml, "--output", a, "--secret", folder_secret(outs["b"]).hex())
    assert_user_error(res, f"{a} was started with another secret, refusing to resume")
    assert (a / "results.jsonl").read_bytes() == before
    res = referee("run", toml, "--output", a, "--secret", folder_secret(outs["a"]).hex(), "-q")
    assert res.returncode == 0 and "resuming, 6 already played" in res.stderr


def test_damaged_results_and_records_cost_only_their_own_games(secret_runs, tmp_path):
    toml, outs = secret_runs
    out = tmp_path / "damaged"
    shutil.copytree(outs["a"], out)
    path = out / "results.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    ids = [json.loads(line)["game_id"] for line in lines]
    # Line 2 corrupt; line 4 edited to swap the scores and the winner, team 0's score raised by one
    # so that a tie is changed too (its MAC no longer matches); a forged "win" line without a MAC
    # before line 5; game of line 6's record altered.
    edited = json.loads(lines[3])
    swapped = edited["scores"][::-1]
    edited["scores"], edited["winners"] = [swapped[0] + 1, *swapped[1:]], [1 - w for w in edited["winners"]]
    assert edited != json.loads(lines[3])
    win = {k: v for k, v in json.loads(lines[4]).items() if k != "mac"} | {"status": "win", "winners": [0]}
    damaged = [lines[0], b'{"game_id": 3, "sta\xfftus"\n', lines[2], json.dumps(edited).encode() + b"\n",
               json.dumps(win).encode() + b"\n", lines[4], lines[5]]
    path.write_bytes(b"".join(damaged))
    record = out / "records" / f"{ids[5]:06d}.jsonl"
    record.write_bytes(record.read_bytes().replace(b'"record":"decision"', b'"record":"decisioN"', 1))
    replayed = {ids[1], ids[3], ids[5]}

    res = referee("run", toml, "--output", out, "-q")
    assert res.returncode == 0, res.stderr
    reports = [line for line in res.stderr.splitlines() if line.startswith("referee: ")]
    assert reports == [
        # the authentic line 2 is gone (garbage in its place): its seq number is missing
        f"referee: {path}: 1 authentic line deleted (sequence numbers 2 missing); their games will be played "
        "again (the gap stays in the file: every resume and report names it)",
        f"referee: {path} line 2: not JSON; moved to results.rejected.jsonl",
        f"referee: {path} line 4 (game {ids[3]}): authenticator does not match (forged or altered, or written "
        f"with another secret); moved to results.rejected.jsonl, game {ids[3]} will be played again",
        f"referee: {path} line 5 (game {ids[4]}): no authenticator (mac); moved to results.rejected.jsonl",
        f"referee: {path} line 7 (game {ids[5]}): its record records/{ids[5]:06d}.jsonl does not match the "
        f"SHA-256 in the line (altered after the game); moved to results.rejected.jsonl, "
        f"game {ids[5]} will be played again",
    ]
    assert "resuming, 3 already played" in res.stderr
    after = path.read_bytes().splitlines(keepends=True)
    assert after[:3] == [lines[0], lines[2], lines[4]], "every other line kept, in its place"
    assert {json.loads(line)["game_id"] for line in after[3:]} == replayed and len(after) == 6
    assert result_lines(out) == result_lines(outs["a"]), "the same deals and the same games again"
    assert (out / "standings.json").read_bytes() == (outs["a"] / "standings.json").read_bytes()
    assert (out / "standings.csv").read_bytes() == (outs["a"] / "standings.csv").read_bytes()
    aside = [json.loads(line) for line in (out / "results.rejected.jsonl").read_text().splitlines()]
    assert [a["raw"].encode("utf-8", "surrogateescape") + b"\n" for a in aside] == [
        damaged[1], damaged[3], damaged[4], lines[5]]
