"""Hostile text in the two pages (#25): a bot's name, refused output, fault message
(what the parser echoes) and stderr carrying HTML/JS are inert in the HTML replay
and in report.html — checked in chromium: no script of theirs runs, the page
still renders and shows the text as text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import PATIENT_FLAGS
from .test_html_browser import CHROMIUM_ARGS, browser  # noqa: F401 (the module's browser fixture)

pytestmark = pytest.mark.slow  # real games and a browser

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "sample_bots" / "misbehaving" / "hostile_text.py"
RANDOM = ROOT / "sample_bots" / "random_bot.py"
XSS = '<script>window.__hostile=9</script><img src=x onerror="window.__hostile=8"><svg onload="window.__hostile=7">'


def referee(*args, cwd=ROOT, timeout=180):
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


def open_page(browser, path: Path):  # noqa: F811
    page = browser.new_page()
    errors: list[str] = []
    dialogs: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file://", "data:")) else r.abort())
    page.goto(path.as_uri())
    return page, errors, dialogs


def assert_inert(page, errors, dialogs):
    assert page.evaluate("window.__hostile") is None, "a script from the bot's text ran"
    assert page.evaluate("document.querySelectorAll('img[src=x], svg[onload]').length") == 0
    assert not dialogs and not errors, (dialogs, errors)


@pytest.mark.parametrize("fault", ["key", "output"])
def test_the_html_replay_keeps_the_bots_html_inert(browser, tmp_path, fault):  # noqa: F811
    rec = tmp_path / "g.jsonl"
    res = referee("play", "back-alley", "--bot", f"{sys.executable} {HOSTILE} --fault {fault}",
                  "--bot", f"{sys.executable} {RANDOM}", "--seed", 3, "--record", rec,
                  *PATIENT_FLAGS)  # the hostile bot's fault, never a stalled random bot's timeout
    assert res.returncode == 3, res.stdout + res.stderr
    # and a record handed over by someone else: HTML in the seats' names too
    lines = [json.loads(line) for line in rec.read_text().splitlines()]
    for entry in lines:
        if entry.get("record") == "header":
            for seat in entry["seats"]:
                seat["name"] = "HOSTILE-SEAT" + XSS
        if isinstance(entry.get("names"), list):  # the ready and result lines: the names shown
            entry["names"] = ["HOSTILE-SEAT" + XSS for _ in entry["names"]]
        if entry.get("record") == "fault":
            entry["stderr_tail"].append("HOSTILE-TAIL" + XSS)
    rec.write_text("".join(json.dumps(e) + "\n" for e in lines))
    html = tmp_path / "g.html"
    res = referee("replay", rec, "--html", html)
    assert res.returncode == 0, res.stderr
    page, errors, dialogs = open_page(browser, html)
    try:
        last = page.evaluate("JSON.parse(document.getElementById('page-data').textContent)"
                             ".frames.findIndex(f => f.kind === 'fault')")
        assert last > 0
        box = page.locator("#step-input")
        box.fill(str(last))
        box.dispatch_event("change")
        assert page.locator("#step").first.get_attribute("data-step") == str(last)  # the page works
        message = page.locator("#fault-message").inner_text()
        assert ("HOSTILE-KEY" if fault == "key" else "invalid_json") in message or "HOSTILE" in message, message
        stderr = page.locator("#fault-stderr").inner_text()
        assert "HOSTILE-TAIL" + XSS in stderr, stderr  # shown as text, whole
        assert "HOSTILE-SEAT<script>" in page.locator("body").inner_text()
        assert_inert(page, errors, dialogs)
    finally:
        page.close()


def test_report_html_keeps_the_bots_html_inert(browser, tmp_path):  # noqa: F811
    toml = tmp_path / "t.toml"
    toml.write_text(f"""
game = "back-alley"
seed = 3
games_per_pairing = 1
jobs = 1
output = "out"
[[entrants]]
name = "hostile"
command = {json.dumps(f"{sys.executable} {HOSTILE} --fault type")}
[[entrants]]
name = "random"
command = {json.dumps(f"{sys.executable} {RANDOM}")}
""")
    res = referee("run", toml, cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    report = tmp_path / "out" / "report.html"
    page, errors, dialogs = open_page(browser, report)
    try:
        text = page.locator("body").inner_text()
        assert "Standings" in text or "standings" in text, text[:500]
        assert "HOSTILE-TYPE" in text and "<script>window.__hostile=1</script>" in text, text[-2000:]
        notice = page.locator("#authentication")  # the results on the page were checked with the secret
        assert notice.get_attribute("data-authenticated") == "true" and notice.is_visible()
        assert notice.inner_text().startswith("authenticated: 2 results"), notice.inner_text()
        assert_inert(page, errors, dialogs)
    finally:
        page.close()
