"""Hostile input files get one line and exit 2, never an internal error, a hang or unbounded memory.

Every kind of input (a record, a tournament file, its ``secret_file`` and
``deals`` file, and the files of a tournament's output folder) is replaced by
``/dev/zero``, ``/dev/urandom`` (device nodes made in place, so the reader and
not a link check meets them), a FIFO with no writer, and a sparse file over
the kind's cap; a tournament file nested 5,000 deep or with a seed of
thousands of digits; a record whose header does not fit its game.  And the
writes of a resumed tournament never follow a link out of its output folder.

Real ``referee`` subprocesses throughout, each under a timeout (a FIFO that is
waited on is a hang: the timeout fails the test) and an address-space cap (an
unbounded read of /dev/zero fails with MemoryError, exit 70, instead of eating
the machine).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import built_once

ROOT = Path(__file__).resolve().parents[2]
RANDOM = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
MEMORY_CAP = 2 << 30  # bytes of address space for each referee run here
TIMEOUT_S = 60
DEVICES = {"zero": (1, 5), "urandom": (1, 9)}
HOSTILE = ["zero", "urandom", "fifo", "oversize"]

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="makes device nodes (needs root)")


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def referee(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=TIMEOUT_S, preexec_fn=_cap)


def assert_one_line(res, *fragments: str) -> None:
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("referee: error: "), res.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def make_hostile(path: Path, how: str, cap: int = 0) -> None:
    """Put ``how`` at ``path``: a device node, a FIFO, or a sparse regular file one byte over ``cap``."""
    if path.exists() or path.is_symlink():
        path.unlink()
    if how in DEVICES:
        os.mknod(path, stat.S_IFCHR | 0o644, os.makedev(*DEVICES[how]))
    elif how == "fifo":
        os.mkfifo(path)
    else:
        with open(path, "wb") as f:
            f.truncate(cap + 1)


def refusal(how: str) -> str:
    return {"zero": "is a character device", "urandom": "is a character device", "fifo": "is a FIFO",
            "oversize": "larger than"}[how]


# -- records ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def record(tmp_path_factory) -> Path:
    """A Back Alley record (made once per test run: the tests read it, or rewrite a copy)."""
    def build(folder):
        res = referee("play", "back-alley", "--bot", RANDOM + " 1", "--bot", RANDOM + " 2", "--seed", 7, "--record",
                      folder / "game.jsonl", "-q", "--sandbox", "off")
        assert res.returncode == 0, res.stderr

    return built_once(tmp_path_factory, "hostile-inputs-record", build) / "game.jsonl"


RECORD_MODES = [["replay", "{r}"], ["replay", "{r}", "--verify"], ["replay", "{r}", "--request", "1", "--history"],
                ["replay", "{r}", "--html", "{tmp}/page.html"], ["ask", "{r}", "1", "--bot", RANDOM]]


@pytest.mark.parametrize("how", HOSTILE)
def test_a_record_that_is_a_device_a_fifo_or_too_big_is_one_line_in_every_mode(tmp_path, how):
    path = tmp_path / "hostile.jsonl"
    make_hostile(path, how, 512 << 20)
    for mode in RECORD_MODES:
        res = referee(*[a.replace("{r}", str(path)).replace("{tmp}", str(tmp_path)) for a in mode])
        assert_one_line(res, str(path), refusal(how))


def rewrite(record: Path, tmp_path: Path, header_change=None, line_change=None) -> Path:
    lines = record.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    if header_change:
        header_change(header)
    body = lines[1:]
    if line_change:
        body = [line_change(json.loads(line)) if line.strip() else line for line in body]
        body = [json.dumps(x).encode() if isinstance(x, dict) else x for x in body]
    out = tmp_path / "crafted.jsonl"
    out.write_bytes(b"\n".join([json.dumps(header).encode(), *body]))
    return out


@pytest.mark.parametrize("seats", [0, 3, 100])
def test_a_header_whose_seats_do_not_fit_the_game_is_refused_by_every_mode(record, tmp_path, seats):
    def change(h):
        h["seats"] = [dict(h["seats"][0], seat=i, team=i % 2) for i in range(seats)]
    path = rewrite(record, tmp_path, header_change=change)
    for mode in RECORD_MODES:
        res = referee(*[a.replace("{r}", str(path)).replace("{tmp}", str(tmp_path)) for a in mode])
        assert_one_line(res, f"header seats: {seats} seats, the game with these options has 4")


def test_a_header_with_options_the_game_refuses_is_one_line(record, tmp_path):
    path = rewrite(record, tmp_path, header_change=lambda h: h.update(options={"max_redeals": "lots"}))
    for mode in (["replay", path, "--verify"], ["replay", path, "--request", 2, "--history"]):
        assert_one_line(referee(*mode), "header options: max_redeals")


def test_a_decision_for_seat_99_is_a_corrupt_line_not_an_index_error(record, tmp_path):
    def change(line):
        if line.get("record") == "decision" and line["n"] == 3:
            line["seat"] = 99
        return line
    path = rewrite(record, tmp_path, line_change=change)
    shown = referee("replay", path)
    assert shown.returncode == 0 and "record is corrupt at line" in shown.stdout and "seat 99" in shown.stdout
    assert_one_line(referee("replay", path, "--request", 3, "--history"), "request 3: ", "has requests 1 … 2")
    verify = referee("replay", path, "--verify")
    assert verify.returncode == 1 and verify.stdout.startswith("DIVERGENCE"), verify.stdout + verify.stderr


def test_a_nan_in_a_record_is_a_corrupt_line_and_the_html_page_is_written(record, tmp_path):
    crafted = rewrite(record, tmp_path)
    raw = crafted.read_bytes().replace(b'"ms":', b'"ms":NaN,"was":', 1)
    crafted.write_bytes(raw)
    page = tmp_path / "page.html"
    res = referee("replay", crafted, "--html", page)
    assert res.returncode == 0 and page.exists(), res.stdout + res.stderr
    shown = referee("replay", crafted)
    assert shown.returncode == 0 and "ms: Input should be a finite number" in shown.stdout


# -- tournament files ---------------------------------------------------------------------------------------

BASE = f"""game = "back-alley"
seed = 3
games_per_pairing = 1
jobs = 1
output = "out"
sandbox = "off"
[[entrants]]
name = "a"
command = "{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
cwd = "{ROOT}"
[[entrants]]
name = "b"
command = "{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
cwd = "{ROOT}"
"""


def tournament(tmp_path: Path, extra: str = "", text: str | None = None) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(text if text is not None else BASE.replace("seed = 3\n", f"seed = 3\n{extra}\n"))
    return path


@pytest.mark.parametrize("how", HOSTILE)
def test_a_tournament_file_that_is_a_device_a_fifo_or_too_big_is_one_line(tmp_path, how):
    path = tmp_path / "t.toml"
    make_hostile(path, how, 1 << 20)
    assert_one_line(referee("run", path, "--dry-run"), str(path), refusal(how))


@pytest.mark.parametrize("key,cap", [("secret_file", 4 << 10), ("deals", 64 << 20)])
@pytest.mark.parametrize("how", HOSTILE)
def test_a_secret_or_deals_file_that_is_a_device_a_fifo_or_too_big_is_one_line(tmp_path, key, cap, how):
    make_hostile(tmp_path / "input", how, cap)
    path = tournament(tmp_path, f'{key} = "input"')
    assert_one_line(referee("run", path, "--dry-run"), str(tmp_path / "input"), refusal(how))


@pytest.mark.parametrize("extra,fragment", [
    ("x = " + "[" * 5000 + "]" * 5000, "nested more than 64 levels deep"),
    ("x = " + "{ a = " * 5000 + "1" + " }" * 5000, "nested more than 64 levels deep"),
    ("[" + ".".join(["a"] * 5000) + "]", "nested more than 64 levels deep"),
    ("x = [" + "[" * 70 + "]" * 70 + "]", "nested more than 64 levels deep"),
])
def test_a_tournament_file_nested_deep_is_one_line(tmp_path, extra, fragment):
    path = tournament(tmp_path, text=BASE + extra + "\n")
    assert_one_line(referee("run", path, "--dry-run"), fragment)


@pytest.mark.parametrize("seed,fragment", [("9" * 5000, "Exceeds the limit (4300 digits)"),
                                           ("9" * 4000, "seed: Input should be less than"),
                                           ("-1", "seed: Input should be greater than or equal to 0")])
def test_a_seed_out_of_range_is_one_line(tmp_path, seed, fragment):
    path = tournament(tmp_path, text=BASE.replace("seed = 3", f"seed = {seed}"))
    assert_one_line(referee("run", path, "--dry-run"), fragment)


# -- the output folder ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished tournament's folder (its output folder is ``out`` beside the file; made once
    per test run: the tests resume or report on a copy)."""
    def build(folder):
        res = referee("run", tournament(folder))
        assert res.returncode == 0, res.stdout + res.stderr

    return built_once(tmp_path_factory, "hostile-inputs-finished", build)


def copy_of(finished: Path, tmp_path: Path) -> Path:
    shutil.copytree(finished, tmp_path / "t", symlinks=True)
    return tmp_path / "t"


OUTPUT_FILES = ["results.jsonl", "tournament.json", "secret", "records/000000.jsonl"]


@pytest.mark.parametrize("name", OUTPUT_FILES)
@pytest.mark.parametrize("how", ["zero", "urandom", "fifo"])
def test_a_resume_refuses_an_output_file_that_is_a_device_or_a_fifo(finished, tmp_path, name, how):
    folder = copy_of(finished, tmp_path)
    make_hostile(folder / "out" / name, how)
    assert_one_line(referee("run", folder / "t.toml"), name, "not a regular file")


@pytest.mark.parametrize("name,cap", [("results.jsonl", 4096 << 20), ("tournament.json", 64 << 20),
                                      ("secret", 4 << 10)])
def test_a_resume_refuses_an_output_file_over_its_cap(finished, tmp_path, name, cap):
    folder = copy_of(finished, tmp_path)
    make_hostile(folder / "out" / name, "oversize", cap)
    assert_one_line(referee("run", folder / "t.toml"), name, "larger than")


def test_a_resume_sets_aside_a_line_whose_record_is_oversize(finished, tmp_path):
    folder = copy_of(finished, tmp_path)
    make_hostile(folder / "out" / "records" / "000000.jsonl", "oversize", 512 << 20)
    res = referee("run", folder / "t.toml")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "records/000000.jsonl is unusable (larger than 512 MB" in res.stdout + res.stderr


@pytest.mark.parametrize("how", HOSTILE)
def test_report_refuses_a_standings_file_that_is_a_device_a_fifo_or_too_big(finished, tmp_path, how):
    folder = copy_of(finished, tmp_path)
    make_hostile(folder / "out" / "standings.json", how, 256 << 20)
    assert_one_line(referee("report", folder / "out", "--html", tmp_path / "r.html"), "standings.json", refusal(how))


# -- writes never leave the output folder ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["records", "stderr", "records/000000.jsonl", "results.jsonl",
                                  ".standings.json.tmp", "stderr/000000"])
def test_a_resume_does_not_write_through_a_link_out_of_the_folder(finished, tmp_path, name):
    folder = copy_of(finished, tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious").write_text("keep me\n")
    before = sorted(p.name for p in victim.iterdir())
    target = folder / "out" / name
    if target.is_dir():
        shutil.rmtree(target)
    elif target.exists():
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(victim if name in ("records", "stderr", "stderr/000000") else victim / "precious")
    # Two more deals per pairing: the resume plays and writes new games.
    (folder / "t.toml").write_text(BASE.replace("games_per_pairing = 1", "games_per_pairing = 2"))
    res = referee("run", folder / "t.toml")
    assert sorted(p.name for p in victim.iterdir()) == before, "a write left the output folder"
    assert (victim / "precious").read_text() == "keep me\n"
    assert_one_line(res, str(target), "is a symbolic link")


def test_report_does_not_write_replay_pages_through_a_link_out_of_the_folder(finished, tmp_path):
    """``referee report`` writes each game's replay page beside its record: with ``records`` a
    link to a folder elsewhere (holding the genuine records), no page may be written there."""
    folder = copy_of(finished, tmp_path)
    victim = tmp_path / "victim"
    shutil.copytree(folder / "out" / "records", victim)
    shutil.rmtree(folder / "out" / "records")
    (folder / "out" / "records").symlink_to(victim)
    before = sorted(p.name for p in victim.iterdir())
    res = referee("report", folder / "out", "--html", tmp_path / "r.html")
    assert res.returncode == 0, res.stdout + res.stderr
    assert sorted(p.name for p in victim.iterdir()) == before, "a replay page was written out of the folder"
    assert "written out of the output folder" in (tmp_path / "r.html").read_text()
