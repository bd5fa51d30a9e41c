"""Pegs and Jokers renderer: score table and replay from record entries of a real playout."""

from __future__ import annotations

from referee.games.pegs_and_jokers import SPEC
from referee.match.record import EventLine, FaultLine
from referee.replay import RENDERERS
from referee.replay.pegs_and_jokers import RENDERER

from .playouts import recorded_playout


def record(seed: int, players: int = 4, max_turns: int = 10_000):
    """Record entries (the match-record format) of a seeded random playout, and the final state."""
    return recorded_playout(SPEC, seed, {"players": players, "max_turns": max_turns}, seed)


def seat_view(entries, seat):
    """What the caller passes for one seat: visible events, own decisions only."""
    out = []
    for entry in entries:
        if entry.record == "event" and entry.to is not None and seat not in entry.to:
            continue
        if entry.record == "decision" and entry.seat != seat:
            continue
        out.append(entry)
    return out


def test_renderer_is_registered():
    assert RENDERERS["pegs-and-jokers"] is RENDERER


def test_score_table_summarises_the_game():
    entries, state = record(3)
    header, rows = RENDERER.score_table(entries)
    assert header == ["player", "team", "pegs home", "hits", "turns", "result"]
    assert all(isinstance(c, str) for row in rows for c in row)
    counts = state.home_counts()
    out = state.outcome()
    assert [r[2] for r in rows[:4]] == [str(c) for c in counts]
    assert [r[3] for r in rows[:4]] == [str(h) for h in state.hits]
    team_rows = rows[4:6]
    assert [r[2] for r in team_rows] == [str(s) for s in out.scores]
    assert {r[5] for r in team_rows} == {"win", "loss"}
    assert team_rows[out.winners[0]][5] == "win"
    assert rows[-1][4] == str(state.turn) and "wins" in rows[-1][5]


def test_score_table_of_a_draw_and_of_a_truncated_record():
    entries, state = record(4, max_turns=30)
    assert state.outcome().status == "draw"
    _, rows = RENDERER.score_table(entries)
    assert rows[4][5] == rows[5][5] == "draw" and "max_turns" in rows[-1][5]
    _, rows = RENDERER.score_table(entries[:40])
    assert rows[-1][5] == "unfinished"
    assert RENDERER.score_table([]) == (["player", "team", "pegs home", "hits", "turns", "result"], [])


def test_render_shows_every_turn_with_card_move_hits_and_the_board():
    entries, state = record(5)
    lines = RENDERER.render(entries)
    assert lines[0].startswith("Pegs and Jokers: 4 players, 72 track holes, 162 cards")
    assert sum(1 for line in lines if line.startswith("turn ")) == state.turn
    moves = [e.event for e in entries if e.record == "event" and e.event["type"] == "move"]
    first = moves[0]
    assert any(f"seat {first['seat']} plays {first['card']}: {first['action'].split(' ', 1)[1]}" in line
               for line in lines)
    assert any("hits: " in line for line in lines)
    assert sum(1 for line in lines if line.startswith("  side 0 ")) == len(moves) + 1
    assert lines[-1].startswith(f"game over after {state.turn} turns: team")
    # the last drawing matches the final board
    final = lines[-5:-1]
    for colour, pegs in enumerate(state.peg_texts()):
        assert f"start {pegs.count('S')}" in final[colour]
        assert final[colour].count(str(colour)) >= sum(1 for p in pegs if p[0] in "TH")


def test_render_for_one_seat_shows_only_its_own_cards():
    entries, _ = record(6, players=6)
    lines = RENDERER.render(seat_view(entries, 2), seat=2)
    hands = [line for line in lines if line.startswith("  hand of seat")]
    draws = [line for line in lines if " drew " in line]
    assert hands == [line for line in hands if line.startswith("  hand of seat 2:")] and len(hands) == 1
    assert draws and all(line.startswith("  seat 2 drew") for line in draws)
    assert "(seat 2's view)" in lines[0]


def test_render_copes_with_truncation_odd_entries_and_a_deal_filter():
    entries, _ = record(7, players=8)
    cut = entries[: len(entries) // 3]
    lines = RENDERER.render(cut)
    assert lines[-1] == "(record ends before the game did)"
    assert RENDERER.render(entries, deal=2) == []
    assert RENDERER.render(entries, deal=1) == RENDERER.render(entries)
    assert RENDERER.render([]) == ["(no deal in this record)"]
    # Typed lines cannot be of an unknown kind: odd payloads and other kinds of line can.
    junk = cut[:3] + [EventLine(event={"type": "move", "parts": [None, {"peg": 3}]}, to=None),
                      FaultLine(seat=0, reason="timeout"), EventLine(event={"type": "game_over"}, to=None)]
    RENDERER.render(junk)
    RENDERER.score_table(junk)
