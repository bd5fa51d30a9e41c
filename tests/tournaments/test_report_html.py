"""report.html in a real browser (Debian chromium through Playwright), and `referee report`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from tournaments.html_report import write_html_report
from tournaments.sprt import SprtRun, SprtSpec
from tournaments.standings import compute_standings

from .helpers import result

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]


def tournament_output(tmp_path):
    """An output folder with results.jsonl, a record for game 0 and an HTML replay for game 1;
    12 complete duplicate units and one game of a 13th deal (its other seating not played)."""
    ab = ("new", "old")
    games = []
    for deal in range(13):
        for arrangement, teams in enumerate((("new", "old"), ("old", "new"))):
            if deal == 12 and arrangement == 1:
                break
            new_team = teams.index("new")
            scores = [40 + deal, 20] if new_team == 0 else [20, 40 + deal]
            if deal == 3:
                scores = scores[::-1]
            games.append(result(len(games), teams, tuple(scores), deal=deal, arrangement=arrangement, pairing=ab))
    out = tmp_path / "out"
    (out / "records").mkdir(parents=True)
    with open(out / "results.jsonl", "w") as f:
        for g in games:
            line = {**g.to_json(), "record": f"records/{g.game_id:06d}.jsonl"}
            f.write(json.dumps(line) + "\n")
    (out / "records" / "000000.jsonl").write_text("{}\n")
    (out / "records" / "000001.html").write_text("<html>replay</html>")
    sprt = SprtRun.for_entrants(SprtSpec(0, 100), ["new", "old"], 2, max_games=100)
    s = compute_standings(["new", "old"], 2, games, games_total=100)
    s.extra["sprt"] = sprt.status(games).to_json(finished=False)
    s.extra["sprt"]["history"] = [[g, v] for g, v in sprt.history(games)]
    data = s.to_json()
    (out / "standings.json").write_text(json.dumps(data))
    return out, data


def test_the_page_in_a_real_browser(tmp_path):
    if not os.path.exists(CHROMIUM):
        pytest.fail("chromium is needed for the browser test (apt-get install chromium)")
    out, data = tournament_output(tmp_path)
    page_path = write_html_report(out, out / "report.html")
    text = page_path.read_text()
    assert "http://" not in text and "https://" not in text and "<script" not in text  # self-contained
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            page.goto(page_path.as_uri())
            rows = page.locator("table.standings tbody tr")
            assert rows.count() == 2
            first = rows.nth(0).locator("td")
            new = next(e for e in data["entrants"] if e["name"] == "new")
            assert first.nth(1).inner_text() == "new"
            assert first.nth(3).inner_text() == f"{new['wins']}-{new['draws']}-{new['losses']}" == "23-0-2"
            e = new["elo"]  # 23 of 25 won: an interval open above, printed as its lower bound, no "inf"
            assert e["hi"] is None and e["lo"] is not None
            assert first.nth(4).inner_text() == f"{new['score']:.1%}" == "92.0%"  # 23 of 25: what orders the table
            assert first.nth(5).inner_text() == f"{e['elo']:+.0f} ≥{e['lo']:+.0f} [{e['lo']:+.0f}, +∞] (!)"
            assert new["elo"]["los"] > 0.9995 and first.nth(6).inner_text() == ">99.9%"  # not a rounded 100.0%
            # the Elo error bars: one per entrant, carrying the standings' numbers
            bars = page.locator("svg.elo-chart g.elo-bar")
            assert bars.count() == 2
            assert float(bars.nth(0).get_attribute("data-elo")) == pytest.approx(new["elo"]["elo"], abs=1e-3)
            assert float(bars.nth(0).get_attribute("data-lo")) == pytest.approx(new["elo"]["lo"], abs=1e-3)
            box = bars.nth(0).locator("line.bar").bounding_box()
            assert box is not None and box["width"] > 10  # drawn, with a visible extent
            # the SPRT: LLR line over games played and its two bounds
            assert page.locator("svg.llr-chart polyline.llr").count() == 1
            assert float(page.locator("svg.llr-chart line.bound.upper").get_attribute("data-llr")) == \
                pytest.approx(data["sprt"]["upper"], abs=1e-3)
            assert page.locator("svg.llr-chart line.bound.lower").count() == 1
            text = page.locator("p.sprt").nth(1).inner_text()
            assert "LLR" in text and "after 12 units (25 games played)" in text
            # the chart says what the text says: 12 units (its axis) and 25 games played, not 24
            chart = page.locator("svg.llr-chart")
            assert (chart.get_attribute("data-units"), chart.get_attribute("data-games")) == ("12", "25")
            caption = chart.locator("text.llr-axis").text_content()
            assert "after 12 units (25 games played)" in caption and "24" not in caption
            # seat effects, endings, and the games with their links
            assert page.locator("svg.positions-chart g.position-bar").count() >= 1
            assert page.locator("table.endings tbody tr").count() >= 1
            assert page.locator("table.games tbody tr").count() == 25
            assert page.locator("a.replay").count() == 1
            assert page.locator("a.replay").get_attribute("href") == "records/000001.html"
            assert page.locator("a.record").count() == 1  # game 0's record is no game: no replay page for it
            assert page.locator("a.record").get_attribute("href") == "records/000000.jsonl"
            assert "no replay page" in page.locator("a.record").get_attribute("title")
            page.locator("a.replay").click()
            assert page.url.endswith("records/000001.html") and "replay" in page.content()
        finally:
            browser.close()


def test_referee_report_writes_the_page_and_refuses_a_folder_without_standings(tmp_path):
    out, _ = tournament_output(tmp_path)
    target = tmp_path / "elsewhere" / "page.html"
    target.parent.mkdir()
    done = subprocess.run([sys.executable, "-m", "referee", "report", str(out), "--html", str(target)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    page = target.read_text()
    assert "../out/records/000001.html" in page  # links stay right from where the page is
    bad = subprocess.run([sys.executable, "-m", "referee", "report", str(tmp_path / "nothing"), "--html",
                          str(target)], capture_output=True, text=True)
    assert bad.returncode == 2 and "standings.json not found" in bad.stderr and "Traceback" not in bad.stderr


BOT = f"{sys.executable} {Path(__file__).resolve().parents[2] / 'sample_bots' / 'random_bot.py'} {{seed}}"


def run_two_games(out):
    """A real tournament of two games (two random bots, one deal in both seatings)."""
    done = subprocess.run([sys.executable, "-m", "referee", "run", "--game", "back-alley", "-e", f"a={BOT}",
                           "-e", f"b={BOT}", "-n", "1", "-j", "1", "--quiet", "--output", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.slow
def test_each_game_links_to_its_html_replay_which_opens_in_a_real_browser(tmp_path):
    if not os.path.exists(CHROMIUM):
        pytest.fail("chromium is needed for the browser test (apt-get install chromium)")
    out = tmp_path / "out"
    run_two_games(out)
    # the report the run wrote at its end made both replay pages, beside the records
    for game in (0, 1):
        assert (out / "records" / f"{game:06d}.html").is_file()
    data = json.loads((out / "standings.json").read_text())
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            page.goto((out / "report.html").as_uri())
            links = page.locator("table.games a.replay")
            assert links.count() == 2 and page.locator("table.games a.record").count() == 2
            assert page.locator("p.replays").count() == 0  # every game has its page: no note
            assert links.nth(1).get_attribute("href") == "records/000001.html"
            links.nth(1).click()
            page.wait_for_load_state()
            assert page.url.endswith("records/000001.html")
            seed = json.loads((out / "results.jsonl").read_text().splitlines()[1])["seed"]
            assert page.locator("#title").inner_text().endswith(f"replay — seed {seed}")
            assert "000001.jsonl" in page.locator("#subtitle").inner_text()
            # the replay script ran: steps counted, and stepping to the end shows the result
            assert int(page.locator("#step-count").inner_text()) > 10
            page.locator("#last").click()
            assert "Result:" in page.locator("#result").inner_text()
        finally:
            browser.close()
    assert data["games_played"] == 2


def test_referee_report_makes_missing_replay_pages_and_keeps_the_ones_it_made(tmp_path):
    out = tmp_path / "out"
    run_two_games(out)
    first = out / "records" / "000000.html"
    first.unlink()
    kept = (out / "records" / "000001.html").stat().st_mtime_ns
    target = tmp_path / "elsewhere" / "page.html"
    target.parent.mkdir()
    done = subprocess.run([sys.executable, "-m", "referee", "report", str(out), "--html", str(target)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert first.is_file() and "replay — seed" in first.read_text()
    assert (out / "records" / "000001.html").stat().st_mtime_ns == kept  # newer than its record: kept
    page = target.read_text()
    assert 'href="../out/records/000000.html"' in page and 'href="../out/records/000001.html"' in page


def test_a_large_run_links_records_and_says_how_to_make_the_replay_pages(tmp_path, monkeypatch):
    import tournaments.html_report as html_report

    out = tmp_path / "out"
    run_two_games(out)
    for game in (0, 1):
        (out / "records" / f"{game:06d}.html").unlink()
    monkeypatch.setattr(html_report, "REPLAYS_AT_RUN_END", 1)  # two games are "many" here
    page = write_html_report(out, out / "report.html").read_text()  # as at the end of a run
    assert not (out / "records" / "000000.html").exists()
    assert 'class="replay"' not in page and page.count('class="record"') == 2
    assert "Replay pages: 0 of 2 games." in page and "referee report" in page


def test_replay_pages_that_cannot_be_written_leave_the_record_links_and_say_why(tmp_path, monkeypatch):
    import tournaments.html_report as html_report
    from referee.errors import OutputError

    out = tmp_path / "out"
    run_two_games(out)
    for game in (0, 1):
        (out / "records" / f"{game:06d}.html").unlink()
    real_write = html_report.write_atomic

    def full_disk(path, data):
        if path.suffix == ".html" and path.parent.name == "records":
            raise OutputError.of(path, OSError(28, "No space left on device"))
        real_write(path, data)

    monkeypatch.setattr(html_report, "write_atomic", full_disk)
    page = write_html_report(out, out / "report.html", replays=True).read_text()
    assert not list((out / "records").glob("*.html"))
    assert 'class="replay"' not in page and page.count('class="record"') == 2
    assert "Replay pages: 0 of 2 games." in page and "No space left on device" in page
