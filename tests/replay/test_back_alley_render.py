"""The Back Alley renderer on real playouts."""

from __future__ import annotations

import pytest

from referee.games.back_alley import SPEC, BackAlleyState
from referee.match.record import DecisionLine, EventLine
from referee.replay.back_alley import RENDERER

from .playouts import event_entry, recorded_playout


def record(seed, choice_seed=1, options=None):
    """Match-record entries (events and decisions) of a seeded random game."""
    entries, state = recorded_playout(SPEC, seed, options, choice_seed)
    return state, entries


def seat_view(entries, seat):
    return [
        e for e in entries
        if (e.record == "event" and (e.to is None or seat in e.to))
        or (e.record == "decision" and e.seat == seat)
    ]


@pytest.fixture(scope="module")
def game():
    return record(3)


def test_score_table_has_one_row_per_counted_deal_with_running_totals(game):
    state, entries = game
    header, rows = RENDERER.score_table(entries)
    assert header[:4] == ["deal", "h", "dealer", "trump"] and len(header) == len(rows[0])
    assert [r[0] for r in rows] == [str(k) for k in range(1, 26)]
    assert rows[0][1] == "13" and rows[12][1] == "1"
    assert all(isinstance(c, str) for r in rows for c in r)
    assert [int(rows[-1][-2]), int(rows[-1][-1])] == list(state.outcome().scores)
    trumps = {r[3] for r in rows}
    assert trumps <= {"C", "D", "H", "S", "NT"}


def test_score_table_writes_board_contracts_with_their_level():
    state, events = BackAlleyState.from_deal(
        dealer=3, hands=[["AS", "AH"], ["3S", "3H"], ["4S", "4H"], ["5S", "5H"]],
        stock=["BJ", "LJ"], deal=12)
    entries = [EventLine(event=e.data, to=None) for e in events]
    for a in ["board", "board", "pass", "pass", "3S", "4S", "5S", "AS", "AH", "3H", "4H", "5H"]:
        entries += [EventLine(event=e.data, to=None) for e in state.apply(a)]
    header, rows = RENDERER.score_table(entries)
    assert rows[0] == ["12", "2", "3", "NT", "board", "2", "20", "board×2", "0", "-40", "20", "-40"]


def test_render_shows_every_deal_hands_bids_tricks_and_scores(game):
    state, entries = game
    lines = RENDERER.render(entries)
    text = "\n".join(lines)
    assert sum(1 for ln in lines if ln.startswith("Deal ")) >= 25
    assert sum(1 for ln in lines if ln.strip().startswith("hand ")) >= 100
    assert sum(1 for ln in lines if ln.strip().startswith("trick ")) == 181
    assert sum(1 for ln in lines if ln.strip().startswith("score:")) == 25
    assert sum(1 for ln in lines if ln.strip().startswith("bids:")) >= 25
    assert lines[-1].startswith("Game over")
    assert "turn-up" in text


def test_render_one_deal(game):
    _, entries = game
    lines = RENDERER.render(entries, deal=13)
    assert lines[0].startswith("Deal 13 (h=1)")
    assert sum(1 for ln in lines if ln.strip().startswith("trick ")) == 1
    assert not any(ln.startswith("Deal ") and not ln.startswith("Deal 13 ") for ln in lines)


def test_render_for_one_seat_shows_only_its_hand(game):
    _, entries = game
    lines = RENDERER.render(seat_view(entries, 2), seat=2)
    hands = [ln for ln in lines if ln.strip().startswith("hand ")]
    assert hands and all(ln.strip().startswith("hand 2:") for ln in hands)
    assert sum(1 for ln in lines if ln.strip().startswith("trick ")) == 181


def test_render_copes_with_a_truncated_record(game):
    _, entries = game
    for cut in (0, 1, 7, 60, 333, 1001):
        lines = RENDERER.render(entries[:cut])
        assert isinstance(lines, list)
        RENDERER.score_table(entries[:cut])
    # Cut right after the second card of some trick: the partial trick is shown.
    cut = next(i for i, e in enumerate(entries)
               if e.record == "event" and e.event["type"] == "play"
               and entries[i - 2].event["type"] == "play"
               and entries[i - 4].event["type"] != "play")
    lines = RENDERER.render(entries[:cut + 1])
    assert lines[-1].strip().startswith("unfinished trick:")
    first, second = entries[cut - 2].event, entries[cut].event
    assert lines[-1] == (f"  unfinished trick: s{first['seat']} {first['card']}  "
                         f"s{second['seat']} {second['card']}")


def test_every_trick_card_is_labelled_by_the_seat_that_played_it(game):
    _, entries = game
    lines = [ln for ln in RENDERER.render(entries) if ln.startswith("  trick ")]
    tricks = [e.event for e in entries if e.record == "event" and e.event["type"] == "trick"]
    plays = [e.event for e in entries if e.record == "event" and e.event["type"] == "play"]
    assert len(lines) == len(tricks) == len(plays) // 4 == 181
    for i, (line, trick) in enumerate(zip(lines, tricks, strict=True)):
        four = plays[4 * i: 4 * i + 4]
        labelled = "  ".join(f"s{p['seat']} {p['card']}" for p in four)
        assert line == (f"  trick {trick['n']}: {labelled} -> seat {trick['winner']} wins "
                        f"(tricks {trick['tricks_won'][0]}-{trick['tricks_won'][1]})")
        assert four[0]["seat"] == trick["leader"]


def test_an_all_pass_deal_is_shown_as_not_counted_and_redealt():
    state, events = SPEC.new_game(6)
    entries = [event_entry(e) for e in events]
    for bid in ("pass",) * 4:
        entries.extend(event_entry(e) for e in state.apply(bid))
    lines = RENDERER.render(entries)
    assert "  all pass: not counted (1 in a row)" in lines
    assert sum(1 for ln in lines if ln.startswith("Deal 1 ")) == 2
    redealt = [ln for ln in lines if ln.startswith("Deal 1 ")][1]
    assert lines.index(redealt) > lines.index("  all pass: not counted (1 in a row)")
    assert redealt.endswith(", redeal after 1 all-pass")


def test_render_copes_with_odd_entries():
    # Typed lines cannot be of an unknown kind or lack their event: odd payloads can.
    junk = [EventLine(event={"type": "trick"}, to=None), EventLine(event={"type": "deal_score"}, to=None),
            DecisionLine(n=1, seat=0, decision="bid", legal=["1"], action="1", ms=0.0)]
    assert RENDERER.render(junk)
    header, rows = RENDERER.score_table(junk)
    assert len(rows) == 1 and len(rows[0]) == len(header)


def test_render_shows_the_joker_discard_and_the_private_draw():
    state, events = BackAlleyState.from_deal(
        dealer=3, hands=[["AS"], ["KH"], ["LJ"], ["QD"]], stock=["BJ", "4C"], deal=13)
    entries = [event_entry(e) for e in events]
    text = "\n".join(RENDERER.render(entries))
    assert "seat 2 discards LJ" in text and "seat 2 draws 4C" in text
    text = "\n".join(RENDERER.render(seat_view(entries, 1), seat=1))
    assert "seat 2 discards LJ" in text and "4C" not in text
