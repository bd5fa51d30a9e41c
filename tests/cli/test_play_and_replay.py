"""`referee play` and `referee replay` as a user runs them: real processes."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import built_once

ROOT = Path(__file__).resolve().parents[2]
BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"


def referee(*args, cwd=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd or ROOT, timeout=timeout)


def played_once(tmp_path_factory, name: str, record: str, *args) -> tuple[Path, subprocess.CompletedProcess]:
    """``referee play ... --record FOLDER/record`` once per test run (the tests only read it, or a copy):
    the record's path and the play's result (its output saved beside it)."""
    def build(folder):
        res = referee("play", *args, "--record", folder / record)
        assert res.returncode == 0, res.stderr
        (folder / "res.json").write_text(json.dumps([res.stdout, res.stderr]))

    folder = built_once(tmp_path_factory, name, build)
    stdout, stderr = json.loads((folder / "res.json").read_text())
    return folder / record, subprocess.CompletedProcess([], 0, stdout, stderr)


@pytest.fixture(scope="module")
def ba_record(tmp_path_factory):
    return played_once(tmp_path_factory, "play-and-replay-ba-record", "ba.jsonl",
                       "back-alley", "--bot", BOT + " 1", "--bot", BOT + " 2", "--seed", 7)


def test_play_prints_a_deal_by_deal_table_and_the_result(ba_record):
    path, res = ba_record
    out = res.stdout
    # The header of each column, its lines put together (a narrow table heads "T0" over "total").
    header_lines = [[c.strip() for c in line.strip("┃").split("┃")] for line in out.splitlines()
                    if line.startswith("┃")]
    headers = [" ".join(filter(None, parts)) for parts in zip(*header_lines, strict=True)]
    assert "deal" in headers and "T0 total" in headers, headers
    rows = [line for line in out.splitlines() if line.startswith("│")]
    assert len(rows) == 25
    assert "Result:" in out and str(path) in out
    assert res.stderr == ""  # diagnostics only at warning level, none expected


def test_play_writes_each_bots_stderr_to_its_own_file(ba_record):
    path, _ = ba_record
    folder = path.with_name("ba.stderr")
    assert sorted(p.name for p in folder.iterdir()) == [f"seat{s}-random_bot.log" for s in range(4)]


def test_replay_shows_hands_bids_and_tricks(ba_record):
    path, _ = ba_record
    res = referee("replay", path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("Deal ") >= 25
    assert "trick 1:" in res.stdout and "hand 3:" in res.stdout
    assert "Result:" in res.stdout


def test_replay_of_one_deal_shows_only_that_deal(ba_record):
    path, _ = ba_record
    res = referee("replay", path, "--deal", 13)
    assert res.returncode == 0, res.stderr
    assert "Deal 13" in res.stdout and "Deal 12 " not in res.stdout and "Deal 14" not in res.stdout


def test_replay_for_one_seat_hides_the_other_hands(ba_record):
    path, _ = ba_record
    res = referee("replay", path, "--seat", 1)
    assert res.returncode == 0, res.stderr
    assert "hand 1:" in res.stdout
    for other in (0, 2, 3):
        assert f"hand {other}:" not in res.stdout


def test_replay_verify_accepts_a_true_record(ba_record):
    path, _ = ba_record
    res = referee("replay", path, "--verify")
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.startswith("OK: verified")


def test_replay_verify_reports_the_first_divergence(ba_record, tmp_path):
    path, _ = ba_record
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        entry = json.loads(line)
        if entry["record"] == "decision" and entry["decision"] == "play" and len(entry["legal"]) > 1:
            entry["action"] = next(a for a in entry["legal"] if a != entry["action"])
            lines[i] = json.dumps(entry)
            break
    bad = tmp_path / "tampered.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    res = referee("replay", bad, "--verify")
    assert res.returncode == 1
    assert res.stdout.startswith("DIVERGENCE:") and "line" in res.stdout


def test_a_truncated_record_replays_up_to_its_last_complete_line(ba_record, tmp_path):
    path, _ = ba_record
    raw = path.read_bytes()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(raw[: len(raw) // 2])  # almost surely mid-line
    res = referee("replay", cut)
    assert res.returncode == 0, res.stderr
    assert "truncated" in res.stdout and "Traceback" not in res.stderr
    res = referee("replay", cut, "--verify")
    assert res.returncode == 1 and "truncated" in res.stdout


def test_a_corrupt_line_is_reported_with_its_number(ba_record, tmp_path):
    path, _ = ba_record
    lines = path.read_text().splitlines()
    lines[40] = "{garbage"
    bad = tmp_path / "corrupt.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    res = referee("replay", bad)
    assert res.returncode == 0
    assert "corrupt at line 41" in res.stdout


@pytest.mark.parametrize(
    "args,needle",
    [
        (["play", "chess", "--bot", BOT, "--bot", BOT], "unknown game 'chess'"),
        (["play", "back-alley", "--bot", "no-such-program-xyz", "--bot", BOT], "not found on PATH"),
        (["play", "back-alley", "--bot", "./pyproject.toml", "--bot", BOT], "not an executable"),
        (["play", "back-alley", "--bot", f"{sys.executable} missing_bot.py", "--bot", BOT], "does not exist"),
        (["play", "back-alley", "--bot", BOT], "give --bot 2 times"),
        (["play", "back-alley", "--bot", BOT, "--bot", BOT, "--record", "/proc/nope/x.jsonl"], "cannot write record"),
        (["play", "pegs-and-jokers", "--players", "5", "--bot", BOT, "--bot", BOT], "players"),
        (["play", "back-alley", "--bot", BOT, "--bot", BOT, "--option", "max_redeals=-1"], "max_redeals"),
        (["replay", "pyproject.toml"], "not a match record"),
        (["replay", "no/such/file.jsonl"], "no such file"),
        (["replay", "tests"], "directory"),
        (["play", "back-alley", "--bot", BOT, "--bot", BOT, "--seed", "abc"], "seed"),
    ],
)
def test_user_errors_get_one_line_and_a_nonzero_exit(args, needle, tmp_path):
    res = referee(*args)
    assert res.returncode != 0
    assert "Traceback" not in res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    assert needle in lines[0], lines[0]


def test_an_empty_file_is_not_a_record(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    res = referee("replay", empty)
    assert res.returncode == 2 and "empty file" in res.stderr


def test_replay_seat_out_of_range_is_a_user_error(ba_record):
    path, _ = ba_record
    res = referee("replay", path, "--seat", 9)
    assert res.returncode == 2 and "seats 0" in res.stderr


# -- repeatable games: the README demo, {seed} in a bot command, records never overwritten ----------


def readme_demo_args() -> list[str]:
    """The arguments of the README's demo command (``.venv/bin/referee play ...``), as written."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```sh\n(python3 -m venv \.venv && .*?/referee play .*?)\n```", readme)
    assert block, "the README's demo command is gone"
    argv = shlex.split(block.group(1).split(" && ")[-1])
    assert argv[0] == ".venv/bin/referee"
    return argv[1:]


def actions(record: Path) -> list[str]:
    return [e["action"] for e in map(json.loads, record.read_text().splitlines()) if e["record"] == "decision"]


def header(record: Path) -> dict:
    return json.loads(record.read_text().splitlines()[0])


def test_the_readme_demo_prints_the_same_result_twice(tmp_path):
    shutil.copytree(ROOT / "sample_bots", tmp_path / "sample_bots")
    args = readme_demo_args()
    record = tmp_path / args[args.index("--record") + 1]
    first = referee(*args, cwd=tmp_path)
    second = referee(*args, cwd=tmp_path)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    again = record.with_name(record.stem + "-2.jsonl")
    assert f"exists; recording to {again.name}" in second.stderr  # the first record is kept
    shown = [[line for line in r.stdout.splitlines() if not line.startswith("Record:")] for r in (first, second)]
    assert "Result:" in first.stdout and shown[0] == shown[1]
    assert actions(record) == actions(again) and len(actions(record)) > 100


def test_play_fills_the_placeholders_of_a_bot_command_per_seat(tmp_path):
    from tournaments.schedule import bot_seed

    path = tmp_path / "p.jsonl"
    res = referee("play", "pegs-and-jokers", "--players", 4, "--bot", BOT + " {seed} --name s{seat}g{game}",
                  "--bot", BOT + " {seed} --name s{seat}g{game}", "--seed", 5, "--record", path, "-q")
    assert res.returncode == 0, res.stderr
    commands = [seat["command"] for seat in header(path)["seats"]]
    assert [c[-3:] for c in commands] == [[str(bot_seed(5, s, "")), "--name", f"s{s}g0"] for s in range(4)]
    assert len({c[-3] for c in commands}) == 4  # each seat its own seed
    assert "seats 0, 2: s0g0, s2g0" in res.stdout or "seats 1, 3: s1g0, s3g0" in res.stdout
    # `ask` fills them in as the game did: the re-asked bot gets its seat's seed.
    n = next(e["n"] for e in map(json.loads, path.read_text().splitlines()) if e["record"] == "decision")
    seat = next(e["seat"] for e in map(json.loads, path.read_text().splitlines()) if e["record"] == "decision")
    asked = referee("ask", path, n, "--bot", BOT + " {seed}")
    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert f"asked: {BOT} {bot_seed(5, seat, '')}\n" in asked.stdout


def test_play_never_overwrites_a_record_without_force(tmp_path):
    path = tmp_path / "g.jsonl"
    args = ("play", "pegs-and-jokers", "--players", 4, "--bot", BOT + " {seed}", "--bot", BOT + " {seed}",
            "--record", path, "-q")
    assert referee(*args, "--seed", 1).returncode == 0
    before = path.read_bytes()
    second = referee(*args, "--seed", 2)
    assert second.returncode == 0, second.stderr
    new = tmp_path / "g-2.jsonl"
    assert path.read_bytes() == before and header(new)["seed"] == 2
    assert second.stderr == f"referee: {path} exists; recording to {new} (--force overwrites)\n"
    assert (tmp_path / "g-2.stderr").is_dir()  # its bots' stderr beside it, not over the first game's
    third = referee(*args, "--seed", 3, "--force")
    assert third.returncode == 0 and third.stderr == "", third.stderr
    assert header(path)["seed"] == 3 and not (tmp_path / "g-3.jsonl").exists()


def test_play_with_the_default_record_name_keeps_every_game(tmp_path):
    args = ("play", "pegs-and-jokers", "--players", 4, "--bot", BOT, "--bot", BOT, "--seed", 4)
    runs = [referee(*args, cwd=tmp_path) for _ in range(3)]
    assert [r.returncode for r in runs] == [0, 0, 0]
    names = sorted(p.name for p in (tmp_path / "records").glob("*.jsonl"))
    assert names == ["pegs-and-jokers-seed4-2.jsonl", "pegs-and-jokers-seed4-3.jsonl", "pegs-and-jokers-seed4.jsonl"]
    assert "Record: records/pegs-and-jokers-seed4-3.jsonl" in runs[2].stdout


# -- one name for a bot: its ready name, wherever a bot is named ----------------------------------

FAULTY = """import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "Gamma", "events": False}), flush=True)
    elif m["type"] == "request":
        print(json.dumps({"type": "action", "id": m["id"], "action": "no such action"}), flush=True)
"""


@pytest.fixture(scope="module")
def named_record(tmp_path_factory):
    """A Back Alley game between bots whose ready names (Alpha, Beta) are not their command's (random_bot)."""
    return played_once(tmp_path_factory, "play-and-replay-named-record", "named.jsonl",
                       "back-alley", "--bot", BOT + " 1 --name Alpha", "--bot", BOT + " 2 --name Beta", "--seed", 3)


def test_play_and_replay_name_a_bot_by_its_ready_name(named_record):
    path, played = named_record
    result = next(line for line in played.stdout.splitlines() if line.startswith("Result:"))
    assert "(seats 0, 2: Alpha) wins" in result, result
    for args in ((), ("--summary",), ("--deal", 2), ("--seat", 1)):
        shown = referee("replay", path, *args)
        assert shown.returncode == 0, shown.stderr
        seats = [line for line in shown.stdout.splitlines() if line.startswith("  seat ")][:4]
        assert [line.split("  [")[0] for line in seats] == [
            "  seat 0 team 0: Alpha", "  seat 1 team 1: Beta", "  seat 2 team 0: Alpha", "  seat 3 team 1: Beta"]
        assert "random_bot.py 1 --name Alpha]" in seats[0]  # the command is still shown, as the command


def test_the_html_replay_and_ask_name_a_bot_by_its_ready_name(named_record, tmp_path):
    path, _ = named_record
    page = tmp_path / "r.html"
    assert referee("replay", path, "--html", page).returncode == 0
    html = page.read_text()
    assert "seats 0: Alpha, 1: Beta, 2: Alpha, 3: Beta" in html
    assert '"name": "Alpha"' in html or '"name":"Alpha"' in html
    assert '"name": "random_bot"' not in html and '"name":"random_bot"' not in html
    n = next(e["n"] for e in map(json.loads, path.read_text().splitlines())
             if e["record"] == "decision" and e["seat"] == 1)
    asked = referee("ask", path, n, "--bot", BOT)
    assert "\nrecorded: Beta " in asked.stdout, asked.stdout


def test_a_fault_line_names_the_bot_by_its_ready_name(tmp_path):
    bot = tmp_path / "faulty.py"
    bot.write_text(FAULTY)
    path = tmp_path / "f.jsonl"
    res = referee("play", "pegs-and-jokers", "--players", 4, "--bot", BOT, "--bot", f"{sys.executable} {bot}",
                  "--seed", 1, "--record", path, "--sandbox", "off")
    assert res.returncode == 3, res.stdout + res.stderr
    fault = next(line for line in res.stdout.splitlines() if line.startswith("fault:"))
    assert re.search(r", seat [13] \(Gamma\), ", fault), fault
    shown = referee("replay", path, "--summary")
    assert "  seat 1 team 1: Gamma  [" in shown.stdout and "  seat 3 team 1: Gamma  [" in shown.stdout, shown.stdout


def test_ask_from_never_overwrites_a_record_without_force(ba_record, tmp_path):
    path, _ = ba_record
    new = tmp_path / "what-if.jsonl"
    args = ("ask", path, 30, "--from", "--record", new, "-q")
    first = referee(*args, "--bot", BOT + " 3", "--bot", BOT + " 4")
    assert first.returncode == 0, first.stderr
    before = new.read_bytes()
    again = referee(*args, "--bot", BOT + " 5", "--bot", BOT + " 6")
    assert again.returncode == 0, again.stderr
    second = tmp_path / "what-if-2.jsonl"
    assert new.read_bytes() == before and second.is_file()
    assert again.stderr == f"referee: {new} exists; recording to {second} (--force overwrites)\n"
    forced = referee(*args, "--bot", BOT + " 5", "--bot", BOT + " 6", "--force")
    assert forced.returncode == 0 and forced.stderr == ""
    assert new.read_bytes() != before and actions(new) == actions(second)  # the same seeded bots again
    refused = referee("ask", path, 30, "--bot", BOT, "--force")
    assert refused.returncode == 2 and "--force goes with --from" in refused.stderr


def test_a_tournament_records_and_replays_its_bots_by_their_entrant_names(tmp_path):
    """The standings call them a and b; so do the record and its replay (not the program's ready name)."""
    out = tmp_path / "out"
    res = referee("run", "--game", "pegs-and-jokers", "--players", 4, "--entrant", f"a={BOT} {{seed}}",
                  "--entrant", f"b={BOT} {{seed}}", "-n", 1, "--output", out, "-q")
    assert res.returncode == 0, res.stderr
    record = out / "records" / "000000.jsonl"
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert sorted(set(lines[-1]["names"])) == ["a", "b"]  # the result line
    shown = referee("replay", record, "--summary")
    seats = [line.split("  [")[0] for line in shown.stdout.splitlines() if line.startswith("  seat ")]
    assert sorted({s.rsplit(": ", 1)[1] for s in seats}) == ["a", "b"], shown.stdout
