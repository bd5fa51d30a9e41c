"""Back Alley text presentation from typed match-record entries (events only).

Everything is drawn from the events, so a seat's filtered view (no other
hands, no other draws) and a truncated record (a killed game) render too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.games.back_alley.rules import contract_text
from referee.match.record import Entry
from referee.tables import Col

from .base import Renderer, events, mapping, seq, words

_HEADER = [
    "deal", "h", "dealer", "trump",
    "T0 contract", "T0 tricks", "T0 score",
    "T1 contract", "T1 tricks", "T1 score",
    "T0 total", "T1 total",
]


def _pair(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return list(value)
    return ["?", "?"]


def _trump(value: Any) -> str:
    return "NT" if value is None else str(value)


def _by_seat(leader: Any, cards: Any) -> str:
    """A trick's cards labelled by who played them, the leader first: ``s2 AS  s3 KH ...``."""
    lead = leader if type(leader) is int else None
    return "  ".join(
        f"s{(lead + i) % 4 if lead is not None else '?'} {c}" for i, c in enumerate(seq(cards))
    )


def _signed(value: Any) -> str:
    return f"{value:+d}" if isinstance(value, int) else "?"


#: How each score-table column is shown: (header on screen, justify, rank); the two
#: teams' columns of one kind move together, the totals are kept before all.
_SHOWN: dict[str, tuple[str, str, int]] = {
    "deal": ("deal", "right", 0), "h": ("h", "right", 6), "dealer": ("dlr", "right", 5),
    "trump": ("trump", "left", 4),
    **{f"T{t} {what}": (f"T{t}\n{what}", "right", rank)
       for t in (0, 1) for what, rank in (("contract", 2), ("tricks", 3), ("score", 1), ("total", 0))},
}


class BackAlleyRenderer(Renderer):
    score_legend = "h: cards per hand; dlr: the dealer's seat"

    def score_columns(self, header: Sequence[str]) -> list[Col]:
        out = []
        for name in header:
            shown, justify, rank = _SHOWN.get(name, (name, "right", 50))
            group = name.split(" ", 1)[1] if name[:1] == "T" and " " in name else None
            out.append(Col(shown, "left" if justify == "left" else "right", key=name == "deal", rank=rank,
                           group=group))
        return out

    def score_table(
        self, entries: Sequence[Entry]
    ) -> tuple[list[str], list[list[str]]]:
        rows: list[list[str]] = []
        for ev in events(entries):
            if ev.get("type") != "deal_score":
                continue
            contracts = [mapping(c) for c in seq(ev.get("contracts"))]
            if len(contracts) != 2:
                contracts = [{}, {}]
            tricks = _pair(ev.get("tricks_won"))
            scores = _pair(ev.get("deal_scores"))
            totals = _pair(ev.get("scores"))
            rows.append([
                str(ev.get("deal", "?")), str(ev.get("h", "?")), str(ev.get("dealer", "?")),
                _trump(ev.get("trump")),
                contract_text(contracts[0]), str(tricks[0]), str(scores[0]),
                contract_text(contracts[1]), str(tricks[1]), str(scores[1]),
                str(totals[0]), str(totals[1]),
            ])
        return list(_HEADER), rows

    def render(
        self,
        entries: Sequence[Entry],
        *,
        seat: int | None = None,
        deal: int | None = None,
    ) -> list[str]:
        lines: list[str] = []
        current: Any = None  # deal number of the events being read
        bids: list[str] = []
        plays: list[str] = []

        def shown() -> bool:
            return deal is None or current == deal

        def flush_bids() -> None:
            if bids and shown():
                lines.append("  bids: " + ", ".join(bids))
            bids.clear()

        if seat is not None:
            lines.append(f"Back Alley, as seen by seat {seat}")
        for ev in events(entries):
            kind = ev.get("type")
            if kind != "bid":
                flush_bids()
            if kind == "deal":
                plays.clear()
                current = ev.get("deal")
                if not shown():
                    continue
                redeal = ev.get("redeals") or 0
                extra = f", redeal after {redeal} all-pass" if redeal else ""
                lines.append(
                    f"Deal {current} (h={ev.get('h', '?')}), dealer {ev.get('dealer', '?')}, "
                    f"turn-up {ev.get('turn_up', '?')}, trump {_trump(ev.get('trump'))}{extra}"
                )
                continue
            if not shown():
                continue
            if kind == "hand":
                lines.append(f"  hand {ev.get('seat', '?')}: {words(ev.get('cards'))}")
            elif kind == "joker_discard":
                lines.append(
                    f"  seat {ev.get('seat', '?')} discards {ev.get('card', '?')} face up "
                    "and draws from the stock"
                )
            elif kind == "drawn":  # private: the seat's own view (or the full record)
                lines.append(f"  seat {ev.get('seat', '?')} draws {words(ev.get('cards')) or '?'}")
            elif kind == "bid":
                bid = str(ev.get("bid", "?"))
                level = ev.get("level") or 0
                if bid == "board" and isinstance(level, int) and level > 1:
                    bid = f"board×{level}"
                bids.append(f"{ev.get('seat', '?')}: {bid}")
            elif kind == "redeal":
                lines.append(f"  all pass: not counted ({ev.get('redeals', '?')} in a row)")
            elif kind == "contracts":
                cs = seq(ev.get("contracts"))
                text = ", ".join(
                    f"team {i} {contract_text(c) if isinstance(c, dict) else '?'}"
                    for i, c in enumerate(cs)
                )
                lines.append(f"  contracts: {text}; seat {ev.get('leader', '?')} leads")
            elif kind == "play":
                plays.append(f"s{ev.get('seat', '?')} {ev.get('card', '?')}")
            elif kind == "trick":
                plays.clear()
                won = _pair(ev.get("tricks_won"))
                lines.append(
                    f"  trick {ev.get('n', '?')}: {_by_seat(ev.get('leader'), ev.get('cards'))}"
                    f" -> seat {ev.get('winner', '?')} wins (tricks {won[0]}-{won[1]})"
                )
            elif kind == "deal_score":
                cs = seq(ev.get("contracts"))
                won = _pair(ev.get("tricks_won"))
                ds = _pair(ev.get("deal_scores"))
                tot = _pair(ev.get("scores"))
                parts = []
                for i in range(2):
                    c = cs[i] if i < len(cs) and isinstance(cs[i], dict) else {}
                    parts.append(
                        f"team {i} {contract_text(c)} made {won[i]}: {_signed(ds[i])}"
                    )
                lines.append(f"  score: {'; '.join(parts)}; totals {tot[0]} / {tot[1]}")
            elif kind == "game_over":
                winners = seq(ev.get("winners"))
                who = ", ".join(f"team {w}" for w in winners) or "nobody"
                sc = _pair(ev.get("scores"))
                lines.append(
                    f"Game over: {ev.get('status', '?')} ({ev.get('reason', '')}), "
                    f"winner {who}, scores {sc[0]} / {sc[1]}"
                )
        flush_bids()
        if plays and shown():
            lines.append(f"  unfinished trick: {'  '.join(plays)}")
        return lines


RENDERER = BackAlleyRenderer()
