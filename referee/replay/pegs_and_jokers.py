"""Pegs and Jokers text presentation from match-record entries (events only).

The board is redrawn from the public events alone: every peg starts in its
start area (``deal``) and each ``move`` event lists every peg that moved,
hits included.  A seat's filtered view (no other hands, no other draws) and a
truncated record (a killed game) render too.

Board drawing, one line per side ``p`` (track holes ``18p`` to ``18p+17``)::

    side 1  T18 |...v....o.........|  start 4  home .....

A digit is the colour (seat) of the peg on that hole; ``v`` marks an empty
in-spot (PJ-2.2), ``o`` an empty come-out hole (PJ-2.1), ``.`` any other empty
hole.  ``start`` counts that colour's pegs in start; ``home`` shows H1 to H5.
The replay prints the ``legend`` once, the whole board at the start and the end,
one line per turn, and after a move only the sides whose line changed (or,
with ``board_every`` = K, the whole board every K turns).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.games.pegs_and_jokers.board import COME_OUT_OFFSET, IN_SPOT_OFFSET, SIDE
from referee.match.record import Entry

from .base import TurnRenderer, events, integer, seq, words

MAX_PLAYERS = 64  # a record claiming more is not drawn (the rules allow 4, 6 or 8)
_HEADER = ["player", "team", "pegs home", "hits", "turns", "result"]


class _Board:
    """Peg positions (texts) per colour, replayed from events."""

    def __init__(self, players: int) -> None:
        self.players = players
        self.pegs: list[list[str]] = [["S"] * 5 for _ in range(players)]

    def relocate(self, colour: Any, src: Any, dst: Any) -> None:
        if not isinstance(colour, int) or not 0 <= colour < self.players:
            return
        pegs = self.pegs[colour]
        if src in pegs:
            pegs[pegs.index(src)] = str(dst)

    def apply_move(self, event: dict[str, Any]) -> None:
        colour = event.get("colour")
        for part in seq(event.get("parts")):
            if not isinstance(part, dict):
                continue
            peg = part.get("peg")
            if isinstance(peg, list) and len(peg) == 2:
                self.relocate(colour, peg[0], peg[1])
            for hit in seq(part.get("hits")):
                if isinstance(hit, list) and len(hit) == 3:
                    self.relocate(hit[0], hit[1], hit[2])

    def home_count(self, colour: int) -> int:
        return sum(1 for p in self.pegs[colour] if p.startswith("H"))

    def drawing(self) -> list[str]:
        n = self.players
        track = {}
        for colour, pegs in enumerate(self.pegs):
            for p in pegs:
                if p.startswith("T") and p[1:].isdigit():
                    track[int(p[1:])] = str(colour)
        width = len(str(SIDE * n))
        lines = []
        for side in range(n):
            cells = []
            for i in range(SIDE):
                hole = SIDE * side + i
                if hole in track:
                    cells.append(track[hole])
                elif i == IN_SPOT_OFFSET:
                    cells.append("v")
                elif i == COME_OUT_OFFSET:
                    cells.append("o")
                else:
                    cells.append(".")
            pegs = self.pegs[side]
            home = "".join(str(side) if f"H{k}" in pegs else "." for k in range(1, 6))
            lines.append(
                f"  side {side}  T{SIDE * side:<{width}} |{''.join(cells)}|"
                f"  start {pegs.count('S')}  home {home}"
            )
        return lines


def _players(entries: Sequence[Entry]) -> int | None:
    for ev in events(entries):
        players = integer(ev.get("players"))
        if ev.get("type") == "deal" and players is not None and 1 <= players <= MAX_PLAYERS:
            return players
    return None


def _step_text(colour: Any, src: Any, dst: Any) -> str:
    return f"{colour}:{src}-{dst}"


class PegsAndJokersRenderer(TurnRenderer):
    def score_table(
        self, entries: Sequence[Entry]
    ) -> tuple[list[str], list[list[str]]]:
        players = _players(entries)
        if players is None:
            return list(_HEADER), []
        board = _Board(players)
        hits = [0] * players
        turns = [0] * players
        end: dict[str, Any] | None = None
        for ev in events(entries):
            kind = ev.get("type")
            seat = ev.get("seat")
            if kind in ("move", "discard") and isinstance(seat, int) and 0 <= seat < players:
                turns[seat] += 1
                if kind == "move":
                    board.apply_move(ev)
                    hits[seat] += ev.get("hits", 0) if isinstance(ev.get("hits"), int) else 0
            elif kind == "game_over":
                end = ev
        winners = seq(end.get("winners")) if end else []
        rows = [[f"seat {seat}", str(seat % 2), str(board.home_count(seat)), str(hits[seat]), str(turns[seat]), ""]
                for seat in range(players)]
        for team in (0, 1):
            seats = range(team, players, 2)
            if end is None:
                result = "unfinished"
            elif end.get("status") == "win":
                result = "win" if team in winners else "loss"
            else:
                result = str(end.get("status", "?"))
            rows.append([
                f"team {team}", str(team),
                str(sum(board.home_count(s) for s in seats)),
                str(sum(hits[s] for s in seats)), str(sum(turns[s] for s in seats)), result,
            ])
        if end is None:
            summary = "unfinished"
        elif end.get("status") == "win":
            summary = f"team {','.join(map(str, winners))} wins ({end.get('reason', '')})"
        else:
            summary = f"{end.get('status', '?')} ({end.get('reason', '')})"
        home = "-".join(str(sum(board.home_count(s) for s in range(t, players, 2))) for t in (0, 1))
        rows.append(["all", "", home, str(sum(hits)), str(sum(turns)), summary])
        return list(_HEADER), rows

    def render(
        self,
        entries: Sequence[Entry],
        *,
        seat: int | None = None,
        deal: int | None = None,
        turns: tuple[int, int] | None = None,
        board_every: int | None = None,
    ) -> list[str]:
        if deal is not None and deal != 1:
            return []  # one deal per game (PJ-3)
        players = _players(entries)
        if players is None:
            return ["(no deal in this record)"]
        first, last = turns if turns is not None else (1, None)

        def shown(n: Any) -> bool:
            return isinstance(n, int) and n >= first and (last is None or n <= last)

        board = _Board(players)
        lines: list[str] = []
        drawn_rows = board.drawing()  # the rows as last drawn (or as they stood before the range)
        pending: _Turn | None = None
        started = False  # a turn of the range has been shown
        played = 0  # the last turn the record shows played

        def full_board(title: str) -> None:
            nonlocal drawn_rows
            drawn_rows = board.drawing()
            lines.append(title)
            lines.extend(drawn_rows)

        for ev in events(entries):
            kind = ev.get("type")
            if last is not None and played >= last and kind != "game_over":
                if kind == "turn":  # the range is over and the game goes on
                    full_board(f"board after turn {last}:")
                    break
                continue
            if kind == "deal":
                lines.append(
                    f"Pegs and Jokers: {players} players, {ev.get('holes', SIDE * players)} track holes, "
                    f"{ev.get('cards', '?')} cards; dealer seat {ev.get('dealer', '?')}"
                    + (f" (seat {seat}'s view)" if seat is not None else "")
                )
                lines.extend(legend(board_every))
                if first == 1:
                    lines.extend(drawn_rows)
            elif kind == "hand":
                if first == 1:
                    lines.append(f"  hand of seat {ev.get('seat', '?')}: {words(ev.get('cards'))}")
            elif kind == "turn":
                pending = _Turn(ev)
                if shown(pending.number) and not started:
                    started = True
                    if first > 1:
                        full_board(f"board before turn {first}:")
            elif kind == "draw":
                if pending is not None:
                    pending.count = ev.get("count")
            elif kind == "drawn":
                if pending is not None:
                    pending.cards = words(ev.get("cards"))
            elif kind == "reshuffle":
                if shown(played + 1):
                    lines.append(f"  discard pile reshuffled into a new draw pile of {ev.get('draw_pile', '?')}")
            elif kind in ("move", "discard"):
                number = ev.get("turn")
                if isinstance(number, int):
                    played = number
                if kind == "move":
                    board.apply_move(ev)
                if not shown(number):
                    pending = None
                    continue
                lines.append((pending or _Turn({"turn": number, "seat": ev.get("seat")})).line(ev))
                pending = None
                if kind != "move":
                    continue
                if board_every is None:
                    rows = board.drawing()
                    lines.extend(row for row, old in zip(rows, drawn_rows, strict=True) if row != old)
                    drawn_rows = rows
                elif isinstance(number, int) and number % board_every == 0:
                    full_board(f"board after turn {number}:")
            elif kind == "game_over":
                if not started and turns is not None:
                    continue
                full_board("final board:")
                score_text = words(ev.get("scores"), "-")
                if ev.get("status") == "win":
                    head = f"team {words(ev.get('winners'), ',')} wins"
                else:
                    head = str(ev.get("status", "?"))
                lines.append(
                    f"game over after {ev.get('turns', '?')} turns: {head} ({ev.get('reason', '')}); "
                    f"pegs home per team {score_text}"
                )
        if pending is not None and shown(pending.number):
            lines.append(pending.line(None))
        if turns is not None and not started:
            lines.append(f"(no turn {first}" + (f"-{last}" if last != first else "")
                         + f" in this record: it shows {played} turns played)")
        if not any(e.get("type") == "game_over" for e in events(entries)):
            lines.append("(record ends before the game did)")
        return lines


def legend(board_every: int | None) -> list[str]:
    """The board's legend, printed once under the game's first line."""
    when = ("after each move only the sides that changed" if board_every is None
            else f"every {board_every} turns")
    return [
        "  board: one line per side p: track holes T(18p) to T(18p+17), then colour p's",
        "  pegs in start and its home H1 to H5. On a hole: a digit is its peg's colour",
        "  (seat), v an empty in-spot, o an empty come-out hole, . another empty hole.",
        f"  Drawn whole at start and end; {when}.",
    ]


class _Turn:
    """One turn's line, filled in from its ``turn``, ``draw``, ``drawn`` and ``move``/``discard`` events."""

    def __init__(self, event: dict[str, Any]) -> None:
        self.number = event.get("turn")
        self.seat = event.get("seat", "?")
        self.colour = event.get("colour", self.seat)
        self.count: Any = event.get("drew", 0)
        self.cards = ""  # the drawn cards, where the view shows them
        self.left = event.get("draw_pile", "?")

    def line(self, action: dict[str, Any] | None) -> str:
        drew = self.cards or str(self.count)
        head = f"turn {self.number}: seat {self.seat} drew {drew} ({self.left} left), "
        if action is None:
            return head + "(no action recorded)"
        card = action.get("card", "?")
        if action.get("type") == "discard":
            return head + f"discards {card} (no move)"
        colour = action.get("colour", "?")
        steps = []
        hit_texts = []
        for part in seq(action.get("parts")):
            if not isinstance(part, dict):
                continue
            peg = part.get("peg")
            if isinstance(peg, list) and len(peg) == 2:
                steps.append(_step_text(colour, peg[0], peg[1]))
            for hit in seq(part.get("hits")):
                if isinstance(hit, list) and len(hit) == 3:
                    where = "start" if hit[2] == "S" else f"its in-spot {hit[2]}"
                    hit_texts.append(f"colour {hit[0]} peg on {hit[1]} to {where}")
        side = "" if colour == self.seat else f" for colour {colour}"
        text = head + f"plays {card}{side}: {','.join(steps)}"
        if hit_texts:
            text += "  hits: " + "; ".join(hit_texts)
        return text


RENDERER = PegsAndJokersRenderer()
