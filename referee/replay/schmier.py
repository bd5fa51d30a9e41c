"""Text presentation of Schmier records: the score table and the replay.

Both work from the events in the record alone (decision entries are not
needed), so they cope with a record filtered for one seat (private events of
other seats missing) and with a truncated record (a killed game): whatever
part of a deal is present is shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.games.cards import SUIT_NAMES
from referee.match.record import Entry
from referee.tables import Col

from .base import Renderer, events, integer, mapping, seq, words

POINT_NAMES = ("high", "low", "right", "left", "joker", "game")


def _team(t: Any) -> str:
    return "-" if t is None else f"T{t}"


def _signed(n: Any) -> str:
    return f"{n:+d}" if isinstance(n, int) else str(n)


def _cards(cards: Any) -> str:
    return words(cards) or "-"


def _seat(s: Any) -> str:
    return "?" if s is None else str(s)


def _team_of(seat: Any) -> str:
    """``"T1"`` for seat 4; ``"T?"`` for a seat that is no number."""
    s = integer(seat)
    return f"T{s % 3}" if s is not None else "T?"


class _Deal:
    """What the record says about one deal."""

    def __init__(self, event: dict[str, Any]) -> None:
        self.number = event.get("deal")
        self.dealer = event.get("dealer")
        self.scores_before = event.get("scores")
        self.hands: dict[int, list[str]] = {}
        self.bids: list[tuple[int | None, str]] = []  # a seat the record lacks shows as "?"
        self.redeal: dict[str, Any] | None = None
        self.contract: dict[str, Any] | None = None
        self.trump: str | None = None
        self.discarded: dict[int, list[Any]] = {}  # visible face-down discards, as recorded
        self.drew: dict[int, int] = {}  # public counts
        self.drawn: dict[int, list[str]] = {}  # visible drawn cards
        self.tricks: list[dict[str, Any]] = []
        self.pending: list[tuple[int | None, Any]] = []  # plays of an unfinished trick, as recorded
        self.score: dict[str, Any] | None = None
        self.end: dict[str, Any] | None = None


def _deals(entries: Sequence[Entry]) -> tuple[list[_Deal], dict[str, Any] | None]:
    deals: list[_Deal] = []
    end = None
    cur: _Deal | None = None
    for ev in events(entries):
        kind = ev.get("type")
        if kind == "deal":
            cur = _Deal(ev)
            deals.append(cur)
            continue
        if kind == "game_over":
            end = ev
            if cur is not None:
                cur.end = ev
            continue
        if cur is None:
            continue
        seat = integer(ev.get("seat"))
        if kind in ("hand", "discard", "draw", "drawn"):
            if seat is None:
                continue  # nowhere to show it
            if kind == "hand":
                cur.hands[seat] = list(seq(ev.get("cards")))
            elif kind == "discard":
                cur.discarded.setdefault(seat, []).append(ev.get("card"))
            elif kind == "draw":
                cur.drew[seat] = ev.get("count", 0)
            else:
                cur.drawn[seat] = list(seq(ev.get("cards")))
        elif kind == "bid":
            cur.bids.append((seat, str(ev.get("bid"))))
        elif kind == "redeal":
            cur.redeal = ev
        elif kind == "contract":
            cur.contract = ev
        elif kind == "trump":
            cur.trump = ev.get("trump")
        elif kind == "play":
            cur.pending.append((seat, ev.get("card")))
        elif kind == "trick":
            cur.tricks.append(ev)
            cur.pending = []
        elif kind == "deal_score":
            cur.score = ev
    return deals, end


#: Ranks of the score table's columns (lower stays when the screen is narrow): the
#: totals, the deal's scores, the contract; the six points move together.
_RANKS = {"total T0": 0, "total T1": 0, "total T2": 0, "T0": 1, "T1": 1, "T2": 1, "declarer": 2, "bid": 3,
          "made": 4, "trump": 6, "dealer": 5}


class SchmierRenderer(Renderer):
    score_legend = ("dlr: the dealer's seat; high, low, right, left, joker, game: the team that won the point; "
                    "T0, T1, T2: the deal's scores")

    def score_columns(self, header: Sequence[str]) -> list[Col]:
        out = []
        for name in header:
            if name == "deal":
                out.append(Col("deal", key=True, rank=0))
            elif name in POINT_NAMES:
                out.append(Col(name, rank=7, group="points"))
            else:
                shown = {"dealer": "dlr", "total T0": "total\nT0", "total T1": "total\nT1",
                         "total T2": "total\nT2"}.get(name, name)
                out.append(Col(shown, "left" if name in ("trump",) else "right", rank=_RANKS.get(name, 50)))
        return out

    def score_table(self, entries: Sequence[Entry]) -> tuple[list[str], list[list[str]]]:
        header = ["deal", "dealer", "declarer", "bid", "trump", "made", *POINT_NAMES]
        header += ["T0", "T1", "T2", "total T0", "total T1", "total T2"]
        rows: list[list[str]] = []
        deals, _ = _deals(entries)
        for d in deals:
            sc = d.score
            if sc is None:
                continue
            pts = mapping(sc.get("points"))
            decl = sc.get("declarer")
            row = [
                str(d.number),
                str(d.dealer),
                f"{decl} (T{decl % 3})" if isinstance(decl, int) else "?",
                str(sc.get("bid")),
                str(sc.get("trump")),
                "yes" if sc.get("made") else "set",
                *[_team(pts.get(name)) for name in POINT_NAMES],
                *[_signed(x) for x in seq(sc.get("delta"))[:3]],
                *[str(x) for x in seq(sc.get("scores"))[:3]],
            ]
            rows.append(row[:len(header)])
        return header, rows

    def render(
        self,
        entries: Sequence[Entry],
        *,
        seat: int | None = None,
        deal: int | None = None,
    ) -> list[str]:
        deals, end = _deals(entries)
        lines: list[str] = []
        if seat is not None:
            lines.append(f"Schmier replay as seen by seat {seat} (team T{seat % 3})")
        for d in deals:
            if deal is not None and d.number != deal:
                continue
            lines.extend(_render_deal(d, seat))
        if end is not None and (deal is None or (deals and deals[-1].number == deal)):
            lines.append(_render_end(end))
        elif end is None and deals and deal is None:
            lines.append("(record ends before the game does)")
        return lines


def _render_deal(d: _Deal, viewer: int | None) -> list[str]:
    scores = d.scores_before
    before = words(scores, " / ") or "?"
    out = [f"Deal {d.number} · dealer seat {d.dealer} · scores before {before}"]
    if d.hands:
        out.append("  hands:")
        out.extend(f"    seat {s} ({_team_of(s)}): {_cards(d.hands[s])}" for s in sorted(d.hands))
    if d.bids:
        out.append("  bids: " + ", ".join(f"s{_seat(s)} {b}" for s, b in d.bids))
    if d.redeal is not None:
        out.append(
            f"  all six passed: seat {d.dealer} deals again"
            f" (consecutive all-pass deals: {d.redeal.get('redeals')})"
        )
        return out
    if d.contract is not None:
        decl = d.contract.get("declarer")
        out.append(f"  declarer seat {decl} ({_team_of(decl)}) bids {d.contract.get('bid')}")
    if d.trump is not None:
        name = SUIT_NAMES.get(d.trump, "?") if isinstance(d.trump, str) else "?"
        out.append(f"  trump: {d.trump} ({name})")
    exchange_seats = sorted(set(d.drew) | set(d.discarded) | set(d.drawn))
    if exchange_seats:
        out.append("  discards and draws:")
        out.extend("    " + _exchange_line(d, s) for s in _clockwise_from(d.dealer, exchange_seats))
    if d.tricks or d.pending:
        out.append("  tricks:")
        for tr in d.tricks:
            lead = integer(tr.get("leader", 0))
            plays = "  ".join(
                f"s{(lead + i) % 6 if lead is not None else '?'} {c}" for i, c in enumerate(seq(tr.get("cards")))
            )
            w = tr.get("winner")
            out.append(f"    {str(tr.get('n', '?')):>2}. {plays}  -> s{w} (T{tr.get('team')})")
        if d.pending:
            plays = "  ".join(f"s{_seat(s)} {c}" for s, c in d.pending)
            out.append(f"    ..  {plays}  (unfinished)")
    sc = d.score
    if sc is not None:
        pts = mapping(sc.get("points"))
        counts = seq(sc.get("counts"))
        out.append(
            "  points: "
            + " · ".join(f"{name} {_team(pts.get(name))}" for name in POINT_NAMES)
            + f" (game counts {' / '.join(str(x) for x in counts)})"
        )
        decl = sc.get("declarer")
        dteam = decl % 3 if isinstance(decl, int) else None
        won = seq(sc.get("won"))
        verdict = "made it" if sc.get("made") else "set"
        won_d = won[dteam] if dteam is not None and dteam < len(won) else "?"
        out.append(
            f"  T{dteam} bid {sc.get('bid')} and won {won_d}: {verdict}"
            f" · deal {' / '.join(_signed(x) for x in seq(sc.get('delta')))}"
            f" · scores {words(sc.get('scores'), ' / ')}"
        )
    return out


def _clockwise_from(dealer: Any, seats: list[int]) -> list[int]:
    if not isinstance(dealer, int):
        return seats
    return sorted(seats, key=lambda s: (s - dealer - 1) % 6)


def _exchange_line(d: _Deal, s: int) -> str:
    is_dealer = s == d.dealer
    seen = d.discarded.get(s)
    drawn = d.drawn.get(s)
    count = d.drew.get(s)
    if is_dealer:
        took = count if count is not None else (len(drawn) if drawn is not None else "?")
        text = f"seat {s} (dealer): took {took} from the stock"
        if drawn is not None:
            text += f" ({_cards(drawn)})"
        if seen is not None:
            text += f", discarded {len(seen)} ({_cards(seen)})"
        elif count is not None:
            text += f", discarded {count} face down"
        return text
    n = count if count is not None else (len(seen) if seen is not None else "?")
    text = f"seat {s}: discarded {n}"
    if seen:
        text += f" ({_cards(seen)})"
    text += f", drew {n}"
    if drawn:
        text += f" ({_cards(drawn)})"
    return text


def _render_end(ev: dict[str, Any]) -> str:
    status = ev.get("status")
    scores = words(ev.get("scores"), " / ")
    reason = ev.get("reason", "")
    if status == "win":
        winners = ", ".join(f"T{t}" for t in seq(ev.get("winners")))
        head = f"Game over: {winners} wins"
    elif status == "draw":
        tied = seq(mapping(ev.get("detail")).get("tied"))
        head = "Game over: draw" + (f" between {', '.join(f'T{t}' for t in tied)}" if tied else "")
    else:
        head = f"Game over: {status}"
    return f"{head} ({reason}) · final scores {scores}"


RENDERER = SchmierRenderer()
