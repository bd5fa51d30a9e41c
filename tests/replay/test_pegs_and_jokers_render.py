"""Pegs and Jokers renderer: score table and replay from record entries of a real playout."""

from __future__ import annotations

import re

from referee.games.pegs_and_jokers import SPEC
from referee.match.record import EventLine, FaultLine
from referee.replay import RENDERERS
from referee.replay.pegs_and_jokers import RENDERER

from .playouts import recorded_playout

CARD_RE = re.compile(r"[2-9TJQKA][CDHS]|JK")


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


def turn_lines(lines):
    return [line for line in lines if line.startswith("turn ")]


def boards_after_each_turn(lines):
    """{turn: its four side rows} from a replay drawn with ``board_every=1``."""
    out = {}
    for i, line in enumerate(lines):
        if line.startswith("board after turn "):
            out[int(line.split()[3].rstrip(":"))] = lines[i + 1:i + 5]
    return out


def test_render_shows_every_turn_on_one_line_with_draw_card_move_and_hits():
    entries, state = record(5)
    lines = RENDERER.render(entries)
    assert lines[0].startswith("Pegs and Jokers: 4 players, 72 track holes, 162 cards")
    assert lines[1].startswith("  board: one line per side p")
    turns = turn_lines(lines)
    assert len(turns) == state.turn
    assert [int(t.split()[1].rstrip(":")) for t in turns] == list(range(1, state.turn + 1))
    evs = [e.event for e in entries if e.record == "event"]
    first = next(i for i, e in enumerate(evs) if e["type"] == "move")
    move, turn, drawn = evs[first], evs[first - 3], evs[first - 1]
    assert (turn["type"], drawn["type"]) == ("turn", "drawn")
    assert turns[move["turn"] - 1] == (
        f"turn {move['turn']}: seat {move['seat']} drew {' '.join(drawn['cards'])} ({turn['draw_pile']} left), "
        f"plays {move['card']}: {move['action'].split(' ', 1)[1]}")
    assert any("  hits: colour " in t for t in turns) and any(" for colour " in t for t in turns)
    assert any(t.endswith(" (no move)") for t in turns)
    assert lines[-1].startswith(f"game over after {state.turn} turns: team")
    final = lines[-5:-1]
    assert lines[-6] == "final board:"
    for colour, pegs in enumerate(state.peg_texts()):
        assert f"start {pegs.count('S')}" in final[colour]
        assert final[colour].count(str(colour)) >= sum(1 for p in pegs if p[0] in "TH")


def test_the_board_is_drawn_where_it_changed_and_every_k_turns_on_request():
    entries, state = record(5)
    every = RENDERER.render(entries, board_every=1)
    after = boards_after_each_turn(every)
    moves = {e.event["turn"] for e in entries if e.record == "event" and e.event["type"] == "move"}
    assert set(after) == moves
    # Every drawing agrees with the pegs the engine had after that turn.
    replayed, events = SPEC.new_game(5, {"players": 4, "max_turns": 10_000})
    for entry in entries:
        if entry.record != "decision":
            continue
        replayed.apply(entry.action)
        if replayed.turn in after:
            rows = after[replayed.turn]
            for colour, pegs in enumerate(replayed.peg_texts()):
                assert f"start {pegs.count('S')}  home " in rows[colour]
                for p in pegs:
                    if p[0] == "T":
                        hole = int(p[1:])
                        assert rows[hole // 18].split("|")[1][hole % 18] == str(colour)
    # The default replay draws the sides that changed: applied to the first drawing they give
    # the same board as the full drawing after every move, turn by turn.
    lines = RENDERER.render(entries)
    board = lines[5:9]
    assert [row.split()[:2] for row in board] == [["side", str(s)] for s in range(4)]
    turn = 0
    for line in lines[9:]:
        if line.startswith("turn "):
            if turn in after:
                assert board == after[turn], f"after turn {turn}"
            turn = int(line.split()[1].rstrip(":"))
        elif line.startswith("  side "):
            board[int(line.split()[1])] = line
        elif line == "final board:":
            break
    assert board == after[state.turn] == lines[-5:-1]
    # Only sides that changed: never the whole board after a move that moved one peg one side on.
    assert len(lines) < len(every) / 2
    tenth = RENDERER.render(entries, board_every=10)
    assert set(boards_after_each_turn(tenth)) == {t for t in moves if t % 10 == 0}
    heads = [i for i, line in enumerate(tenth) if line.startswith(("board after turn ", "final board"))]
    rows = [i for i, line in enumerate(tenth) if line.startswith("  side ") and i > 8]
    assert rows == [h + k for h in heads for k in range(1, 5)]  # whole boards only
    assert "every 10 turns." in tenth[4] and "only the sides that changed." in lines[4]
    assert len(tenth) < len(lines)


def test_a_range_of_turns_shows_those_turns_with_the_board_before_and_after():
    entries, state = record(5)
    after = boards_after_each_turn(RENDERER.render(entries, board_every=1))
    lines = RENDERER.render(entries, turns=(100, 110))
    assert [int(t.split()[1].rstrip(":")) for t in turn_lines(lines)] == list(range(100, 111))
    assert not any(line.startswith("  hand of seat") for line in lines)
    before = lines.index("board before turn 100:")
    last_move = max(t for t in after if t < 100)
    assert lines[before + 1:before + 5] == after[last_move]
    assert lines[-5] == "board after turn 110:"  # the game goes on: no final board, no result
    assert lines[-4:] == after[max(t for t in after if t <= 110)]
    assert not any(line.startswith(("game over", "final board")) for line in lines)
    one = RENDERER.render(entries, turns=(100, 100))
    assert turn_lines(one) == turn_lines(lines)[:1]
    end = RENDERER.render(entries, turns=(state.turn - 1, state.turn + 50))
    assert len(turn_lines(end)) == 2 and end[-1].startswith(f"game over after {state.turn} turns")
    assert RENDERER.render(entries, turns=(5000, 5001))[-1] == (
        f"(no turn 5000-5001 in this record: it shows {state.turn} turns played)")


def test_render_for_one_seat_shows_only_its_own_cards():
    entries, _ = record(6, players=6)
    lines = RENDERER.render(seat_view(entries, 2), seat=2)
    hands = [line for line in lines if line.startswith("  hand of seat")]
    assert hands == [line for line in hands if line.startswith("  hand of seat 2:")] and len(hands) == 1
    turns = turn_lines(lines)
    mine = [t for t in turns if t.split()[3] == "2"]
    others = [t for t in turns if t.split()[3] != "2"]
    assert mine and others
    assert all(t.split()[5] == "1" for t in others)  # a count, not a card
    assert all(CARD_RE.fullmatch(t.split()[5]) for t in mine)
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
