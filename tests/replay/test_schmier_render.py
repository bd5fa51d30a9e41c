"""The Schmier renderer on real seeded playouts."""

from __future__ import annotations

import json

from referee.games.schmier import SPEC
from referee.match.record import EventLine
from referee.replay import RENDERERS
from referee.replay.schmier import RENDERER

from .playouts import event_entry, recorded_playout


def record(seed, options=None, choice_seed=None):
    """Match-record entries (events + decisions) of a random playout."""
    return recorded_playout(SPEC, seed, options, seed if choice_seed is None else choice_seed)


def seat_view(entries, seat):
    """What the match runner hands the renderer when replaying for ``seat``."""
    return [e for e in entries
            if e.record == "event" and (e.to is None or seat in e.to) or e.record == "decision" and e.seat == seat]


# --- renderer --------------------------------------------------------------------


def test_renderer_is_registered():
    assert RENDERERS["schmier"] is RENDERER


def test_score_table_has_one_row_per_played_deal_ending_at_the_final_scores():
    entries, state = record(5, {"max_deals": 6})
    header, rows = RENDERER.score_table(entries)
    scores = [e.event for e in entries if e.record == "event" and e.event["type"] == "deal_score"]
    assert len(rows) == len(scores) == state.played
    assert all(len(r) == len(header) for r in rows)
    assert all(isinstance(c, str) for r in rows for c in r)
    assert header[:6] == ["deal", "dealer", "declarer", "bid", "trump", "made"]
    assert header[6:12] == ["high", "low", "right", "left", "joker", "game"]
    assert [int(x) for x in rows[-1][-3:]] == list(state.outcome().scores)
    first = scores[0]
    assert rows[0][0] == str(first["deal"]) and rows[0][3] == str(first["bid"])
    assert rows[0][6:12] == [f"T{first['points'][p]}" if first["points"][p] is not None else "-"
                             for p in ("high", "low", "right", "left", "joker", "game")]


def test_score_table_skips_all_pass_deals():
    state, events = SPEC.new_game(1)
    entries = [event_entry(e) for e in events]
    for _ in range(6):
        entries.extend(event_entry(e) for e in state.apply("pass"))
    assert RENDERER.score_table(entries)[1] == []


def test_render_shows_every_deal_with_hands_bids_exchange_tricks_and_points():
    entries, state = record(7, {"max_deals": 3})
    lines = RENDERER.render(entries)
    text = "\n".join(lines)
    assert text.count("Deal ") == state.deal
    assert "hands:" in text and "bids:" in text and "trump:" in text
    assert "discards and draws:" in text and "(dealer): took" in text
    assert "points: high" in text and "Game over" in text
    assert sum(1 for line in lines if "-> s" in line) == 6 * state.played
    json.dumps(lines)


def test_render_one_deal():
    entries, state = record(7, {"max_deals": 3})
    lines = RENDERER.render(entries, deal=2)
    assert lines[0].startswith("Deal 2 ")
    assert not any(line.startswith("Deal 1 ") or line.startswith("Deal 3 ") for line in lines)


def test_render_for_one_seat_shows_only_what_it_saw():
    entries, _ = record(9, {"max_deals": 2})
    lines = RENDERER.render(seat_view(entries, 4), seat=4)
    hands = [line for line in lines if line.startswith("    seat ") and "(T" in line]
    assert hands and all(line.startswith("    seat 4 (T1): ") for line in hands)
    exchange = [line for line in lines if "discarded" in line]
    assert exchange
    for line in exchange:
        if line.startswith("    seat 4"):  # own discards and draws: the cards
            assert "discarded 0" in line or "(" in line
        else:  # the others: counts only
            assert "(" not in line.replace("(dealer)", "")
    full = RENDERER.render(entries)
    assert sum(1 for line in full if "discarded" in line and "(" in line.replace("(dealer)", "")) > len(
        [line for line in exchange if "(" in line.replace("(dealer)", "")]
    )


def test_render_copes_with_a_truncated_record():
    entries, _ = record(11, {"max_deals": 2})
    for cut in range(0, len(entries), 7):
        part = entries[:cut]
        lines = RENDERER.render(part)
        RENDERER.score_table(part)
        if cut and cut < len(entries):
            assert not any("Game over" in line for line in lines)
    assert RENDERER.render([]) == [] and RENDERER.score_table([])[1] == []


def test_render_a_draw_and_an_abort():
    state, events = SPEC.new_game(2, {"max_redeals": 1})
    entries = [event_entry(e) for e in events]
    for _ in range(6):
        entries.extend(event_entry(e) for e in state.apply("pass"))
    text = "\n".join(RENDERER.render(entries))
    assert "all six passed" in text and "Game over: aborted (max_redeals)" in text
    draw = {"type": "game_over", "status": "draw", "winners": [], "scores": [22, 22, 3],
            "reason": "target_reached", "detail": {"tied": [0, 1]}}
    assert RENDERER.render([EventLine(event=draw, to=None)]) == [
        "Game over: draw between T0, T1 (target_reached) · final scores 22 / 22 / 3"
    ]
