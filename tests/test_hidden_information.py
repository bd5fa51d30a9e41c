"""RULES 0.6: nothing sent to a seat reveals another player's hand or the stock.

At every moment of random games of every registered game (hypothesis picks
the seeds), a card is *hidden from seat s* when it lies in another player's
hand, in the stock or draw pile, or among cards another player discarded face
down -- and is not in s's own hand nor face up somewhere (the turn-up, the
tricks of this deal, a discard pile).  Then:

* no observation of any seat, and no legal action offered to it, names a card
  hidden from it;
* swapping the hidden cards around (other hands, stock, face-down discards;
  sizes kept) never changes what a seat observes -- so no other encoding
  (order, counts by suit, ...) leaks them or the stock's order either;
* no event a seat may see names a card hidden from it, both just before
  and just after the action that produced the event (a card played face up
  and a card just drawn are, of course, named);
* the real match runner sends each bot exactly the engine's messages for its
  seat (so the runner adds nothing), and every record line that
  ``referee replay --seat S`` shows passes the same event check, and the
  printed replay of a deal never names a card hidden from S for that whole deal.

Games without an adapter here fail: a new game must say where its hidden cards are.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.games import GAMES, Event, GameState
from referee.games.back_alley.notation import DECK as BA_DECK
from referee.match.record import read_record
from referee.match.runner import run_match
from referee.match.types import BotSpec, Limits
from referee.replay import entries_for_seat

ROOT = Path(__file__).resolve().parents[1]
LISTENER = ROOT / "tests" / "fixtures" / "listening_bot.py"
CARD = re.compile(r"(?<![0-9A-Za-z])(?:[2-9TJQKA][CDHS]|BJ|LJ|JK)(?![0-9A-Za-z])")


def cards_in(value) -> set[str]:
    """Every card token in a JSON-able value (or text)."""
    text = value if isinstance(value, str) else json.dumps(value)
    return set(CARD.findall(text))


# -- where each game keeps its hidden cards ----------------------------------------------------


@dataclass(frozen=True)
class Adapter:
    hidden: Callable[[GameState, int], set[str]]  # cards hidden from seat s now
    shuffle_hidden: Callable[[GameState, int, random.Random], None]  # permute them in place (a clone)
    public_decisions: frozenset[str]  # decisions whose action is shown to everyone
    deal_event: str = "deal"  # the event that starts a new deal (a fresh shuffle)


def _redistribute(lists: list[list[str]], rng: random.Random) -> None:
    pool = [c for lst in lists for c in lst]
    rng.shuffle(pool)
    for lst in lists:
        n = len(lst)
        lst[:], pool = pool[:n], pool[n:]


def _ba_hidden(st_, s):
    hands = st_._hands
    shown = {st_._turn_up, *st_._trick, *(c for _, cards, _ in st_._past for c in cards)}
    if st_._discard is not None:
        shown.add(st_._discard[1])
    in_hands = {c for h in hands for c in h}
    stock = set(BA_DECK) - in_hands - shown
    others = {c for o, h in enumerate(hands) if o != s for c in h}
    return (others | stock) - set(hands[s]) - shown


def _ba_shuffle(st_, s, rng):
    _redistribute([h for o, h in enumerate(st_._hands) if o != s], rng)


def _sc_hidden(st_, s):
    others = {c for o, h in enumerate(st_.hands) if o != s for c in h}
    face_down = {c for o, d in enumerate(st_.discards) if o != s for c in d}
    return (others | set(st_.stock) | face_down) - set(st_.hands[s]) - set(st_.discards[s])


def _sc_shuffle(st_, s, rng):
    _redistribute([h for o, h in enumerate(st_.hands) if o != s] + [st_.stock]
                  + [d for o, d in enumerate(st_.discards) if o != s], rng)


def _pj_hidden(st_, s):
    # Several decks: equal strings are identical cards, so a string is hidden
    # when it is somewhere hidden and nowhere s can see it.
    others = {c for o, h in enumerate(st_.hands) if o != s for c in h}
    return (others | set(st_.draw_pile)) - set(st_.hands[s]) - set(st_.discard_pile)


def _pj_shuffle(st_, s, rng):
    _redistribute([h for o, h in enumerate(st_.hands) if o != s] + [st_.draw_pile], rng)


ADAPTERS = {
    "back-alley": Adapter(_ba_hidden, _ba_shuffle, frozenset({"bid", "play"})),
    "schmier": Adapter(_sc_hidden, _sc_shuffle, frozenset({"bid", "trump", "play"})),
    "pegs-and-jokers": Adapter(_pj_hidden, _pj_shuffle, frozenset({"move", "discard", "play"})),
}
CONFIGS = [("back-alley", {}), ("schmier", {}), ("pegs-and-jokers", {"players": 4}),
           ("pegs-and-jokers", {"players": 6}), ("pegs-and-jokers", {"players": 8})]


def test_every_registered_game_says_where_its_hidden_cards_are():
    assert set(GAMES) <= set(ADAPTERS), f"add an adapter for {sorted(set(GAMES) - set(ADAPTERS))}"


# -- the checks ---------------------------------------------------------------------------------


def leaks_in_events(events: list[Event], seat: int, before: set[str], after: set[str], action_cards: set[str],
                    deal_event: str, named_cards: list[set[str]] | None = None) -> list[tuple[str, dict]]:
    """Cards named by the events ``seat`` may see that were hidden from it.

    ``before``/``after``: cards hidden from the seat before and after the
    action that produced the events; ``action_cards``: the action's cards if the
    seat may see the action (it is public, or the seat's own).  Within one deal,
    a named card is a leak when it was hidden both before and after the action
    (a card played face up or drawn by the seat is hidden before but not after).
    When the action ended a deal and a new one was dealt, the events before the
    new deal's first event are checked against the old deal (before), the rest
    against the new deal (after). ``named_cards``: ``cards_in`` of each event's data, when the
    caller checks the same events for every seat and finds them once."""
    starts = [i for i, e in enumerate(events) if e.data.get("type") == deal_event]
    boundary = starts[-1] if starts else None
    out = []
    for i, e in enumerate(events):
        if not e.visible_to(seat):
            continue
        named = cards_in(e.data) if named_cards is None else named_cards[i]
        if boundary is None:
            bad = named & before & after - action_cards
        elif i >= boundary:
            bad = named & after
        else:
            bad = named & before - action_cards
        if bad:
            out.append((",".join(sorted(bad)), e.data))
    return out


def walk(name: str, options: dict, seed: int, choice_seed: int, *, swap_every: int = 7,
         all_seats_every: int = 5, max_steps: int = 3000):
    """Play a random game, checking every observation, legal list and event; return the steps."""
    spec = GAMES[name]
    adapter = ADAPTERS[name]
    options = spec.normalize_options(options)
    seats = spec.num_seats(options)
    state, events = spec.new_game(seed, options)
    rng = random.Random(choice_seed)
    hidden = [adapter.hidden(state, s) for s in range(seats)]
    for s in range(seats):
        assert not leaks_in_events(events, s, hidden[s], hidden[s], set(), adapter.deal_event)
    steps = 0
    while (seat := state.to_act()) is not None and steps < max_steps:
        steps += 1
        legal = state.legal_actions()
        watched = range(seats) if steps % all_seats_every == 0 else (seat,)
        for s in watched:
            obs = state.observe(s)
            assert not cards_in(obs) & hidden[s], (s, cards_in(obs) & hidden[s])
        assert not cards_in(legal) & hidden[seat], (seat, cards_in(legal) & hidden[seat])
        if steps % swap_every == 0:
            s = rng.randrange(seats)
            other = state.clone()
            adapter.shuffle_hidden(other, s, rng)
            assert other.observe(s) == state.observe(s), f"seat {s} can tell hidden cards apart"
        decision = state.decision()
        action = rng.choice(legal)
        new_events = state.apply(action)
        after = [adapter.hidden(state, s) for s in range(seats)]
        shown = cards_in(action) if decision in adapter.public_decisions else set()
        named = [cards_in(e.data) for e in new_events]  # the same for every seat: found once
        for s in range(seats):
            mine = cards_in(action) if s == seat else shown
            leaks = leaks_in_events(new_events, s, hidden[s], after[s], mine, adapter.deal_event, named)
            assert not leaks, f"seat {s} was told hidden cards: {leaks[:3]}"
        hidden = after
    return steps


# -- engines, over random seeds -------------------------------------------------------------------


@pytest.mark.parametrize(("name", "options"), [pytest.param(n, o, id=f"{n}-{o.get('players', '')}")
                                               for n, o in CONFIGS if n in GAMES])
@pytest.mark.slow
@given(seed=st.integers(0, 2**31 - 1), choice_seed=st.integers(0, 2**31 - 1))
@settings(max_examples=6, deadline=None)
def test_no_seat_is_ever_told_a_hidden_card(name, options, seed, choice_seed):
    assert walk(name, options, seed, choice_seed) > 0


def test_the_check_catches_a_leak():
    """The property is not vacuous: an engine that shows seat 1's hand to seat 0 fails it."""
    spec = GAMES["back-alley"]
    state, _ = spec.new_game(1, spec.normalize_options({}))
    adapter = ADAPTERS["back-alley"]
    hidden0 = adapter.hidden(state, 0)
    leak = Event({"type": "hand", "seat": 1, "cards": state._hands[1][:]}, (0,))
    assert leaks_in_events([leak], 0, hidden0, hidden0, set(), "deal")
    other = state.clone()
    adapter.shuffle_hidden(other, 0, random.Random(3))
    assert other._hands[1] != state._hands[1] and other.observe(0) == state.observe(0)


# -- the real runner and the seat replay ------------------------------------------------------------


def expected_streams(rec, name: str) -> tuple[list[list[dict]], list[list[tuple[str, dict]]]]:
    """Replay a record through the engine: the messages each seat should have got
    (events and requests, in order), and, per seat, what fails the event check
    among the record lines its replay view (``entries_for_seat``) keeps."""
    spec = GAMES[name]
    adapter = ADAPTERS[name]
    options = spec.normalize_options(rec.header.options)
    seats = spec.num_seats(options)
    state, first = spec.new_game(rec.header.seed, options)
    streams: list[list[dict]] = [[] for _ in range(seats)]
    failures: list[list[tuple[str, dict]]] = [[] for _ in range(seats)]
    viewed = [{id(e) for e in entries_for_seat(rec.entries, s)} for s in range(seats)]
    pending = list(first)
    hidden = [adapter.hidden(state, s) for s in range(seats)]
    before, action, actor, decision = hidden, "", None, ""
    batch: list[tuple[dict, Event]] = []

    def check_batch() -> list[set[str]]:
        after = [adapter.hidden(state, s) for s in range(seats)]
        for s in range(seats):
            events = [ev for entry, ev in batch if id(entry) in viewed[s]]
            seen = cards_in(action) if (s == actor or decision in adapter.public_decisions) else set()
            failures[s].extend(leaks_in_events(events, s, before[s], after[s], seen, adapter.deal_event))
        return after

    for entry in rec.entries:
        if entry.record == "event":
            ev = pending.pop(0)
            assert ev.data == entry.event and (list(ev.to) if ev.to else None) == entry.to
            batch.append((entry, ev))
            for s in range(seats):
                if ev.visible_to(s):
                    streams[s].append({"type": "event", "event": ev.data})
        elif entry.record == "decision":
            before = check_batch()
            batch = []
            actor, action, decision = entry.seat, entry.action, state.decision()
            streams[actor].append({"type": "request", "id": entry.n, "seat": actor, "decision": decision,
                                   "state": state.observe(actor), "legal": state.legal_actions()})
            if id(entry) in viewed[actor] and cards_in(entry.model_dump()) & before[actor]:
                failures[actor].append((",".join(sorted(cards_in(entry.model_dump()) & before[actor])), entry))
            for s in range(seats):  # a seat's view holds no one else's decisions
                assert s == actor or id(entry) not in viewed[s]
            pending.extend(state.apply(action))
    check_batch()
    return streams, failures


@pytest.mark.parametrize(("name", "options", "seed"), [
    ("back-alley", {}, 21),
    ("schmier", {"max_deals": 6}, 22),
    ("pegs-and-jokers", {"players": 4, "max_turns": 300}, 23),
])
def test_the_runner_sends_each_bot_exactly_its_engine_view_and_seat_replays_hide_the_rest(
    name, options, seed, tmp_path
):
    if name not in GAMES:
        pytest.skip(f"{name} is not built yet")
    spec = GAMES[name]
    seats = spec.num_seats(spec.normalize_options(options))
    bots = [BotSpec("listener", (sys.executable, str(LISTENER))) for _ in range(seats)]
    record, stderr = tmp_path / "game.jsonl", tmp_path / "stderr"
    result = trio.run(lambda: run_match(name, options, bots, seed=seed, record_path=record, stderr_dir=stderr,
                                        limits=Limits(decision_s=10, handshake_s=20, stderr_keep_bytes=256 << 20)))
    assert result.fault is None, result.fault
    rec = read_record(record)
    streams, failures = expected_streams(rec, name)
    received: list[list[dict]] = [[] for _ in range(seats)]
    for s in range(seats):
        got = [json.loads(line) for line in (stderr / f"seat{s}-listener.log").read_text().splitlines()]
        assert got[0]["type"] == "hello" and not cards_in(got[0])
        assert got[-1]["type"] == "game_over"
        middle = [{k: v for k, v in m.items() if k != "time_ms"} for m in got[1:-1]]
        assert middle == streams[s], f"seat {s} got other messages than its engine view"
        assert not failures[s], f"replay --seat {s} shows hidden cards: {failures[s][:3]}"
        received[s] = [m["event"] for m in middle if m["type"] == "event"]
    check_drawn_cards_reach_their_seat_alone(rec, received)
    check_printed_seat_replays(rec, record, name, seats)


def check_drawn_cards_reach_their_seat_alone(rec, received: list[list[dict]]) -> None:
    """Every game's drawing: everyone gets the public ``draw`` {seat, count}; the private
    ``drawn`` {seat, cards} reaches its own seat and no other (and there was one)."""
    recorded = [e for e in rec.entries if e.record == "event" and e.event["type"] in ("draw", "drawn")]
    drawn = [e for e in recorded if e.event["type"] == "drawn"]
    assert drawn, "the game drew no card: pick a seed where one is drawn"
    assert all(e.to == [e.event["seat"]] for e in drawn)
    public = [e.event for e in recorded if e.event["type"] == "draw"]
    assert all(e.to is None and set(e.event) == {"type", "seat", "count"} for e in recorded
               if e.event["type"] == "draw")
    for s, events in enumerate(received):
        assert [e for e in events if e["type"] == "draw"] == public
        mine = [e for e in events if e["type"] == "drawn"]
        assert mine == [e.event for e in drawn if e.event["seat"] == s]
        assert all(e["seat"] == s for e in mine)


def check_printed_seat_replays(rec, record: Path, name: str, seats: int) -> None:
    """``referee replay --seat S --deal D`` prints no card that stayed hidden from S
    through all of deal D and that no event S may see named."""
    spec = GAMES[name]
    adapter = ADAPTERS[name]
    options = spec.normalize_options(rec.header.options)
    state, events = spec.new_game(rec.header.seed, options)
    never_shown: dict[int, list[set[str]]] = {}
    deal = 1

    def absorb(evs: list[Event]) -> None:
        nonlocal deal
        for ev in evs:
            if ev.data.get("type") == adapter.deal_event:
                deal = ev.data.get("deal", deal)
                never_shown.setdefault(deal, [adapter.hidden(state, s) for s in range(seats)])
            for s in range(seats):
                if ev.visible_to(s) and deal in never_shown:
                    never_shown[deal][s] -= cards_in(ev.data)
        for s in range(seats):
            never_shown.setdefault(deal, [adapter.hidden(state, s) for s in range(seats)])[s] &= (
                adapter.hidden(state, s))

    absorb(events)
    for entry in rec.entries:
        if entry.record == "decision":
            absorb(state.apply(entry.action))
    rng = random.Random(len(rec.entries))
    deals = sorted(never_shown)
    for d in sorted(rng.sample(deals, min(2, len(deals)))):
        for s in rng.sample(range(seats), 2):
            args = ["replay", record, "--seat", s] + (["--deal", d] if name != "pegs-and-jokers" else [])
            shown = subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True,
                                   text=True, cwd=ROOT, timeout=60)
            assert shown.returncode == 0, shown.stderr
            printed = cards_in(shown.stdout)
            assert not printed & never_shown[d][s], (d, s, printed & never_shown[d][s])
            assert never_shown[d][s] or name == "pegs-and-jokers", "nothing to check"
