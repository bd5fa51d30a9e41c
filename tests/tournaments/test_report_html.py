"""report.html in a real browser (Debian chromium through Playwright), and `referee report`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

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
    """An output folder with results.jsonl, a record for game 0 and an HTML replay for game 1."""
    ab = ("new", "old")
    games = []
    for deal in range(12):
        for arrangement, teams in enumerate((("new", "old"), ("old", "new"))):
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
            assert first.nth(3).inner_text() == f"{new['wins']}-{new['draws']}-{new['losses']}" == "22-0-2"
            assert first.nth(4).inner_text().startswith(f"{new['elo']['elo']:+.0f} ±")
            assert first.nth(5).inner_text() == f"{new['elo']['los']:.1%}"
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
            assert "LLR" in page.locator("p.sprt").nth(1).inner_text()
            # seat effects, endings, and the games with their links
            assert page.locator("svg.positions-chart g.position-bar").count() >= 1
            assert page.locator("table.endings tbody tr").count() >= 1
            assert page.locator("table.games tbody tr").count() == 24
            assert page.locator("a.replay").count() == 1
            assert page.locator("a.replay").get_attribute("href") == "records/000001.html"
            assert page.locator("a.record").get_attribute("href") == "records/000000.jsonl"
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
