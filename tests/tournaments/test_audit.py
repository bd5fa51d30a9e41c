"""Only authenticated results are published (#28 point 4, #25): `referee report` on an
output folder whose results.jsonl was edited, had a forged line put before the genuine
one, lost a line in the middle or at the end, or whose secret is missing; and a resume
that finds a deleted line.  A real `referee run` makes the folder."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tournaments.results import RESULT_VERSION, parse_results, result_mac

from ..conftest import built_once
from .helpers import folder_secret, result_lines

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "tournaments" / "examples" / "back-alley.toml"


def referee(*args, cwd=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or ROOT, timeout=timeout)


@pytest.fixture(scope="module")
def genuine(tmp_path_factory) -> Path:
    """Run once per test run: the tests read it, or a copy (``report`` writes beside the folder)."""
    def build(folder):
        res = referee("run", EXAMPLE, "--output", folder / "out", "-n", "1", "-q")
        assert res.returncode == 0, res.stderr

    return built_once(tmp_path_factory, "audit-genuine", build) / "out"


@pytest.fixture
def copy(genuine, tmp_path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(genuine, out)
    return out


def lines_of(out: Path) -> list[bytes]:
    return (out / "results.jsonl").read_bytes().splitlines(keepends=True)


def write_lines(out: Path, lines: list[bytes]) -> None:
    (out / "results.jsonl").write_bytes(b"".join(lines))


def report(out: Path) -> tuple[subprocess.CompletedProcess, str]:
    page = out.parent / "page.html"
    res = referee("report", out, "--html", page)
    assert res.returncode == 0, res.stderr
    notes = [line for line in res.stderr.splitlines() if line.startswith("referee: ")]
    assert len(notes) == 1, res.stderr  # one line on stderr
    return res, page.read_text()


def played(page: str) -> int:
    return int(re.search(r"<h1>[^<]*: (\d+) games</h1>", page)[1])


def games_shown(page: str) -> list[str]:
    return re.findall(r"<tr><td>(\d+)</td><td>\d+ / \d+</td>", page)


def swapped(line: bytes, scores=(9999, -9999)) -> bytes:
    entry = json.loads(line)
    entry["scores"], entry["winners"] = list(scores), [0]
    return json.dumps(entry).encode() + b"\n"


def test_a_genuine_folder_is_authenticated_and_its_standings_are_recomputed_exactly(genuine, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(genuine, out)  # report writes its page beside the folder: not beside the shared one
    res, page = report(out)
    assert "6 authenticated results, nothing rejected" in res.stderr
    assert 'data-authenticated="true"' in page and 'class="ok" id="authentication"' in page
    assert "does not match" not in page and played(page) == 6


def test_an_edited_score_is_rejected_and_not_published(copy):
    lines = lines_of(copy)
    lines[2] = swapped(lines[2])
    write_lines(copy, lines)
    res, page = report(copy)
    game = json.loads(lines[2])["game_id"]
    assert f"rejected (line 3 (game {game}): authenticator does not match" in res.stderr
    assert "9999" not in page and played(page) == 5 and str(game) not in games_shown(page)
    assert '<table class="rejected">' in page and "authenticator does not match" in page
    assert "standings.json does not match the authenticated results" in page  # the cache still counts it


def test_a_forged_line_before_the_genuine_one_is_rejected_and_the_genuine_one_counts(copy):
    lines = lines_of(copy)
    forged = swapped(lines[2])
    write_lines(copy, [*lines[:2], forged, *lines[2:]])
    res, page = report(copy)
    assert "1 line rejected (line 3" in res.stderr
    assert "9999" not in page and played(page) == 6
    assert "standings.json does not match" not in page  # what is shown equals the genuine standings


def test_a_deleted_line_in_the_middle_is_detected(copy):
    lines = lines_of(copy)
    seq = json.loads(lines[2])["seq"]
    write_lines(copy, [*lines[:2], *lines[3:]])
    res, page = report(copy)
    assert f"1 authentic line deleted (sequence numbers {seq} missing)" in res.stderr
    assert f"1 authentic line deleted (sequence numbers {seq} missing)" in page and played(page) == 5


def test_a_deleted_last_line_is_detected_from_the_cached_standings(copy):
    write_lines(copy, lines_of(copy)[:-1])
    res, page = report(copy)
    assert "it counts 1 game more than there are authenticated lines" in res.stderr
    assert played(page) == 5


def test_an_edited_standings_json_is_not_published(copy):
    data = json.loads((copy / "standings.json").read_text())
    data["entrants"][0]["wins"] += 100
    (copy / "standings.json").write_text(json.dumps(data))
    res, page = report(copy)
    assert "standings.json does not match the authenticated results" in res.stderr
    wins = {e["name"]: e["wins"] for e in json.loads((copy / "standings.json").read_text())["entrants"]}
    top = data["entrants"][0]
    assert f"{top['wins']}-{top['draws']}-{top['losses']}" not in page, "the edited figure was published"
    assert wins  # (the file itself is left alone: the report only reads)


def test_without_the_secret_the_page_says_nothing_was_checked(copy):
    (copy / "secret").unlink()
    res, page = report(copy)
    assert "not authenticated" in res.stderr
    assert 'data-authenticated="false"' in page and "could not be checked" in page


def test_a_resume_reports_a_deleted_line_plays_its_game_again_and_the_gap_stays_reported(copy):
    lines = lines_of(copy)
    gone = json.loads(lines[2])
    write_lines(copy, [*lines[:2], *lines[3:]])
    res = referee("run", EXAMPLE, "--output", copy, "-n", "1", "-q")
    assert res.returncode == 0, res.stderr
    assert f"1 authentic line deleted (sequence numbers {gone['seq']} missing)" in res.stderr, res.stderr
    assert "results_lines_deleted" not in res.stderr, "said once, not again as a log warning"
    after = parse_results((copy / "results.jsonl").read_bytes(), secret=folder_secret(copy))
    assert not after.rejected and gone["game_id"] in after.results
    assert after.lines[-1].result.seq == 7, "the numbering continues after the highest number"
    res, page = report(copy)
    assert f"sequence numbers {gone['seq']} missing" in res.stderr  # not silently healed
    assert played(page) == 6


def test_an_older_folder_with_version_2_lines_is_read_and_resumed(copy, genuine):
    """Lines written before seq existed (version 2, MAC'd without it) stay valid: no false
    alarm, and a resume appends numbered lines after them."""
    secret = folder_secret(copy)
    old = []
    for line in lines_of(copy):
        content = {k: v for k, v in json.loads(line).items() if k not in ("mac", "seq")} | {"v": 2}
        old.append(json.dumps({**content, "mac": result_mac(secret, content)}).encode() + b"\n")
    write_lines(copy, old)
    res, page = report(copy)
    assert "6 authenticated results, nothing rejected" in res.stderr, res.stderr
    write_lines(copy, old[:4])  # as if the run had stopped after four games
    res = referee("run", EXAMPLE, "--output", copy, "-n", "1", "-q")
    assert res.returncode == 0 and "deleted" not in res.stderr, res.stderr
    after = parse_results((copy / "results.jsonl").read_bytes(), secret=secret)
    assert [r.result.seq for r in after.lines] == [None] * 4 + [5, 6]
    assert result_lines(copy) == result_lines(genuine)
    assert RESULT_VERSION == 3
