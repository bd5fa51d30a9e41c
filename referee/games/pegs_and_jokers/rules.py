"""Pegs and Jokers rules (RULES.md §0 and §3): state, move generation, spec.

Representation (hot path on ints and lists):

* ``pegs[c]``: the 5 internal positions of colour ``c`` (see ``board.py``:
  ``-1`` start, ``0 … L-1`` track, ``L + k - 1`` home hole ``H<k>``);
* ``occ[h]``: colour on track hole ``h`` or ``-1``;
* ``home[c]``: bit mask of the colour's occupied home holes (bit ``k-1`` = ``H<k>``).

A move is a tuple of *parts* (two only for a 7 split); a part is a tuple of
relocations ``(colour, from, to)``: first the moving peg, then the pegs it hits
(PJ-7).  A part is applied "all at once" (every peg lifted, then every peg
placed) so a hit that sends a teammate to the hole the mover just left is safe.

Legal moves are generated once per decision, per card kind (``K``, ``Q`` and
``J`` share one list; same-rank cards only differ in the card text), and kept
as two parallel lists, the texts and the moves, until the board or the hand
changes; ``apply`` finds the action's index in the texts.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from ..base import (
    JSON,
    Event,
    GameSpec,
    GameState,
    IllegalAction,
    InvalidAction,
    InvalidOptions,
    Outcome,
    View,
    merge_options,
    positive_int,
    team_of_seat,
)
from ..cards import STANDARD_DECK, randbelow, shuffle
from .board import HOME_HOLES, START, board_for
from .notation import Action, Play

PEGS = 5
NUM_TEAMS = 2
HAND = 6  # PJ-4.1: draw up to 6 at the start of a turn
DEAL = 5  # PJ-3
FULL_HOME = (1 << HOME_HOLES) - 1
PLAYER_COUNTS = (4, 6, 8)
DEFAULT_OPTIONS: dict[str, Any] = {"players": 4, "max_turns": 10_000}

#: card text -> move kind: "A" (out or 1), "K" (out or 10: K, Q, J), "7", "8",
#: "JK", or the forward count as an int (2 3 4 5 6 9 10).
_FORWARD = {"2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "9": 9, "T": 10}
KIND: dict[str, Any] = {"JK": "JK"}
for _card in STANDARD_DECK:
    _r = _card[0]
    KIND[_card] = _FORWARD.get(_r, "K" if _r in "KQJ" else _r)


def deck_for(players: int) -> list[str]:
    """PJ-1: 3 decks + 6 jokers for 4 or 6 players, 4 decks + 8 jokers for 8."""
    decks, jokers = (4, 8) if players == 8 else (3, 6)
    return list(STANDARD_DECK) * decks + ["JK"] * jokers


class PegsAndJokersState(GameState):
    """A running game.  Build one with ``SPEC.new_game`` or ``from_position``."""

    def __init__(self, options: Mapping[str, JSON], rng: random.Random, dealer: int) -> None:
        n = self.num_seats = options["players"]
        self.num_teams = NUM_TEAMS
        #: team of each seat (RULES 0.2), and the seats of each team in seat order.
        self._team = tuple(team_of_seat(s, NUM_TEAMS) for s in range(n))
        self._members = tuple(tuple(s for s in range(n) if self._team[s] == t) for t in range(NUM_TEAMS))
        self.options = dict(options)
        self.max_turns: int = options["max_turns"]
        board = self.board = board_for(n)
        self._L = board.holes
        self._rng = rng
        self.dealer = dealer
        self.turn = 0  # turns played
        self.seat = (dealer + 1) % n  # PJ-4: left of the dealer starts
        self.colour = self.seat
        self.hands: list[list[str]] = [[] for _ in range(n)]
        self.draw_pile: list[str] = []  # top = last
        self.discard_pile: list[str] = []  # in the order played; top = last
        self.pegs = [[START] * PEGS for _ in range(n)]
        self.occ = [-1] * board.holes
        self.home = [0] * n
        self.hits = [0] * n  # hits made, per seat
        self._outcome: Outcome | None = None
        #: (texts, moves) of the decision, or None until generated; the lists are
        #: never changed once made (``legal_actions`` hands out a copy).
        self._legal: tuple[list[str], list[tuple | None]] | None = None

    # -- construction -----------------------------------------------------

    @classmethod
    def from_position(
        cls,
        players: int = 4,
        *,
        hands: Mapping[int, Sequence[str]],
        pegs: Mapping[int, Sequence[str]] | None = None,
        to_act: int = 0,
        dealer: int | None = None,
        draw_pile: Sequence[str] | None = None,
        discard_pile: Sequence[str] = (),
        turn: int = 0,
        max_turns: int = DEFAULT_OPTIONS["max_turns"],
        seed: int = 0,
    ) -> PegsAndJokersState:
        """A constructed position at the moment ``to_act`` must decide.

        ``pegs`` maps a seat to the position texts of (up to 5 of) its pegs
        (``"S"``, ``"T12"``, ``"H3"``); missing pegs are in start.  ``hands``
        maps seats to their cards; ``to_act`` holds its hand as given (its
        turn has begun, nothing is drawn for it).  The draw pile defaults to
        the rest of the PJ-1 cards, shuffled with ``seed`` (top = last).
        ``turn`` is the number of turns already played.
        """
        options = SPEC.normalize_options({"players": players, "max_turns": max_turns})
        n = players
        state = cls(options, random.Random(seed), (to_act - 1) % n if dealer is None else dealer)
        board = state.board
        for seat, texts in (pegs or {}).items():
            if len(texts) > PEGS:
                raise ValueError(f"seat {seat} has more than {PEGS} pegs")
            for i, text in enumerate(texts):
                pos = board.code(text)
                if 0 <= pos < state._L:
                    if state.occ[pos] != -1:
                        raise ValueError(f"two pegs on {text}")
                    state.occ[pos] = seat
                elif pos >= state._L:
                    bit = 1 << (pos - state._L)
                    if state.home[seat] & bit:
                        raise ValueError(f"two pegs of seat {seat} on {text}")
                    state.home[seat] |= bit
                state.pegs[seat][i] = pos
        for seat, cards in hands.items():
            state.hands[seat] = list(cards)
        if draw_pile is None:
            rest = deck_for(n)
            for card in [c for h in state.hands for c in h] + list(discard_pile):
                rest.remove(card)
            shuffle(rest, state._rng)
            draw_pile = rest
        state.draw_pile = list(draw_pile)
        state.discard_pile = list(discard_pile)
        state.turn = turn
        state.seat = to_act
        if any(state._team_done(t) for t in range(NUM_TEAMS)):
            raise ValueError("a team already has every peg home")
        state.colour = state._colour_for(to_act)
        if not state.hands[to_act]:
            raise ValueError("the seat to act needs at least one card")
        return state

    def _deal(self, events: list[Event]) -> None:
        """PJ-1/PJ-3/0.5: shuffle, deal 5 each one at a time from the dealer's left."""
        n = self.num_seats
        deck = deck_for(n)
        shuffle(deck, self._rng)
        for _ in range(DEAL):
            for i in range(1, n + 1):
                self.hands[(self.dealer + i) % n].append(deck.pop())
        self.draw_pile = deck
        events.append(Event({
            "type": "deal", "deal": 1, "dealer": self.dealer, "players": n,
            "holes": self._L, "cards": len(deck) + DEAL * n, "draw_pile": len(deck),
        }))
        events.extend(Event({"type": "hand", "seat": s, "cards": list(self.hands[s])}, (s,)) for s in range(n))
        self._start_turn(events)

    # -- turn flow ----------------------------------------------------------

    def _colour_for(self, seat: int) -> int:
        """PJ-8: own colour, else the nearest teammate clockwise with pegs outside home."""
        n = self.num_seats
        team = self._team
        for i in range(n):
            c = (seat + i) % n
            if team[c] == team[seat] and self.home[c] != FULL_HOME:
                return c
        raise AssertionError("the team of this seat has already won")

    def _team_done(self, team: int) -> bool:
        home = self.home
        return all(home[c] == FULL_HOME for c in self._members[team])

    def _start_turn(self, events: list[Event]) -> None:
        """PJ-4.1: draw up to 6 (reshuffling the discard pile if needed, PJ-3)."""
        s = self.seat
        hand = self.hands[s]
        drawn = []
        while len(hand) < HAND:
            if not self.draw_pile:
                if not self.discard_pile:
                    break
                self._reshuffle(events)
            card = self.draw_pile.pop()
            hand.append(card)
            drawn.append(card)
        self.colour = s if self.home[s] != FULL_HOME else self._colour_for(s)
        events.append(Event({
            "type": "turn", "turn": self.turn + 1, "seat": s, "colour": self.colour,
            "drew": len(drawn), "draw_pile": len(self.draw_pile),
        }))
        if drawn:
            events.append(Event({"type": "draw", "seat": s, "count": len(drawn)}))
            events.append(Event({"type": "drawn", "seat": s, "cards": drawn}, (s,)))
        self._legal = None

    def _reshuffle(self, events: list[Event]) -> None:
        """PJ-3 (ruling): the discard pile, shuffled, becomes the draw pile."""
        pile = self.discard_pile
        shuffle(pile, self._rng)
        self.draw_pile = pile
        self.discard_pile = []
        events.append(Event({"type": "reshuffle", "draw_pile": len(pile)}))

    # -- the contract -------------------------------------------------------

    def to_act(self) -> int | None:
        return None if self._outcome is not None else self.seat

    def decision(self) -> str:
        return "move"

    def outcome(self) -> Outcome | None:
        return self._outcome

    def legal_actions(self) -> list[str]:
        if self._outcome is not None:
            return []
        return list((self._legal or self._generate())[0])

    def apply(self, action: str) -> list[Event]:
        if self._outcome is not None:
            raise IllegalAction("the game is over")
        texts, moves = self._legal or self._generate()
        try:
            move = moves[texts.index(action)]
        except ValueError:
            self._refuse(action, texts)
        seat, colour = self.seat, self.colour
        card = action[-2:] if move is None else action[:2]
        self.hands[seat].remove(card)
        self.discard_pile.append(card)
        self.turn += 1
        if move is None:
            events = [Event({"type": "discard", "turn": self.turn, "seat": seat,
                             "colour": colour, "card": card})]
        else:
            names = self.board.names
            parts = []
            hits = 0
            for rels in move:
                self._apply_part(rels)
                _, f, t = rels[0]
                parts.append({
                    "peg": [names[f + 1], names[t + 1]],
                    "hits": [[o, names[a + 1], names[b + 1]] for o, a, b in rels[1:]]
                    if len(rels) > 1 else [],
                })
                hits += len(rels) - 1
            self.hits[seat] += hits
            events = [Event({"type": "move", "turn": self.turn, "seat": seat, "colour": colour,
                             "card": card, "action": action, "parts": parts, "hits": hits})]
            if self.home[colour] == FULL_HOME and self._team_done(self._team[colour]):
                self._finish(events, "win", (self._team[colour],), "all_pegs_home")
                return events
        if self.turn >= self.max_turns:
            self._finish(events, "draw", (), "max_turns")
            return events
        self.seat = (seat + 1) % self.num_seats
        self._start_turn(events)
        return events

    def _refuse(self, action: str, legal: list[str]) -> NoReturn:
        """Raise the right error for an action that is not in the legal list."""
        if not isinstance(action, str):
            raise InvalidAction(f"an action is a string, not {type(action).__name__}")
        parsed = Action.from_text(action)  # InvalidAction if it does not parse
        hand = self.hands[self.seat]
        if parsed.card not in hand:
            raise IllegalAction(f"{parsed.card} is not in the hand of seat {self.seat}")
        if not isinstance(parsed, Play):  # a Discard
            raise IllegalAction(
                f"{action!r}: a discard is allowed only without a legal non-joker move (PJ-4.3)"
            )
        if len(parsed.steps) == 2:
            swapped = f"{parsed.card} {parsed.steps[1].text()},{parsed.steps[0].text()}"
            if swapped in legal:
                # Only the listed text of a move is accepted (PJ-5.4: two orders
                # that end alike are one move, listed once).
                raise IllegalAction(
                    f"{action!r} is not in the legal list, which has these parts in the "
                    f"other order: {swapped!r} (PJ-5.4)"
                )
        raise IllegalAction(f"{action!r} is not a legal move now (colour {self.colour})")

    def _finish(self, events: list[Event], status: str, winners: tuple[int, ...], reason: str) -> None:
        scores = self.team_home()
        outcome = self._outcome = Outcome(
            status=status,  # type: ignore[arg-type]
            winners=winners,
            scores=scores,
            reason=reason,
            detail={"turns": self.turn, "home": self.home_counts(), "hits": list(self.hits)},
        )
        self._legal = None
        events.append(Event({
            "type": "game_over", **outcome.to_json(), "turns": self.turn, "pegs": self.peg_texts(),
        }))

    def home_counts(self) -> list[int]:
        return [m.bit_count() for m in self.home]

    def team_home(self) -> tuple[int, ...]:
        counts = self.home_counts()
        return tuple(sum(counts[s] for s in seats) for seats in self._members)

    def peg_texts(self) -> list[list[str]]:
        names = self.board.names
        return [[names[p + 1] for p in sorted(pl)] for pl in self.pegs]

    def observe(self, seat: int) -> dict[str, JSON]:
        over = self._outcome is not None
        board = self.board
        return {
            "seat": seat,
            "players": self.num_seats,
            "holes": self._L,
            "dealer": self.dealer,
            "turn": self.turn if over else self.turn + 1,
            "turns_played": self.turn,
            "max_turns": self.max_turns,
            "to_act": None if over else self.seat,
            "colour": None if over else self.colour,
            "hand": sorted(self.hands[seat]),
            "hand_sizes": [len(h) for h in self.hands],
            "draw_pile": len(self.draw_pile),
            "discard_pile": list(self.discard_pile),
            "pegs": self.peg_texts(),
            "home": self.home_counts(),
            "team_home": list(self.team_home()),
            "come_out": list(board.come_out),
            "in_spot": list(board.in_spot),
            "hits": list(self.hits),
        }

    def clone(self) -> PegsAndJokersState:
        new = object.__new__(PegsAndJokersState)
        new.__dict__.update(self.__dict__)
        rng = random.Random()
        rng.setstate(self._rng.getstate())
        new._rng = rng
        new.hands = [list(h) for h in self.hands]
        new.draw_pile = list(self.draw_pile)
        new.discard_pile = list(self.discard_pile)
        new.pegs = [list(p) for p in self.pegs]
        new.occ = list(self.occ)
        new.home = list(self.home)
        new.hits = list(self.hits)
        new.options = dict(self.options)
        new._legal = self._legal  # shared: its lists are never changed
        return new

    # -- board mechanics -----------------------------------------------------

    def _apply_part(self, rels: tuple) -> None:
        """Relocate pegs (colour, from, to) all at once: lift every peg, then place."""
        L = self._L
        occ = self.occ
        home = self.home
        pegs = self.pegs
        for col, f, t in rels:
            if f >= L:
                home[col] &= ~(1 << (f - L))
            elif f >= 0:
                occ[f] = -1
            pl = pegs[col]
            pl[pl.index(f)] = t
        for col, _f, t in rels:
            if t >= L:
                home[col] |= 1 << (t - L)
            elif t >= 0:
                occ[t] = col

    def _undo_part(self, rels: tuple) -> None:
        self._apply_part(tuple((col, t, f) for col, f, t in rels))

    def _land(self, c: int, f: int, h: int) -> tuple | None:
        """Relocations of colour c's peg moving from f to track hole h (PJ-7), or None.

        PJ-6.1: never onto its own colour.  PJ-7.1: an opponent goes to start.
        PJ-7.2: a teammate goes to its in-spot; illegal if, with the mover
        arrived, that in-spot holds a peg of the team; an opponent there goes
        to start.
        """
        occ = self.occ
        o = occ[h]
        if o < 0:
            return ((c, f, h),)
        if o == c:
            return None
        team = self._team
        if team[o] != team[c]:
            return ((c, f, h), (o, h, START))
        spot = self.board.in_spot[o]
        if spot == h:
            return None  # the mover itself would hold the in-spot
        q = -1 if spot == f else occ[spot]
        if q < 0:
            return ((c, f, h), (o, h, spot))
        if team[q] == team[c]:
            return None
        return ((c, f, h), (o, h, spot), (q, spot, START))

    def _forwards(self, c: int, p: int, gap: int, counts: Sequence[int]) -> list[list[tuple]]:
        """Options moving colour c's peg at p forward by each n in ``counts`` (PJ-5, PJ-6).

        One list per n; an option is ``(relocations, text, to, hits)``: the
        part, its text (``"<c>:<from>-<to>"``), where the peg lands and the
        relocations of the pegs it hits.  ``gap``: forward steps to the
        nearest other own peg on the track (L if none).
        """
        L = self._L
        board = self.board
        head = board.part_heads[c][p + 1]
        names = board.names
        home = self.home[c]
        result: list[list[tuple]] = []
        if p >= L:  # PJ-6.3: within home, exact count, no passing
            j = p - L
            for n in counts:
                out: list[tuple] = []
                if j + n < HOME_HOLES and not (home >> (j + 1)) & ((1 << n) - 1):
                    t = p + n
                    out.append((((c, p, t),), head + names[t + 1], t, ()))
                result.append(out)
            return result
        occ = self.occ
        d = board.to_in_spot[c][p]
        for n in counts:
            out = []
            if n < gap:  # along the track
                h = p + n
                if h >= L:
                    h -= L
                if occ[h] < 0:
                    out.append((((c, p, h),), head + names[h + 1], h, ()))
                else:
                    rels = self._land(c, p, h)
                    if rels is not None:
                        out.append((rels, head + names[h + 1], h, rels[1:]))
            if d < n and d < gap:  # PJ-6.2: past the in-spot into home, exact count
                k = n - d
                if k <= HOME_HOLES and not home & ((1 << k) - 1):
                    t = L + k - 1
                    out.append((((c, p, t),), head + names[t + 1], t, ()))
            result.append(out)
        return result

    def _gaps(self, track: list[int]) -> dict[int, int]:
        """Forward distance from each own track peg to the next own track peg.

        ``track`` is ascending, so the next own peg is the next in the list
        (the first one, a lap on, for the last); a lone peg gets L.
        """
        if not track:
            return {}
        ends = track[1:]
        ends.append(track[0] + self._L)
        return {t: e - t for t, e in zip(track, ends, strict=True)}

    # -- legal moves -----------------------------------------------------------

    def _generate(self) -> tuple[list[str], list[tuple | None]]:
        """Make the legal texts and moves for the seat to act and its colour (PJ-4.3, PJ-5).

        Each move generator gets ``head`` (``"<card> "``) and returns parallel
        lists ``(texts, moves)``.  Another card of the same kind (``K``, ``Q``
        and ``J``; same-rank cards) reuses them with its own head: every card
        text is two characters.
        """
        c = self.colour
        L = self._L
        movable = sorted(self.pegs[c])  # start (-1) first, then track, then home (>= L)
        starts = movable.count(START)
        has_start = starts > 0
        del movable[:starts]
        track = movable[:bisect_left(movable, L)]
        gaps = self._gaps(track)
        cards = sorted(set(self.hands[self.seat]))
        by_kind: dict[Any, tuple[list[str], list]] = {}
        texts: list[str] = []
        moves: list[tuple | None] = []
        forced = False
        for card in cards:
            kind = KIND[card]
            head = card + " "
            entry = by_kind.get(kind)
            if entry is None:
                if kind == "JK":
                    entry = self._joker_moves(c, head, track, has_start)
                elif kind == "7":
                    entry = self._seven_moves(c, head, movable, gaps)
                elif kind == "8":
                    entry = self._back_moves(c, head, track, gaps)
                else:
                    entry = self._step_moves(c, head, kind, movable, gaps, has_start)
                by_kind[kind] = entry
                kind_texts, kind_moves = entry
            else:
                kind_moves = entry[1]
                kind_texts = [head + text[3:] for text in entry[0]]
            if not kind_moves:
                continue
            if kind != "JK":
                forced = True
            texts += kind_texts
            moves += kind_moves
        if not forced:  # PJ-4.3: only joker moves, or none at all: any card may go
            texts += ["discard " + card for card in cards]
            moves += [None] * len(cards)
        legal = self._legal = (texts, moves)
        return legal

    def _step_moves(self, c: int, head: str, kind: Any, movable: list[int],
                    gaps: dict[int, int], has_start: bool) -> tuple[list[str], list]:
        """PJ-5.1 … PJ-5.3: out of start (A, K, Q, J) or forward n (``_forwards`` inlined)."""
        board = self.board
        heads = board.part_heads[c]
        names = board.names
        texts: list[str] = []
        moves: list = []
        if kind == "A" or kind == "K":
            if has_start:
                h = board.come_out[c]
                rels = self._land(c, START, h)
                if rels is not None:
                    texts.append(head + heads[0] + names[h + 1])
                    moves.append((rels,))
            n = 1 if kind == "A" else 10
        else:
            n = kind
        L = self._L
        occ = self.occ
        home = self.home[c]
        to_in = board.to_in_spot[c]
        for p in movable:
            if p >= L:  # PJ-6.3
                j = p - L
                if j + n < HOME_HOLES and not (home >> (j + 1)) & ((1 << n) - 1):
                    texts.append(head + heads[p + 1] + names[p + n + 1])
                    moves.append((((c, p, p + n),),))
                continue
            g = gaps[p]
            if n < g:
                h = p + n
                if h >= L:
                    h -= L
                if occ[h] < 0:
                    texts.append(head + heads[p + 1] + names[h + 1])
                    moves.append((((c, p, h),),))
                else:
                    rels = self._land(c, p, h)
                    if rels is not None:
                        texts.append(head + heads[p + 1] + names[h + 1])
                        moves.append((rels,))
            d = to_in[p]
            if d < n and d < g:  # PJ-6.2
                k = n - d
                if k <= HOME_HOLES and not home & ((1 << k) - 1):
                    texts.append(head + heads[p + 1] + names[L + k])
                    moves.append((((c, p, L + k - 1),),))
        return texts, moves

    def _back_moves(self, c: int, head: str, track: list[int],
                    gaps: dict[int, int]) -> tuple[list[str], list]:
        """PJ-5.5: back 8 on the track; PJ-6.1 backwards: no own peg 1 … 8 holes behind.

        The nearest own peg behind ``track[i]`` is ``track[i - 1]`` (cyclically),
        and its gap is the distance between the two.
        """
        L = self._L
        heads = self.board.part_heads[c]
        names = self.board.names
        texts: list[str] = []
        moves: list = []
        for i, t in enumerate(track):
            if gaps[track[i - 1]] > 8:
                h = t - 8
                if h < 0:
                    h += L
                rels = self._land(c, t, h)
                if rels is not None:
                    texts.append(head + heads[t + 1] + names[h + 1])
                    moves.append((rels,))
        return texts, moves

    def _joker_moves(self, c: int, head: str, track: list[int],
                     has_start: bool) -> tuple[list[str], list]:
        """PJ-5.6: a peg in start or on the track jumps onto another colour's track peg."""
        L = self._L
        heads = self.board.part_heads[c]
        names = self.board.names
        targets = sorted(p for o, pl in enumerate(self.pegs) if o != c for p in pl if 0 <= p < L)
        sources = ([START] if has_start else []) + track
        land = self._land
        texts: list[str] = []
        moves: list = []
        for f in sources:
            head_f = head + heads[f + 1]
            for h in targets:
                rels = land(c, f, h)
                if rels is not None:
                    texts.append(head_f + names[h + 1])
                    moves.append((rels,))
        return texts, moves

    def _seven_moves(self, c: int, head: str, movable: list[int],
                     gaps: dict[int, int]) -> tuple[list[str], list]:
        """PJ-5.4: 7 with one peg, or split 1+6 … 6+1 between two pegs, deduplicated.

        Two sequences are one move when they leave every peg in the same place;
        the key is the net change of colour c's pegs (bit sets of the holes
        left and of the holes reached; own pegs are alike) plus the hits.  The
        second part is taken from the first-part-free options of its peg unless
        the first part changed a hole that the second part's outcome depends on
        (its path, its landing teammate's in-spot, the home holes); only then
        is it recomputed on the board as the first part left it.
        """
        L = self._L
        board = self.board
        forwards = self._forwards
        #: options[p][n]: ``_forwards`` options of peg p by n = 1 … 7 on this board.
        options: dict[int, list] = {p: [[]] + forwards(c, p, gaps.get(p, L), range(1, 8)) for p in movable}
        seen: set = set()
        texts: list[str] = []
        moves: list = []
        for p in movable:
            for rels, text, t, hits in options[p][7]:
                seen.add((1 << p, 1 << t, hits))  # new: one option per (peg, landing hole)
                texts.append(head + text)
                moves.append((rels,))
        if len(movable) < 2:
            return texts, moves
        occ = self.occ
        in_spot = board.in_spot
        to_in = board.to_in_spot[c]
        path_bits = board.path_bits
        home_bits = board.home_bits
        team = self._team
        #: (b, depends, options[b]) per peg; depends[y]: bit set of the holes
        #: (coded as positions) the outcome of moving b forward y depends on.
        pegs: list[tuple[int, list[int], list[list[tuple]]]] = []
        for b in movable:
            depends = [0]
            for y in range(1, 7):
                if b >= L:
                    mask = home_bits
                else:
                    mask = path_bits[b][y]
                    if to_in[b] < y:
                        mask |= home_bits
                    h = b + y - L if b + y >= L else b + y
                    o = occ[h]
                    if o >= 0 and o != c and team[o] == team[c]:
                        mask |= 1 << in_spot[o]
                depends.append(mask)
            pegs.append((b, depends, options[b]))
        pegs_c = self.pegs[c]
        for a, _, options_a in pegs:
            a_bit = 1 << a
            for x in range(1, 7):
                y = 7 - x
                for r1, text1, a1, hits1 in options_a[x]:
                    a1_bit = 1 << a1
                    changed = a_bit | a1_bit
                    for _, f, t in hits1:  # a hit peg leaves a track hole
                        changed |= 1 << f
                        if t >= 0:
                            changed |= 1 << t
                    head1 = head + text1 + ","
                    applied = False
                    for b, depends, options_b in pegs:
                        if b == a:
                            continue
                        if depends[y] & changed:
                            if not applied:
                                self._apply_part(r1)
                                applied = True
                                gaps2 = self._gaps(sorted(p for p in pegs_c if 0 <= p < L))
                            second = forwards(c, b, gaps2.get(b, L), (y,))[0]
                        else:
                            second = options_b[y]
                        for r2, text2, b1, hits2 in second:
                            hits = hits1 + hits2
                            if len(hits) > 1:
                                hits = tuple(sorted(hits))
                            # b1 == a: b took the hole a left: net, one peg moved
                            key = ((1 << b, a1_bit, hits) if b1 == a
                                   else (a_bit | 1 << b, a1_bit | 1 << b1, hits))
                            if key not in seen:
                                seen.add(key)
                                texts.append(head1 + text2)
                                moves.append((r1, r2))
                    if applied:
                        self._undo_part(r1)
        return texts, moves


class PegsAndJokersSpec(GameSpec):
    name = "pegs-and-jokers"
    title = "Pegs and Jokers"
    rules_version = "2"  # 2: unified events (public draw + private drawn, game_over with detail)
    action_type = Action

    def normalize_options(self, options: Mapping[str, JSON] | None) -> dict[str, JSON]:
        out = merge_options("pegs-and-jokers", options, DEFAULT_OPTIONS)
        players = out["players"]
        if type(players) is not int or players not in PLAYER_COUNTS:
            raise InvalidOptions(f"players must be 4, 6 or 8, not {players!r}")
        positive_int("max_turns", out["max_turns"])
        return out

    def num_seats(self, options: Mapping[str, JSON] | None = None) -> int:
        return self.normalize_options(options)["players"]

    def num_teams(self, options: Mapping[str, JSON] | None = None) -> int:
        return 2

    def new_game(
        self, seed: int, options: Mapping[str, JSON] | None = None
    ) -> tuple[PegsAndJokersState, list[Event]]:
        opts = self.normalize_options(options)
        rng = random.Random(seed)
        dealer = randbelow(rng, opts["players"])  # 0.4
        state = PegsAndJokersState(opts, rng, dealer)
        events: list[Event] = []
        state._deal(events)
        return state, events

    def determinize(self, view: View, rng: random.Random) -> PegsAndJokersState:
        from .determinize import determinize  # the sampler builds on this module

        return determinize(view, rng)


SPEC = PegsAndJokersSpec()
