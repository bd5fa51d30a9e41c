"""One contract test that every game passes (pgx ``api_test`` style).

Seeded random playouts check: every offered action applies; illegal and
unparseable actions are refused without changing the state; every game ends;
the same seed and the same choices give the same game; events are JSON-able
and address real seats; observations are JSON-able and name the seat; every
offered action text round-trips through the game's notation
(``spec.action_type``).  ``CONFIGS`` must cover every registered game.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from referee.games import GAMES, IllegalAction, InvalidAction, ParsedAction, team_of_seat

# (game, options) pairs played by the contract test; every player count of
# every game is covered.
CONFIGS = [
    ("back-alley", {}),
    ("schmier", {}),
    ("pegs-and-jokers", {"players": 4}),
    ("pegs-and-jokers", {"players": 6}),
    ("pegs-and-jokers", {"players": 8}),
]
PLAYOUTS = {"back-alley": 40, "schmier": 200, "pegs-and-jokers": 70}
MAX_STEPS = 200_000


def configs():
    for name, options in CONFIGS:
        yield pytest.param(name, options, id=f"{name}-{options.get('players', '')}")


def test_the_configs_cover_every_registered_game_and_only_those():
    assert {name for name, _ in CONFIGS} == set(GAMES) == set(PLAYOUTS)


def playout(name, options, seed, choice_seed, checks=False):
    spec = GAMES[name]
    options = spec.normalize_options(options)
    state, events = spec.new_game(seed, options)
    rng = random.Random(choice_seed)
    trace = [e.data for e in events]
    seats = spec.num_seats(options)
    steps = 0
    while (seat := state.to_act()) is not None:
        steps += 1
        assert steps < MAX_STEPS, "game did not end"
        legal = state.legal_actions()
        assert legal, "a seat to act must have at least one legal action"
        assert len(set(legal)) == len(legal), f"duplicate legal actions: {legal}"
        assert all(isinstance(a, str) for a in legal)
        if checks:
            obs = state.observe(seat)
            json.dumps(obs)
            assert obs.get("seat") == seat
            assert isinstance(state.decision(), str)
            with pytest.raises(InvalidAction):
                state.apply("\x00not an action\x00")
            assert state.to_act() == seat and state.legal_actions() == legal
        action = rng.choice(legal)
        new_events = state.apply(action)
        for e in new_events:
            assert isinstance(e.data.get("type"), str)
            if e.to is not None:
                assert all(0 <= s < seats for s in e.to)
        trace.append((seat, action))
        trace.extend(e.data for e in new_events)
    # Every event is JSON-able: one encoding of the whole trace, which holds every event's data
    # (one json.dumps per event was a third of a Schmier playout's time).
    json.dumps(trace)
    outcome = state.outcome()
    assert outcome is not None
    assert outcome.status in ("win", "draw", "aborted")
    assert len(outcome.scores) == spec.num_teams(options)
    if outcome.status == "win":
        assert outcome.winners
    else:
        assert not outcome.winners
    json.dumps(outcome.to_json())
    return trace, outcome


#: The playouts of a game are shared out among this many tests, which pytest-xdist can run on
#: different workers (Schmier's 200 in one test held a worker for up to 2 minutes of a full run).
PLAYOUT_PARTS = 4


@pytest.mark.parametrize("part", range(PLAYOUT_PARTS))
@pytest.mark.parametrize("name,options", list(configs()))
def test_random_playouts_end_and_respect_the_contract(name, options, part):
    for i in range(part, PLAYOUTS[name] // (3 if name == "pegs-and-jokers" else 1), PLAYOUT_PARTS):
        playout(name, options, seed=i, choice_seed=1000 + i, checks=(i < 3))


@pytest.mark.parametrize("name,options", list(configs()))
def test_every_offered_action_round_trips_through_the_notation(name, options):
    spec = GAMES[name]
    notation = spec.action_type
    assert issubclass(notation, ParsedAction)
    opts = spec.normalize_options(options)
    texts = 0
    for seed in range(3):
        state, _ = spec.new_game(seed, opts)
        rng = random.Random(seed)
        while state.to_act() is not None:
            legal = state.legal_actions()
            for text in legal:
                value = notation.from_text(text)
                assert isinstance(value, notation)
                assert value.text() == text, f"{text!r} parses to {value!r}, which writes {value.text()!r}"
                assert notation.from_text(value.text()) == value
                assert type(value).from_text(text) == value
            texts += len(legal)
            state.apply(rng.choice(legal))
    assert texts > 1000
    for bad in ("\x00not an action\x00", "", " ", None, 7, ["pass"], b"pass"):
        with pytest.raises(InvalidAction):
            notation.from_text(bad)


@pytest.mark.parametrize("name,options", list(configs()))
def test_same_seed_and_choices_give_the_same_game(name, options):
    a = playout(name, options, seed=42, choice_seed=7)
    b = playout(name, options, seed=42, choice_seed=7)
    assert a == b
    c = playout(name, options, seed=43, choice_seed=7)
    assert c[0] != a[0]


@pytest.mark.parametrize("name,options", list(configs()))
def test_an_action_not_offered_is_refused_and_leaves_the_state_alone(name, options):
    spec = GAMES[name]
    opts = spec.normalize_options(options)
    state, _ = spec.new_game(5, opts)
    rng = random.Random(5)
    refused = 0
    for _ in range(300):
        if state.to_act() is None:
            break
        legal = state.legal_actions()
        probe = state.clone()
        candidates = _near_miss_actions(legal)
        for bad in candidates:
            if bad in legal:
                continue
            with pytest.raises((IllegalAction, InvalidAction)):
                probe.apply(bad)
            refused += 1
            assert probe.legal_actions() == legal
        state.apply(rng.choice(legal))
    assert refused > 0


@pytest.mark.parametrize("name,options", list(configs()))
def test_an_action_that_is_not_a_string_is_invalid(name, options):
    spec = GAMES[name]
    state, _ = spec.new_game(6, spec.normalize_options(options))
    legal = state.legal_actions()
    for bad in (None, 7, [legal[0]], {"action": legal[0]}, legal[0].encode()):
        with pytest.raises(InvalidAction):
            state.apply(bad)
        assert state.legal_actions() == legal


def _near_miss_actions(legal):
    """Plausible-looking actions: every card, bids, and mutations of legal ones."""
    from referee.games.cards import STANDARD_DECK

    out = list(STANDARD_DECK) + ["BJ", "LJ", "JK", "pass", "board", "done", "0", "7", "13", "C", "H"]
    for a in legal[:5]:
        out.append(a + "x")
        out.append(a[::-1])
    return out


@pytest.mark.parametrize("name,options", list(configs()))
def test_every_view_of_a_seats_team_is_the_one_rule(name, options):
    """RULES.md 0.2: the spec, the state, the observations and the events all
    say the team of a seat is ``team_of_seat(seat, num_teams)``."""
    spec = GAMES[name]
    opts = spec.normalize_options(options)
    state, _ = spec.new_game(3, opts)
    k = spec.num_teams(opts)
    assert state.num_teams == k and state.num_seats == spec.num_seats(opts)
    for seat in range(spec.num_seats(opts)):
        assert spec.team_of(seat, opts) == state.team_of(seat) == team_of_seat(seat, k)
        assert state.observe(seat).get("team", team_of_seat(seat, k)) == team_of_seat(seat, k)


def _scramble(value):
    """Empty every dict and list inside ``value`` (a caller free to change what it got)."""
    children = list(value.values()) if isinstance(value, dict) else value if isinstance(value, list) else []
    for child in children:
        _scramble(child)
    if isinstance(value, (dict, list)):
        value.clear()


@pytest.mark.parametrize("name,options", list(configs()))
def test_events_belong_to_the_caller(name, options):
    """Changing the data of the events a game returned changes neither that game
    nor another one: the engine keeps no reference to them and shares none."""
    spec = GAMES[name]
    opts = spec.normalize_options(options)
    games = [spec.new_game(11, opts) for _ in range(2)]
    (mine, mine_events), (other, other_events) = games
    rng = random.Random(11)
    for _ in range(1500):
        assert [e.data for e in mine_events] == [e.data for e in other_events]
        for e in mine_events:
            _scramble(e.data)
        seat = mine.to_act()
        assert seat == other.to_act()
        if seat is None:
            break
        legal = mine.legal_actions()
        assert legal == other.legal_actions()
        assert json.dumps(mine.observe(seat), sort_keys=True) == json.dumps(other.observe(seat), sort_keys=True)
        action = rng.choice(legal)
        mine_events, other_events = mine.apply(action), other.apply(action)


@pytest.mark.parametrize("name,options", list(configs()))
def test_clone_is_independent(name, options):
    spec = GAMES[name]
    state, _ = spec.new_game(9, spec.normalize_options(options))
    copy = state.clone()
    before = (copy.to_act(), copy.legal_actions(), json.dumps(copy.observe(0), sort_keys=True))
    state.apply(state.legal_actions()[0])
    assert (copy.to_act(), copy.legal_actions(), json.dumps(copy.observe(0), sort_keys=True)) == before


#: The event vocabulary every game shares (docs/protocol.md, "Events every game sends").
SHARED_EVENT_KEYS = {
    "deal": {"deal", "dealer"},
    "hand": {"seat", "cards"},
    "play": {"seat", "card"},
    "trick": {"n", "leader", "cards", "winner"},
    "draw": {"seat", "count"},
    "drawn": {"seat", "cards"},
    "redeal": {"deal", "dealer", "redeals"},
    "game_over": {"status", "winners", "scores", "reason", "detail"},
}


def _passing_playout(spec, opts, seed, passes):
    """Events of a seeded game whose first ``passes`` decisions say ``pass`` where they may
    (all-pass deals, so redeals), then random choices."""
    state, events = spec.new_game(seed, opts)
    log = [(e.data, e.to) for e in events]
    rng = random.Random(seed)
    while state.to_act() is not None:
        legal = state.legal_actions()
        action = "pass" if passes > 0 and "pass" in legal else rng.choice(legal)
        passes -= 1
        log += [(e.data, e.to) for e in state.apply(action)]
    return state, log


@pytest.mark.parametrize("name,options", list(configs()))
def test_every_game_speaks_the_one_event_vocabulary(name, options):
    """``deal``/``hand``, a public ``draw`` {seat, count} followed by a private ``drawn``
    {seat, cards} for that seat alone, ``redeal`` for an all-pass deal, and ``game_over``
    (the outcome) last: the same names and shapes in every game, so one bot follows all."""
    spec = GAMES[name]
    opts = spec.normalize_options(options)
    seen: Counter[str] = Counter()
    for seed in range(30):  # a Back Alley joker draw (BA-3.2) needs a few games
        if seed >= 2 and seen["drawn"]:
            break
        state, log = _passing_playout(spec, opts, seed, passes=3 * spec.num_seats(opts))
        kinds = [d["type"] for d, _ in log]
        assert "game_end" not in kinds and "all_pass" not in kinds
        assert kinds.count("game_over") == 1 and kinds[-1] == "game_over"
        assert {k: log[-1][0][k] for k in state.outcome().to_json()} == state.outcome().to_json()
        for i, (data, to) in enumerate(log):
            kind = data["type"]
            seen[kind] += 1
            if kind in SHARED_EVENT_KEYS:
                assert SHARED_EVENT_KEYS[kind] <= set(data), data
            if kind == "hand":
                assert to == (data["seat"],)
            elif kind == "draw":
                assert to is None and "cards" not in data and data["count"] >= 0
                if data["count"]:
                    nxt, nxt_to = log[i + 1]
                    assert nxt == {"type": "drawn", "seat": data["seat"], "cards": nxt["cards"]}
                    assert nxt_to == (data["seat"],) and len(nxt["cards"]) == data["count"]
            elif kind == "drawn":
                assert to == (data["seat"],) and log[i - 1][0]["type"] == "draw"
            elif kind == "redeal":
                assert to is None and kinds[i + 1] in ("deal", "game_over")
            elif kind == "trick":
                n = len(data["cards"])
                plays = [d for d, _ in log[:i] if d["type"] == "play"][-n:]
                assert [p["seat"] for p in plays] == [(data["leader"] + k) % n for k in range(n)]
                assert [p["card"] for p in plays] == data["cards"]
    assert seen["draw"] > 0 and seen["drawn"] > 0
    if name != "pegs-and-jokers":  # one deal per game there (PJ-3)
        assert seen["redeal"] > 0
