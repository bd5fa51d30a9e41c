"""Every command as a person runs it, in a real terminal (a pty, tests/terminal.py), at 80
and 100 columns, for each of the three games: play, run, replay (its views), ask (and
ask --from), report, deals, and --help of each. Each case checks the exit status, that
nothing is an internal error, a traceback, a cell cut with "…", a table wider than the
screen or an empty column (``assert_seen_whole``), and what the screen says.

The games are small (Schmier to 3 deals, Pegs and Jokers to 120 turns) and the
tournaments short, so the whole matrix takes a minute or two."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from ..conftest import PATIENT_FLAGS, built_once
from ..terminal import REFEREE, ROOT, Terminal, assert_seen_whole, run_in_terminal

BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
COLS = [80, 100]
GAMES = ["back-alley", "schmier", "pegs-and-jokers"]
#: Each game kept small: (--option flags, teams, seed).
SMALL = {
    "back-alley": ([], 2, 4),
    "schmier": (["-o", "max_deals=3"], 3, 2),
    "pegs-and-jokers": (["-o", "max_turns=120"], 2, 2),
}
#: The headers each score table shows, in one part or another.
SCORE_HEADERS = {
    "back-alley": ["deal", "h", "dlr", "trump", "contract", "tricks", "score", "total"],
    "schmier": ["deal", "dlr", "declarer", "bid", "trump", "made", "high", "low", "right", "left", "joker",
                "game", "total"],
    "pegs-and-jokers": ["player", "team", "pegs home", "hits", "turns", "result"],
}


def piped(*args, cwd=ROOT) -> subprocess.CompletedProcess[str]:
    res = subprocess.run([REFEREE, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300)
    assert res.returncode == 0, res.stderr
    return res


def bots(game: str) -> list[str]:
    return [a for _ in range(SMALL[game][1]) for a in ("--bot", BOT)]


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> dict[str, object]:
    """One small recorded game of each kind (written through a pipe, not a terminal; made once
    per test run, the tests only read them)."""
    def build(folder):
        for game in GAMES:
            piped("play", game, *bots(game), *SMALL[game][0], "--seed", SMALL[game][2], "--record",
                  folder / f"{game}.jsonl", "-q", *PATIENT_FLAGS)

    folder = built_once(tmp_path_factory, "terminal-matrix-records", build)
    return {game: folder / f"{game}.jsonl" for game in GAMES}


@pytest.fixture(scope="module")
def tournaments(tmp_path_factory) -> dict[str, object]:
    """One finished small tournament of each game (for report, which only reads it; made once
    per test run)."""
    def build(folder):
        for game in GAMES:
            piped("run", *smallest_run_args(game), "--output", folder / game, "-q")

    folder = built_once(tmp_path_factory, "terminal-matrix-runs", build)
    return {game: folder / game for game in GAMES}


def run_args(game: str) -> list[str]:
    """A small tournament: the three entrants of the example (two for Pegs and Jokers), one deal."""
    return [ROOT / "tournaments" / "examples" / f"{game}.toml", "-n", "1", *SMALL[game][0]]


def smallest_run_args(game: str) -> list[str]:
    """The smallest tournament of a game: as many entrants as teams, one deal."""
    entrants = [a for t in range(SMALL[game][1]) for a in ("--entrant", f"e{t}={BOT} {{seed}}")]
    return ["--game", game, *entrants, "-n", "1", *SMALL[game][0]]


def headers_seen(text: str, names: list[str]) -> list[str]:
    return [n for n in names if not re.search(rf"(^|[┃ ]){re.escape(n)}( |$)", text, re.M)]


def assert_split_is_said(text: str, what: str) -> None:
    """A table split in parts says so under it; an unsplit one does not."""
    assert ("(continued)" in text) == (f"{what} split to fit" in text), text


# -- play -------------------------------------------------------------------------------

@pytest.mark.parametrize("cols", COLS)
@pytest.mark.parametrize("game", GAMES)
def test_play(tmp_path, game, cols):
    record = tmp_path / "r.jsonl"
    status, term = run_in_terminal("play", game, *bots(game), *SMALL[game][0], "--seed", "7", "--record",
                                   record, *PATIENT_FLAGS, cols=cols)
    assert status == 0, term.text()
    assert_seen_whole(term)
    text = term.text()
    assert f"{game}, seed 7" in text and "Result: " in text and f"Record: {record}" in term.plain()
    assert not headers_seen(text, SCORE_HEADERS[game]), (headers_seen(text, SCORE_HEADERS[game]), text)
    assert_split_is_said(text, "score table")
    if "(continued)" in text and game != "pegs-and-jokers":
        # the legend of the short headers is under the last part: the columns it explains may be there
        assert text.index("dlr: the dealer's seat") > text.rindex("└"), text
    # The final scores of the result line are in the table.
    scores = re.search(r"Result: .*?— (team 0: .*)$", text, re.M)
    if game != "pegs-and-jokers":
        assert scores, text
        for score in re.findall(r"team \d: (-?\d+)", scores.group(1)):
            assert re.search(rf"│ +{score} │", text), (score, text)


# -- replay -----------------------------------------------------------------------------

VIEWS = {
    "default": [],
    "part": None,  # --deal 2 or --turn 5, by game
    "seat": ["--seat", "1"],
    "verify": ["--verify"],
    "request": ["--request", "3"],
    "summary": ["--summary"],
}


@pytest.mark.parametrize("cols", COLS)
@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("game", GAMES)
def test_replay(records, game, view, cols):
    turns = game == "pegs-and-jokers"
    args = VIEWS[view] if VIEWS[view] is not None else (["--turn", "5"] if turns else ["--deal", "2"])
    status, term = run_in_terminal("replay", records[game], *args, cols=cols)
    assert status == 0, term.text()
    assert_seen_whole(term)
    text = term.text()
    if view == "verify":
        assert text.startswith("OK: verified "), text
        return
    if view == "request":
        line = term.raw.decode().replace("\r\n", "\n").strip()
        request = json.loads(line)  # the request line itself, byte for byte as the bot got it
        assert request["type"] == "request" and request["id"] == 3, line
        return
    assert f"{game} (rules " in text and "seat 0 team 0: random  [" in text, text
    if view in ("default", "seat", "summary"):
        assert "Score table" in text and "Result: " in text, text
        assert not headers_seen(text, SCORE_HEADERS[game]), text
        assert_split_is_said(text, "score table")
    if view == "summary":
        assert "Deal 1" not in text and "turn 1:" not in text, text
    elif view == "seat":
        assert "(seen from seat 1)" in text, text
        if not turns:
            assert "hand 1:" in text or "seat 1 (T1):" in text, text
            assert "hand 0:" not in text and "seat 0 (T0):" not in text, text
    elif view == "part":
        if turns:
            assert "turn 5:" in text and "turn 4:" not in text and "turn 6:" not in text, text
        else:
            assert "Deal 2" in text and "Deal 1 " not in text and "Deal 3" not in text, text
    else:
        assert ("turn 1:" if turns else "Deal 1") in text, text


# -- ask --------------------------------------------------------------------------------

@pytest.mark.parametrize("cols", COLS)
@pytest.mark.parametrize("game", GAMES)
def test_ask(records, game, cols):
    status, term = run_in_terminal("ask", records[game], "3", "--bot", BOT, cols=cols)
    assert status == 0, term.text()
    assert_seen_whole(term)
    text = term.text()
    assert f"request 3 ({game}, seat " in text and "legal actions" in text, text
    assert re.search(r"^verdict: legal: '.+' is legal$", text, re.M), text
    assert "recorded: random played " in text, text


@pytest.mark.parametrize("cols", COLS)
@pytest.mark.parametrize("game", GAMES)
def test_ask_from(tmp_path, records, game, cols):
    new = tmp_path / "from.jsonl"
    status, term = run_in_terminal("ask", records[game], "3", "--from", "--record", new, *bots(game), cols=cols)
    assert status == 0, term.text()
    assert_seen_whole(term)
    text = term.text()
    assert f"What-if from request 3 of {records[game]}" in term.plain() and "Result: " in text, text
    assert not headers_seen(text, SCORE_HEADERS[game]), text
    assert f"Check it: referee replay {new} --verify" in term.plain() and new.exists(), text


# -- run --------------------------------------------------------------------------------

STANDINGS_HEADERS = ["#", "entrant", "games", "W-D-L", "Elo", "LOS", "win rate", "score diff/deal", "rating",
                     "forfeits"]


@pytest.mark.slow
@pytest.mark.parametrize("cols", COLS)
@pytest.mark.parametrize("game", GAMES)
def test_run_shows_live_progress_then_standings_that_fit(tmp_path, game, cols):
    with Terminal([REFEREE, "run", *run_args(game), "--output", tmp_path / "out"], cols=cols) as term:
        seen: set[str] = set()
        total: list[str] = []

        def progress(t: Terminal) -> bool:
            found = re.findall(r"━+ (\d+)/(\d+) ", t.text())
            seen.update(done for done, _ in found)
            total.extend(n for _, n in found[:1])
            return bool(total) and total[0] in seen

        term.wait_for(progress, timeout=180)
        status = term.wait()
    assert status == 0, term.text()
    assert len(seen) >= 2, f"the live progress never advanced: {seen}"
    assert_seen_whole(term)
    text = term.text()
    data = json.loads((tmp_path / "out" / "standings.json").read_text())
    assert f"Standings ({total[0]} games)" in text, text
    assert not headers_seen(text, STANDINGS_HEADERS), (headers_seen(text, STANDINGS_HEADERS), text)
    for e in data["entrants"]:  # every entrant, in every part of the table
        assert len(re.findall(rf"│ {re.escape(e['name'])} ", text)) >= 2, text
    for title in ("Head to head", "How games ended", "Decision time"):
        assert title in text, text
    assert ("Duplicate deals" in text) == bool(data["paired"]), text
    assert_split_is_said(text, "tables")
    assert f"report: file://{tmp_path / 'out' / 'report.html'}" in term.plain(), text


@pytest.mark.parametrize("game", GAMES)
def test_run_quiet_prints_one_summary_line(tmp_path, game):
    out = tmp_path / "out"
    status, term = run_in_terminal("run", *smallest_run_args(game), "--output", out, "--quiet", cols=80)
    assert status == 0, term.text()
    assert_seen_whole(term)
    text = term.text()
    summary = [line for line in term.plain().splitlines() if re.match(rf"{game}: \d+ games; ", line)]
    assert len(summary) == 1, text
    assert re.match(rf"{game}: \d+ games; (leader .+ \d+-\d+-\d+, Elo .+|tied first: .+); \d+ forfeits?$",
                    summary[0]), summary
    assert "Standings" not in text and "━" not in text and "Decision time" not in text, text
    assert f"output: {out} (standings.json, standings.csv, results.jsonl, report.html)" in term.plain(), text


# -- report, deals ------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("cols", COLS)
@pytest.mark.parametrize("game", GAMES)
def test_report(tmp_path, tournaments, game, cols):
    page = tmp_path / "page.html"
    status, term = run_in_terminal("report", tournaments[game], "--html", page, cols=cols)
    assert status == 0, term.text()
    assert_seen_whole(term)
    games = len((tournaments[game] / "results.jsonl").read_bytes().splitlines())
    assert term.plain().strip().splitlines() == [f"referee: {games} authenticated results, nothing rejected",
                                                 f"report: {page.resolve().as_uri()}"], term.text()
    assert "<html" in page.read_text()


@pytest.mark.parametrize("cols", COLS)
@pytest.mark.parametrize("game", GAMES)
def test_deals(game, cols):
    status, term = run_in_terminal("deals", game, "-n", "3", "--seed", "5", cols=cols)
    assert status == 0, term.text()
    assert_seen_whole(term)
    lines = term.lines()
    seeds = [line for line in lines if line and not line.startswith("#")]
    assert len(seeds) == 3 and all(s.isdigit() for s in seeds), lines
    assert any(f"referee deals {game} -n 3 --seed 5" in line for line in lines), lines


# -- --help -------------------------------------------------------------------------------

COMMANDS = ["play", "replay", "ask", "run", "deals", "report", "worker"]


@pytest.mark.parametrize("cols", COLS)
@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_fits_the_screen_with_nothing_cut(command, cols):
    args = [command, "--help"] if command else ["--help"]
    status, term = run_in_terminal(*args, cols=cols)
    assert status == 0, term.text()
    assert_seen_whole(term)
    written = term.raw.decode().replace("\r\n", "\n").splitlines()
    too_long = [line for line in written if len(line) > cols]
    assert not too_long, too_long  # the help wraps itself: the terminal never has to
    assert written[0].startswith(f"Usage: referee {command or ''}".rstrip()), written
    cut = [line for line in written[1:] if line.rstrip().endswith("...")]
    assert not cut, cut  # click shortens a command's text with "..." when it has no short help
    assert "--help" in term.text()
    if command is None:
        listed = term.text().split("Commands:\n", 1)[1].splitlines()
        assert [line.split()[0] for line in listed] == COMMANDS, listed
        assert all(len(line.split()) > 3 for line in listed), listed  # each with its description


def test_replay_wide_prints_the_score_table_whole(records):
    status, term = run_in_terminal("replay", records["schmier"], "--summary", "--wide", cols=80)
    assert status == 0, term.text()
    text = term.plain()
    assert "internal error" not in text and "…" not in text and "(continued)" not in text, text
    header = [line for line in text.splitlines() if line.startswith("┃") and "declarer" in line]
    assert len(header) == 1 and all(h in header[0] for h in ("high", "joker", "T2", "trump")), header
    assert len(header[0]) > 80  # as wide as it needs: the terminal wraps it, as asked
