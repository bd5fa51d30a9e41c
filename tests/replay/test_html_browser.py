"""The HTML replay in a real browser: Debian's chromium driven headless by Playwright.

Records are played here with the sample random bots (``referee play``, real
processes), turned into pages with ``referee replay --html``, and the pages are
stepped through in chromium.  What a page shows at a step is checked against
the engine, re-simulated here from the record (not against the page's data):
the trick's cards, the score, where every peg stands.  The page data is read
only to find the step of a decision.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from referee.games import get_game
from referee.match.record import DecisionLine, read_record

pytestmark = pytest.mark.slow  # four real games and a browser

ROOT = Path(__file__).resolve().parents[2]
BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
ILLEGAL = f"{sys.executable} {ROOT / 'sample_bots' / 'misbehaving' / 'illegal_action.py'} --after 30"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
LIMITS = ["--decision-ms", 20000, "--handshake-ms", 60000]  # generous: the machine may be loaded
GAMES = {"back-alley": 2, "schmier": 3, "pegs-and-jokers": 2}  # game -> one bot per team
# Random bots rarely reach Schmier's target: cap the deals so the game stays short.
OPTIONS = {"schmier": ["-o", "max_deals=12"]}


def referee(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


@pytest.fixture(scope="module")
def browser():
    why = None
    if not CHROMIUM.exists():
        why = f"{CHROMIUM} is missing (Debian package chromium; .ci/run installs it)"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        why = why or "playwright is not installed (pip install -e '.[test]')"
    if why:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):  # as tests/test_docs.py
            pytest.fail(f"the HTML replay browser tests cannot run in CI: {why}", pytrace=False)
        pytest.skip(why)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def pages(browser, tmp_path_factory):
    """game -> (record path, html path) of a finished game; "fault" -> a Back Alley forfeit.
    (Asks for the browser first, so that a missing chromium stops the module before any game.)"""
    folder = tmp_path_factory.mktemp("html")
    out = {}
    for game, teams in GAMES.items():
        rec = folder / f"{game}.jsonl"
        bots = [a for t in range(teams) for a in ("--bot", f"{BOT} {t}")]
        res = referee("play", game, *bots, "--seed", 11, "--record", rec, *LIMITS, *OPTIONS.get(game, []))
        assert res.returncode == 0, res.stderr
        assert read_record(rec).result.outcome.status != "forfeit", res.stdout
        out[game] = rec
    rec = folder / "fault.jsonl"
    res = referee("play", "back-alley", "--bot", BOT, "--bot", ILLEGAL, "--seed", 5, "--record", rec, *LIMITS)
    # (the exit status of a forfeit is another change's business; the record says what happened)
    assert read_record(rec).result.outcome.reason == "illegal_action", res.stdout + res.stderr
    out["fault"] = rec
    pages = {}
    for key, rec in out.items():
        html = rec.with_suffix(".html")
        res = referee("replay", rec, "--html", html)
        assert res.returncode == 0, res.stderr
        assert res.stdout.strip() == f"Wrote {html}"
        pages[key] = (rec, html)
    return pages


class Opened:
    """A page in chromium with every request it made (all routed through here)."""

    def __init__(self, browser, html: Path, hash_: str = ""):
        self.page = browser.new_page(viewport={"width": 1100, "height": 900})
        self.requests: list[str] = []
        self.errors: list[str] = []

        def route(r):
            self.requests.append(r.request.url)
            if r.request.url.startswith(("file://", "data:")):
                r.continue_()
            else:
                r.abort()

        self.page.route("**/*", route)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.goto(html.as_uri() + hash_)
        self.index = self.page.evaluate(
            "JSON.parse(document.getElementById('page-data').textContent).frames.map(f => [f.kind, f.n])")

    def enter(self, selector: str, value: object):
        """Type ``value`` into a number box and commit it, as a user does."""
        box = self.page.locator(selector)
        box.fill(str(value))
        box.dispatch_event("change")

    def step(self, i: int):
        self.enter("#step-input", i)
        assert self.attr("#step", "data-step") == str(i)

    def attr(self, selector, name):
        return self.page.locator(selector).first.get_attribute(name)

    def steps_of(self, kind):
        return [i for i, (k, _) in enumerate(self.index) if k == kind]

    def trick(self):
        return [tuple(x) for x in self.page.evaluate(
            """[...document.querySelectorAll('#trick .played')].map(e =>
                 [Number(e.dataset.seat), e.querySelector('.card').dataset.card])""")]

    def scores(self):
        return self.page.evaluate(
            "[...document.querySelectorAll('#score [data-total-team]')].map(e => Number(e.textContent))")

    def hand(self, seat):
        return self.page.evaluate(
            f"""[...document.querySelectorAll('.hand[data-seat="{seat}"] .card')].map(e => e.dataset.card || null)""")

    def close(self):
        assert self.errors == []
        self.page.close()


@pytest.fixture
def opened(browser):
    made = []

    def open_(html, hash_=""):
        made.append(Opened(browser, html, hash_))
        return made[-1]

    yield open_
    for o in made:
        o.close()


def engine_steps(rec_path: Path):
    """decision n -> (god view before it, its action, god view after it), re-simulated from the record."""
    rec = read_record(rec_path)
    spec = get_game(rec.header.game)
    state, _ = spec.new_game(rec.header.seed, spec.normalize_options(rec.header.options))
    seats = spec.num_seats(spec.normalize_options(rec.header.options))
    views = lambda: [state.observe(s) for s in range(seats)]  # noqa: E731
    out = {}
    for e in rec.entries:
        if isinstance(e, DecisionLine):
            before = views()
            state.apply(e.action)
            out[e.n] = (before, e, views())
    return out, state


def seat_of(leader, i, seats):
    return (leader + i) % seats


def expected_trick(before, decision, after, seats):
    """What the table shows after a decision: the trick in play, the one just won, or the deal's last one."""
    b, a = before[0], after[0]
    trick = a.get("trick")
    past = a.get("past_tricks", a.get("tricks"))
    new_deal = (b["deal"], b["redeals"], b["dealer"]) != (a["deal"], a["redeals"], a["dealer"]) or a["phase"] == "over"
    if decision.decision == "play" and new_deal:
        bt = b["trick"]
        cards = [*bt["cards"], decision.action] if bt["cards"] else [decision.action]
        leader = bt["leader"] if bt["cards"] else decision.seat
        return [(seat_of(leader, i, seats), c) for i, c in enumerate(cards)]
    if trick and trick["cards"]:
        return [(seat_of(trick["leader"], i, seats), c) for i, c in enumerate(trick["cards"])]
    if trick is not None and past:
        last = past[-1]
        return [(seat_of(last["leader"], i, seats), c) for i, c in enumerate(last["cards"])]
    return []


@pytest.mark.parametrize("game", ["back-alley", "schmier"])
def test_card_game_page_shows_the_engines_trick_and_score(pages, opened, game):
    rec, html = pages[game]
    steps, final = engine_steps(rec)
    seats = len(next(iter(steps.values()))[0])
    o = opened(html)
    moves = o.steps_of("move")
    rng = random.Random(game)
    plays = [i for i in moves if steps[o.index[i][1]][1].decision == "play"]
    chosen = sorted(set(rng.sample(plays, 25) + rng.sample(moves, 10) + [moves[-1]]))
    checked_tricks = 0
    for i in chosen:
        o.step(i)
        n = o.index[i][1]
        before, decision, after = steps[n]
        assert o.attr("#step", "data-n") == str(n)
        assert o.attr("#action-line", "data-action") == decision.action
        assert o.attr("#action-line", "data-seat") == str(decision.seat)
        assert o.scores() == after[0]["scores"]
        if decision.decision == "play":
            trick = o.trick()
            assert trick == expected_trick(before, decision, after, seats)
            assert (decision.seat, decision.action) in trick
            checked_tricks += 1
    assert checked_tricks >= 25
    # The final score row and the result.
    o.step(len(o.index) - 1)
    assert o.attr("#step", "data-kind") == "end"
    assert o.scores() == read_record(rec).result.outcome.scores == list(final.outcome().scores)
    assert ("Result: win" in o.page.locator("#result").inner_text()
            or "Result: draw" in o.page.locator("#result").inner_text())


@pytest.mark.parametrize("game", ["back-alley", "schmier"])
def test_a_new_deal_shows_the_engines_hands_face_up(pages, opened, game):
    rec, html = pages[game]
    steps, _ = engine_steps(rec)
    o = opened(html)
    deals = o.steps_of("deal")
    assert deals
    for i in deals[:3]:
        o.step(i)
        _, _, after = steps[o.index[i - 1][1]]  # the decision that closed the deal
        for s, view in enumerate(after):
            assert o.hand(s) == view["hand"]
        assert o.trick() == []
        assert o.page.locator("#deal").inner_text().startswith(f"Deal: {after[0]['deal']}")


def test_pegs_page_places_every_peg_where_the_engine_has_it(pages, opened):
    rec, html = pages["pegs-and-jokers"]
    steps, final = engine_steps(rec)
    o = opened(html)
    moves = o.steps_of("move")
    rng = random.Random(3)
    for i in sorted(set(rng.sample(moves, 12) + [moves[0], moves[-1]])):
        o.step(i)
        n = o.index[i][1]
        _, decision, after = steps[n]
        pegs = after[0]["pegs"]
        assert o.page.locator("[data-hole][data-peg]").count() == sum(len(p) for p in pegs)
        for colour, positions in enumerate(pegs):
            for pos in positions:
                if pos.startswith("T"):
                    assert o.attr(f'[data-hole="{pos}"]', "data-peg") == str(colour)
                elif pos.startswith("H"):
                    assert o.attr(f'[data-hole="{colour}:{pos}"]', "data-peg") == str(colour)
            in_start = o.page.locator(f'[data-hole^="{colour}:S"][data-peg="{colour}"]').count()
            assert in_start == positions.count("S")
        assert o.scores() == after[0]["team_home"]
        assert o.attr("#step", "data-turn") == str(before_turn(steps, n))
        if not decision.action.startswith("discard"):
            dst = decision.action.split(",")[-1].split("-")[-1]
            colour = decision.action.split(" ")[1].split(":")[0]
            name = dst if dst.startswith("T") else f"{colour}:{dst}"
            if dst != "S":
                assert o.page.locator(f'#moved-marks [data-moved="{name}"]').count() == 1
    assert o.scores() == list(final.outcome().scores)


def before_turn(steps, n):
    return steps[n][0][0]["turn"]


def test_pegs_board_is_the_rule_books_ring(pages, opened):
    _, html = pages["pegs-and-jokers"]
    o = opened(html)
    holes = 18 * 4
    for t in (0, 17, holes - 1):
        assert o.page.locator(f'[data-hole="T{t}"]').count() == 1
    assert o.page.locator(f'[data-hole="T{holes}"]').count() == 0
    for p in range(4):
        assert "come-out" in o.attr(f'[data-hole="T{18 * p + 8}"]', "class")
        assert "in-spot" in o.attr(f'[data-hole="T{18 * p + 3}"]', "class")
        assert o.page.locator(f'[data-hole^="{p}:H"]').count() == 5
        assert o.page.locator(f'[data-hole^="{p}:S"]').count() == 5
    o.step(0)  # every peg starts in its start area
    assert o.page.locator('[data-hole*=":S"][data-peg]').count() == 20


def test_arrow_keys_step_and_shift_jumps_a_deal(pages, opened):
    _, html = pages["back-alley"]
    o = opened(html)
    assert o.attr("#step", "data-step") == "0"
    for _ in range(3):
        o.page.keyboard.press("ArrowRight")
    assert o.attr("#step", "data-step") == "3"
    o.page.keyboard.press("ArrowLeft")
    assert o.attr("#step", "data-step") == "2"
    o.page.keyboard.press("Shift+ArrowRight")
    assert o.attr("#step", "data-deal") == "2"
    assert o.page.locator("#deal").inner_text().startswith("Deal: 2")
    o.page.keyboard.press("End")
    assert o.attr("#step", "data-step") == str(len(o.index) - 1)
    o.page.keyboard.press("Home")
    assert o.attr("#step", "data-step") == "0"
    o.page.locator("#next").click()
    o.page.locator("#next").click()
    o.page.locator("#prev").click()
    assert o.attr("#step", "data-step") == "1"


def test_jump_to_deal_and_trick(pages, opened):
    rec, html = pages["back-alley"]
    steps, _ = engine_steps(rec)
    o = opened(html)
    o.enter("#jump-deal", 5)
    assert o.attr("#step", "data-deal") == "5"
    o.enter("#jump-trick", 3)
    i = int(o.attr("#step", "data-step"))
    before, decision, after = steps[o.index[i][1]]
    assert after[0]["deal"] == 5 and decision.decision == "play"
    assert len(after[0]["past_tricks"]) == 2 and len(after[0]["trick"]["cards"]) == 1  # the first card of trick 3
    assert o.page.locator("#trick-wrap").inner_text().startswith("Trick 3")


def test_pegs_jump_to_turn(pages, opened):
    rec, html = pages["pegs-and-jokers"]
    steps, _ = engine_steps(rec)
    o = opened(html)
    o.enter("#jump-turn", 40)
    assert o.attr("#step", "data-turn") == "40"
    assert before_turn(steps, int(o.attr("#step", "data-n"))) == 40


@pytest.mark.parametrize("game", ["back-alley", "pegs-and-jokers"])
def test_a_seats_view_hides_the_other_hands(pages, opened, game):
    rec, html = pages[game]
    steps, _ = engine_steps(rec)
    o = opened(html)
    i = o.steps_of("move")[7]
    o.step(i)
    _, _, after = steps[o.index[i][1]]
    o.page.select_option("#view", "1")
    for s, view in enumerate(after):
        cards = o.page.locator(f'.hand[data-seat="{s}"] .card')
        if s == 1:
            assert o.hand(1) == view["hand"]
        else:
            assert cards.count() == len(view["hand"])
            assert o.page.locator(f'.hand[data-seat="{s}"] .card[data-card]').count() == 0
            assert o.page.locator(f'.hand[data-seat="{s}"] .card.back').count() == len(view["hand"])
    o.page.select_option("#view", "all")
    assert o.hand(0) == after[0]["hand"]


def test_schmier_seat_view_keeps_another_seats_discard_private(pages, opened):
    rec, html = pages["schmier"]
    steps, _ = engine_steps(rec)
    o = opened(html)
    i = next(i for i in o.steps_of("move")
             if steps[o.index[i][1]][1].decision == "discard" and steps[o.index[i][1]][1].action != "done")
    o.step(i)
    seat = steps[o.index[i][1]][1].seat
    assert o.attr("#action-line", "data-action") == steps[o.index[i][1]][1].action
    other = (seat + 1) % 6
    o.page.select_option("#view", str(other))
    assert o.attr("#action-line", "data-action") is None
    assert "(private)" in o.page.locator("#action-line").inner_text()
    o.page.select_option("#view", str(seat))
    assert o.attr("#action-line", "data-action") == steps[o.index[i][1]][1].action


def test_a_fault_is_highlighted_with_its_reason_and_reply(pages, opened):
    rec, html = pages["fault"]
    fault = [json.loads(line) for line in rec.read_text().splitlines() if '"record":"fault"' in line][0]
    o = opened(html)
    assert o.page.locator("#fault").is_hidden()
    o.page.locator("#next-fault").click()
    assert o.attr("#step", "data-kind") == "fault"
    box = o.page.locator("#fault")
    assert box.is_visible()
    assert box.get_attribute("data-reason") == "illegal_action" == fault["reason"]
    assert box.get_attribute("data-seat") == str(fault["seat"])
    assert fault["message"] in box.inner_text()
    assert fault["output"] in box.inner_text()  # the offending reply, as the record keeps it
    assert fault["stderr_tail"][-1] in o.page.locator("#fault-stderr").inner_text()
    assert "faulty" in o.attr(f'.seat[data-seat="{fault["seat"]}"]', "class")
    # Another seat's view shows the reason but not the faulty bot's stderr.
    o.page.select_option("#view", str((fault["seat"] + 1) % 4))
    assert o.page.locator("#fault-stderr").count() == 0
    assert "illegal_action" in box.inner_text()


def test_fields_a_newer_fault_entry_carries_are_shown_escaped(pages, opened, tmp_path):
    """The request id, the refused legal list and the raw reply (as helper "debug" adds them) appear
    as written; a reply holding </script> neither breaks the page nor runs."""
    rec, _ = pages["fault"]
    lines = rec.read_text().splitlines()
    raw = '{"type":"action","id":7,"action":"</script><script>document.title=\\"pwned\\"</script>"}'
    for k, line in enumerate(lines):
        if '"record":"fault"' in line:
            data = json.loads(line)
            data.update({"request_id": 121, "legal": ["3H", "KC"], "output": raw})
            lines[k] = json.dumps(data)
    new = tmp_path / "newer.jsonl"
    new.write_text("\n".join(lines) + "\n")
    html = tmp_path / "newer.html"
    res = referee("replay", new, "--html", html)
    assert res.returncode == 0, res.stderr
    o = opened(html)
    o.page.locator("#next-fault").click()
    assert o.page.locator("#fault-output").inner_text() == raw
    assert o.page.locator("#fault-request_id").inner_text() == "121"
    assert json.loads(o.page.locator("#fault-legal").inner_text()) == ["3H", "KC"]
    assert "pwned" not in o.page.title()


def test_pages_make_no_network_request(pages, opened):
    for key, (_, html) in pages.items():
        o = opened(html)
        for _ in range(5):
            o.page.keyboard.press("ArrowRight")
        o.page.keyboard.press("End")
        o.page.select_option("#view", "0")
        assert o.requests, "the route saw no request at all"
        assert all(u.startswith(("file://", "data:")) for u in o.requests), (key, o.requests)
        csp = o.page.locator('meta[http-equiv="Content-Security-Policy"]').get_attribute("content")
        assert "default-src 'none'" in csp


def test_cards_are_drawn_as_cards(pages, opened):
    _, html = pages["back-alley"]
    o = opened(html)
    o.step(1)
    cards = o.page.locator(".hand .card[data-card]")
    assert cards.count() > 0
    for e in cards.all()[:20]:
        code = e.get_attribute("data-card")
        text = e.inner_text().replace("\n", "")
        if code in ("BJ", "LJ"):
            assert "joker" in e.get_attribute("class") and ("BIG" in text.upper() or "LITTLE" in text.upper())
        else:
            symbol = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}[code[1]]
            assert text == ("10" if code[0] == "T" else code[0]) + symbol
            assert ("red" in e.get_attribute("class")) == (code[1] in "DH")
