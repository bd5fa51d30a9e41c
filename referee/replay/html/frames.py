"""Re-simulate a match record into the frames of the HTML replay.

``build_replay(rec)`` walks the record (``referee.match.walk``, as
``referee replay --verify`` does: a record the engine disagrees with is
refused, ``RecordDiverged``) and draws a frame at each step.  Each frame is
the engine's state at one step, as JSON-able data:

* ``start``: the game as created (first deal, or the pegs in start);
* ``move``: after decision ``n`` (``seat`` chose ``action`` at a ``decision``);
* ``deal``: a new deal after the one a decision closed (card games);
* ``fault``: the decision a bot forfeited, with the record's fault entry;
* ``end``: the result line.

Frames are drawn from ``state.observe(seat)`` of every seat (the god view; the
page hides other seats' hands in a seat's view), never from event names.  A
decision that ends a deal (or the game) is shown as the table looked when the
last card fell: the completed trick and the deal's tricks on the old hands,
the scores already updated; the next frame (``deal``) shows the new deal.  The
winner of such a trick is the one thing the state no longer holds: it comes
from the engine's trick event of that decision (the event carrying both
``cards`` and ``winner``).  An action is ``public`` when its decision produced a public
first event (an engine reports the action itself first): a seat's view shows
the actions of other seats only then (a Schmier discard is private).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from referee.games import Event, GameError, GameState
from referee.games.cards import RED_SUITS, SUIT_NAMES, SUIT_SYMBOLS, is_card, is_joker, rank, suit
from referee.games.pegs_and_jokers.board import HOME_HOLES, SIDE, board_for
from referee.games.pegs_and_jokers.notation import Play as PegsPlay
from referee.match.record import DecisionLine, FaultLine, Record
from referee.match.walk import Visitor, Walk

JSON = Any

#: Fields of a fault entry the page names itself; any other field (the request
#: id, the refused legal list, the raw reply of newer records) is shown as is.
_FAULT_FIELDS = ("record", "seat", "reason", "message", "stderr_tail")


def card_face(card: str) -> dict[str, JSON]:
    """How the page draws a card of the one notation (``referee.games.cards``)."""
    if is_joker(card):
        size = {"BJ": "big", "LJ": "little"}.get(card, "")
        return {"rank": "★", "suit": "", "colour": "red" if card == "BJ" else "black", "joker": size or "joker",
                "title": f"{size} joker".strip() if size else "joker"}
    r, s = rank(card), suit(card)
    return {"rank": "10" if r == "T" else r, "suit": SUIT_SYMBOLS[s], "colour": "red" if s in RED_SUITS else "black",
            "joker": None, "title": f"{r} of {SUIT_NAMES[s]}"}


class _Game:
    """Per-game view of a state as frame fields; the card games share most of it."""

    def __init__(self, spec_name: str, seats: int) -> None:
        self.name = spec_name
        self.seats = seats

    def fields(self, state: GameState) -> dict[str, JSON]:
        raise NotImplementedError

    def closing(self, before: dict[str, JSON], seat: int, decision: str, action: str,
                events: Sequence[Event], after: dict[str, JSON], state: GameState) -> dict[str, JSON]:
        return after

    def closes(self, before: dict[str, JSON], after: dict[str, JSON], state: GameState) -> bool:
        """Whether the decision between frame fields ``before`` and ``after`` (``state``) ended a deal."""
        return False

    def score_row(self, before: dict[str, JSON], closed: dict[str, JSON]) -> dict[str, JSON] | None:
        return None

    def score_header(self) -> list[str]:
        return []

    def turn_of(self, before: dict[str, JSON]) -> dict[str, JSON]:
        """Fields a decision's frame takes from the state before it (the turn it was made in)."""
        return {}

    def board(self) -> dict[str, JSON] | None:
        return None


class _CardGame(_Game):
    def fields(self, state: GameState) -> dict[str, JSON]:
        views = [state.observe(s) for s in range(self.seats)]
        v = views[0]
        trick = v.get("trick")
        past = v.get("past_tricks", v.get("tricks")) or []
        shown = None
        if trick and trick["cards"]:
            shown = self._trick(trick["leader"], trick["cards"], None)
            trick_no = len(past) + 1
        elif past and (trick is not None or v["phase"] == "over"):
            last = past[-1]  # a trick just completed: shown until the next card
            shown = self._trick(last["leader"], last["cards"], last["winner"])
            trick_no = len(past)
        else:
            shown = None if trick is None else self._trick(trick["leader"], [], None)
            trick_no = len(past) + 1 if trick is not None else 0
        return {
            "deal": v["deal"], "dealer": v["dealer"], "redeals": v["redeals"], "phase": v["phase"],
            "trump": v.get("trump"), "hands": [w["hand"] for w in views],
            "trick": shown, "trick_no": trick_no, "tricks_won": list(v["tricks_won"]),
            "scores": list(v["scores"]), **self.extra(views),
        }

    def extra(self, views: list[dict[str, JSON]]) -> dict[str, JSON]:
        raise NotImplementedError

    def _trick(self, leader: int, cards: Sequence[str], winner: int | None) -> dict[str, JSON]:
        return {"leader": leader, "winner": winner,
                "cards": [[(leader + i) % self.seats, c] for i, c in enumerate(cards)]}

    def closes(self, before: dict[str, JSON], after: dict[str, JSON], state: GameState) -> bool:
        return state.outcome() is not None or any(before[k] != after[k] for k in ("deal", "redeals", "dealer"))

    def closing(self, before: dict[str, JSON], seat: int, decision: str, action: str,
                events: Sequence[Event], after: dict[str, JSON], state: GameState) -> dict[str, JSON]:
        shown = dict(before)
        shown["hands"] = [list(h) for h in before["hands"]]
        shown["scores"] = after["scores"]
        shown["phase"] = "over" if after["phase"] == "over" else "scored"
        if decision == "play":
            shown["hands"][seat].remove(action)
            won = [e.data for e in events if "winner" in e.data and "cards" in e.data]
            trick = before["trick"] if before["trick"] and before["trick"]["winner"] is None else None
            leader = trick["leader"] if trick else seat
            cards = [c for _, c in trick["cards"]] if trick else []
            winner = won[-1]["winner"] if won else None
            shown["trick"] = self._trick(leader, [*cards, action], winner)
            shown["trick_no"] = before["trick_no"] if trick else before["trick_no"] + 1
            tricks = list(before["tricks_won"])
            if winner is not None:
                tricks[state.team_of(winner)] += 1
            shown["tricks_won"] = tricks
        else:
            shown["phase"] = "redeal"
            shown.update(self.closing_bid(before, seat, action))
        return shown

    def closing_bid(self, before: dict[str, JSON], seat: int, action: str) -> dict[str, JSON]:
        bids = list(before["bids"])
        bids[seat] = action
        return {"bids": bids}


class _BackAlley(_CardGame):
    def extra(self, views: list[dict[str, JSON]]) -> dict[str, JSON]:
        from referee.games.back_alley.rules import contract_text

        v = views[0]
        contracts = v.get("contracts")
        return {
            "turn_up": v.get("turn_up"), "h": v["h"], "bids": list(v["bids"]),
            "contracts": None if contracts is None else [contract_text(c) for c in contracts],
            "joker_discard": v.get("joker_discard"), "broken": v.get("broken"),
        }

    def score_header(self) -> list[str]:
        return ["Deal", "Cards", "Dealer", "Trump", "Contract 0", "Contract 1", "Tricks 0", "Tricks 1",
                "Deal 0", "Deal 1", "Total 0", "Total 1"]

    def score_row(self, before: dict[str, JSON], closed: dict[str, JSON]) -> dict[str, JSON] | None:
        if closed["phase"] == "redeal":
            return None
        delta = [a - b for a, b in zip(closed["scores"], before["scores"], strict=True)]
        contracts = closed["contracts"] or ["?", "?"]
        return {"deal": closed["deal"], "cells": [
            closed["deal"], closed["h"], closed["dealer"], closed["trump"] or "none", *contracts,
            *closed["tricks_won"], *delta, *closed["scores"]]}


class _Schmier(_CardGame):
    def extra(self, views: list[dict[str, JSON]]) -> dict[str, JSON]:
        v = views[0]
        bids: list[str | None] = [None] * self.seats
        for b in v["bids"]:
            bids[b["seat"]] = b["bid"]
        return {
            "bids": bids, "declarer": v["declarer"], "bid": v["bid"],
            "contracts": None if v["bid"] is None else [f"seat {v['declarer']} bid {v['bid']}"],
            "discards": [w["my_discards"] for w in views],
            "points": v["points"], "counts": list(v["counts"]), "target": v["target"],
        }

    def score_header(self) -> list[str]:
        return ["Deal", "Dealer", "Declarer", "Bid", "Trump", "Made",
                "Deal 0", "Deal 1", "Deal 2", "Total 0", "Total 1", "Total 2"]

    def score_row(self, before: dict[str, JSON], closed: dict[str, JSON]) -> dict[str, JSON] | None:
        if closed["phase"] == "redeal":
            return None
        delta = [a - b for a, b in zip(closed["scores"], before["scores"], strict=True)]
        declarer = closed["declarer"]
        made = "?" if declarer is None else ("yes" if delta[declarer % 3] > 0 else "no")
        return {"deal": closed["deal"], "cells": [
            closed["deal"], closed["dealer"], declarer, closed["bid"], closed["trump"], made, *delta,
            *closed["scores"]]}


class _Pegs(_Game):
    def fields(self, state: GameState) -> dict[str, JSON]:
        views = [state.observe(s) for s in range(self.seats)]
        v = views[0]
        return {
            "turn": v["turn"], "colour": v["colour"], "hands": [w["hand"] for w in views],
            "hand_sizes": v["hand_sizes"], "draw_pile": v["draw_pile"],
            "discard_top": v["discard_pile"][-1] if v["discard_pile"] else None,
            "pegs": v["pegs"], "home": v["home"], "team_home": v["team_home"], "scores": v["team_home"],
            "hits": v["hits"],
        }

    def turn_of(self, before: dict[str, JSON]) -> dict[str, JSON]:
        return {"turn": before["turn"], "colour": before["colour"]}

    def board(self) -> dict[str, JSON]:
        b = board_for(self.seats)
        return {"players": self.seats, "holes": b.holes, "side": SIDE, "home_holes": HOME_HOLES,
                "come_out": list(b.come_out), "in_spot": list(b.in_spot)}


def _adapter(game: str, seats: int) -> _Game:
    cls = {"back-alley": _BackAlley, "schmier": _Schmier, "pegs-and-jokers": _Pegs}[game]
    return cls(game, seats)


def _moved(spec_name: str, action: str) -> list[list[JSON]]:
    """The pegs a Pegs and Jokers action moves, as ``[colour, from, to]`` (its notation)."""
    if spec_name != "pegs-and-jokers":
        return []
    from referee.games.pegs_and_jokers.notation import Action

    try:
        value = Action.from_text(action)
    except GameError:
        return []
    return [[s.colour, s.src, s.dst] for s in value.steps] if isinstance(value, PegsPlay) else []


def _raw_fault(rec: Record, line_no: int) -> dict[str, JSON]:
    """The fault line as written (fields newer referees add survive the typed model)."""
    try:
        with rec.path.open(encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                if i == line_no:
                    data = json.loads(line)
                    return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        pass
    return {}


class _Frames(Visitor):
    """The walk's visitor that draws a frame after each decision and at each fault."""

    def __init__(self, rec: Record, walk: Walk) -> None:
        self.rec = rec
        self.game = _adapter(walk.spec.name, walk.spec.num_seats(walk.options))
        self.fields: dict[str, JSON] = {"kind": "start", **self.game.fields(walk.state)}
        self.frames: list[dict[str, JSON]] = [self.fields]
        self.rows: list[dict[str, JSON]] = []

    def applied(self, walk: Walk, line: int, entry: DecisionLine, events: list[Event]) -> None:
        state, game, frames, fields = walk.state, self.game, self.frames, self.fields
        seat, decision = entry.seat, entry.decision  # the engine's: the walk checked them
        after = game.fields(state)
        move = {"kind": "move", "n": entry.n, "seat": seat, "decision": decision, "action": entry.action,
                "legal": entry.legal, "ms": entry.ms, "public": bool(events) and events[0].to is None,
                "moved": _moved(walk.spec.name, entry.action)}
        if game.closes(fields, after, state):
            closed = game.closing(fields, seat, decision, entry.action, events, after, state)
            frames.append({**move, **closed})
            row = game.score_row(fields, closed)
            if row is not None:
                self.rows.append({**row, "step": len(frames) - 1})
            if state.outcome() is None:
                frames.append({"kind": "deal", **after})
        else:
            frames.append({**move, **after, **game.turn_of(fields)})
        self.fields = after

    def fault(self, walk: Walk, line: int, entry: FaultLine) -> None:
        state = walk.state
        raw = _raw_fault(self.rec, line)
        extra = {k: v for k, v in raw.items() if k not in _FAULT_FIELDS}
        to_act = state.to_act()
        self.frames.append({**self.fields, "kind": "fault", "seat": entry.seat,  # not the start's kind
                            "decision": state.decision() if to_act is not None else None,
                            "legal": state.legal_actions() if to_act == entry.seat else [],
                            "fault": {"seat": entry.seat, "reason": entry.reason, "message": entry.message,
                                      "stderr_tail": entry.stderr_tail, "extra": extra}})


def build_replay(rec: Record) -> dict[str, JSON]:
    """The page data of a record: header, frames, score rows, card faces, board.  The record
    is walked (``referee.match.walk``): ``RecordDiverged`` where it and the engine disagree."""
    header = rec.header
    walk = Walk.of(header)
    spec, options = walk.spec, walk.options
    drawn = _Frames(rec, walk)
    walk.run(rec, drawn)
    frames, rows, game = drawn.frames, drawn.rows, drawn.game
    done = 0
    for frame in frames:  # "done": decisions applied so far (the state is the engine's after that many)
        frame.setdefault("n", None)
        if frame["kind"] == "move":
            done += 1
        frame["done"] = done
    _link_next(frames)
    result = None
    if rec.result is not None:
        o = rec.result.outcome
        result = {"status": o.status, "winners": o.winners, "scores": o.scores, "reason": o.reason,
                  "detail": o.detail, "decisions": rec.result.decisions}
        frames.append({**{k: v for k, v in frames[-1].items() if k not in ("fault",)}, "kind": "end",
                       "result": result})
    cards = sorted({c for f in frames for h in f["hands"] for c in h} | set(_cards_in(frames)))
    return {
        "game": spec.name, "title": spec.title, "seed": header.seed, "options": header.options,
        "seats": [{"seat": s.seat, "team": s.team, "name": name}
                  for s, name in zip(header.seats, rec.names, strict=True)],
        "teams": spec.num_teams(options), "frames": frames, "score_header": game.score_header(),
        "score_rows": rows, "cards": {c: card_face(c) for c in cards if is_card(c)}, "board": game.board(),
        "result": result, "truncated": rec.truncated,
    }


def _cards_in(frames: list[dict[str, JSON]]) -> set[str]:
    out: set[str] = set()
    for f in frames:
        trick = f.get("trick")
        if trick:
            out.update(c for _, c in trick["cards"])
        for key in ("turn_up", "discard_top"):
            if f.get(key):
                out.add(f[key])
        for d in f.get("discards") or []:
            out.update(d)
        action = f.get("action")
        if isinstance(action, str):
            out.update(w for w in action.split(" ") if is_card(w))
        for a in f.get("legal") or []:
            out.update(w for w in a.split(" ") if is_card(w))
    return out


def _link_next(frames: list[dict[str, JSON]]) -> None:
    """Each frame names the seat that decides next (the next decision's seat)."""
    upcoming: dict[str, JSON] | None = None
    for frame in reversed(frames):
        frame["next"] = upcoming
        if frame["kind"] in ("move", "fault"):
            upcoming = {"seat": frame["seat"], "decision": frame["decision"]}
