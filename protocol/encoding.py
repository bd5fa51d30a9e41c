"""Fixed-size encodings of what the referee sends a seat, for learning bots.

A ``request`` carries a seat's ``state`` (the engine's ``observe(seat)``,
docs/games/*.md) and its ``legal`` actions.  This module turns them into
numbers of a fixed layout per game — the observation vector and the legal
action ids — and turns action ids back into the protocol's action text.  It
is the one encoding of the project: ``referee.env`` (the PettingZoo
environment, docs/learning.md) and ``protocol.bot.run_policy`` (a policy
entered as a subprocess bot) both use it, so a policy trained in-process sees
exactly the same numbers when it plays under ``referee run``.

Everything is a function of ``state`` and ``legal`` only — what the protocol
sends that seat — so nothing hidden from the seat can reach its encoding.
Seats and teams are *relative* to the observing seat (``0`` = this seat,
``1`` = its left-hand neighbour, …; team ``0`` = its own team), so one policy
serves every seat.

Standard library only (``array``), like the rest of ``protocol``: an
observation is an ``array('i')`` and a mask a ``bytearray``; ``referee.env``
and ``run_policy`` wrap them as NumPy arrays without a copy.

Actions.  Back Alley and Schmier: one id per action.  Pegs and Jokers: an
action is a short sequence of *tokens* — the card (or ``discard`` + card),
then the source and destination position of each part (two parts for a
split 7), and an ``end`` token only where a complete move could also go on —
chosen one per step (PettingZoo's convention: the same agent stays selected
for the steps of one decision).  ``Decision`` holds one decision's legal
actions and answers, for a prefix of tokens chosen so far, which tokens may
come next and whether the prefix completes an action.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["Decision", "Encoding", "encoding_for"]

SUITS = "CDHS"
RANKS = "23456789TJQKA"
STANDARD_DECK: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)

#: Most an int32 field may declare as its bound.
INT32_MAX = 2**31 - 1
#: Action texts whose ids a Pegs and Jokers encoding remembers (then it starts again).
TOKEN_CACHE = 1 << 16


class Layout:
    """Named fields of an observation vector: offset, size and per-entry bounds."""

    def __init__(self) -> None:
        self.fields: dict[str, tuple[int, int]] = {}
        self.low: list[int] = []
        self.high: list[int] = []
        self.notes: dict[str, str] = {}

    def add(self, name: str, size: int, high: int = 1, low: int = 0, note: str = "") -> int:
        offset = len(self.low)
        self.fields[name] = (offset, size)
        self.low += [low] * size
        self.high += [high] * size
        self.notes[name] = note
        return offset

    @property
    def size(self) -> int:
        return len(self.low)


class Decision:
    """The legal actions of one decision, as token sequences (``Encoding.tokens``).

    ``mask(prefix)`` is a ``bytearray`` over the action ids: 1 for the tokens
    that may follow ``prefix``; ``text(prefix)`` is the action text ``prefix``
    completes, or ``None``; ``end`` is the id of the token that ends an action
    which could also go on (``None`` in games of one token per action).  The
    next tokens are found by scanning the legal sequences (a decision has tens of
    them, and each is asked about a few times), not by building a tree up front.
    """

    __slots__ = ("_n", "_seqs", "end", "legal")

    def __init__(self, encoding: Encoding, legal: Sequence[str]) -> None:
        self.legal = list(legal)
        self._n = encoding.num_actions
        self.end = encoding.end
        seqs: dict[tuple[int, ...], str] = {}
        tokens = encoding.tokens
        for text in legal:
            seq = tokens(text)
            if seq in seqs:
                raise ValueError(f"two legal actions encode alike: {seqs[seq]!r} and {text!r}")
            seqs[seq] = text
        self._seqs = seqs

    def _next(self, prefix: tuple[int, ...]) -> set[int]:
        """The tokens that may follow ``prefix`` (``end`` where a complete action could go on)."""
        k = len(prefix)
        nxt = {seq[k] for seq in self._seqs if len(seq) > k and seq[:k] == prefix}
        if nxt and self.end is not None and prefix in self._seqs:
            nxt.add(self.end)
        return nxt

    def mask(self, prefix: tuple[int, ...] = ()) -> bytearray:
        mask = bytearray(self._n)
        for token in self._next(prefix):
            mask[token] = 1
        return mask

    def allows(self, prefix: tuple[int, ...], token: int) -> bool:
        return token in self._next(prefix)

    def text(self, prefix: tuple[int, ...]) -> str | None:
        """The action ``prefix`` completes: a full token sequence that cannot go on,
        or one followed by ``end``; else ``None``."""
        if prefix and self.end is not None and prefix[-1] == self.end:
            return self._seqs.get(prefix[:-1])
        text = self._seqs.get(prefix)
        if text is None:
            return None
        k = len(prefix)
        if any(len(seq) > k and seq[:k] == prefix for seq in self._seqs):
            return None  # it could go on: ``end`` says it stops here
        return text


class Encoding:
    """The encoding of one game (and player count).  Get one with ``encoding_for``.

    ``size``, ``low`` and ``high``: the observation's length and bounds;
    ``fields``: name -> ``(offset, length)``; ``num_actions``: the number of
    action ids; ``action_names[i]``: what id ``i`` means; ``end``: the id of
    the end token (``None`` where every action is one id).
    """

    game: str = ""
    players: int = 0
    num_actions: int = 0
    end: int | None = None
    action_names: list[str]

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.size = layout.size
        self.low = layout.low
        self.high = layout.high
        self.fields = layout.fields

    # -- observation ------------------------------------------------------------

    def encode(self, state: Mapping[str, Any], prefix: Sequence[int] = ()) -> array:
        """The observation vector of a seat's ``state``; ``prefix``: the tokens this
        seat has chosen so far in its pending decision (Pegs and Jokers)."""
        raise NotImplementedError

    # -- actions ----------------------------------------------------------------

    def tokens(self, text: str) -> tuple[int, ...]:
        """The action ids of an action text, in the order they are chosen."""
        raise NotImplementedError

    def action_text(self, ids: Sequence[int], state: Mapping[str, Any] | None = None) -> str:
        """The action text of a complete token sequence (the inverse of ``tokens``).

        ``state`` is needed only where the text names more than the tokens do
        (Pegs and Jokers: the colour that moves, ``state["colour"]``)."""
        raise NotImplementedError

    def decision(self, legal: Sequence[str]) -> Decision:
        return Decision(self, legal)

    def mask(self, legal: Iterable[str]) -> bytearray:
        """The mask of a one-token-per-action game's legal list."""
        mask = bytearray(self.num_actions)
        ids = self._ids
        for text in legal:
            mask[ids[text]] = 1
        return mask

    _ids: dict[str, int]


def _onehot_index(items: Sequence[str]) -> dict[str, int]:
    return {x: i for i, x in enumerate(items)}


# --- Back Alley -------------------------------------------------------------------


class BackAlleyEncoding(Encoding):
    """Back Alley (RULES.md §1): 4 seats, teams 0-2 and 1-3.

    Action ids: ``0`` pass, ``1`` … ``12`` the bids ``"1"`` … ``"12"``, ``13``
    board, ``14`` … ``67`` the 54 cards in ``DECK`` order (clubs, diamonds,
    hearts, spades, each 2 … A, then ``BJ``, ``LJ``).
    """

    game = "back-alley"
    players = 4
    DECK: tuple[str, ...] = STANDARD_DECK + ("BJ", "LJ")
    BIDS: tuple[str, ...] = ("pass", *(str(n) for n in range(1, 13)), "board")
    #: Largest absolute score: 25 deals, every one a 4-level board bid (BA-9.2, sum of h = 181).
    SCORE_BOUND = 10 * 4 * 181

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        max_redeals = int((options or {}).get("max_redeals", 10))
        lay = Layout()
        lay.add("hand", 54, note="1 per card held, DECK order")
        lay.add("turn_up", 54, note="one-hot: the turned-up card")
        lay.add("trump", 5, note="one-hot: C D H S, or none (a joker turned up)")
        lay.add("phase", 2, note="one-hot: bid, play (all zero once the game is over)")
        lay.add("h", 13, note="one-hot: cards dealt to each player this deal (1 … 13)")
        lay.add("deal", 25, note="one-hot: deal number 1 … 25")
        lay.add("dealer", 4, note="one-hot: the dealer, relative seat")
        lay.add("bids", 4 * 14, note="per relative seat, one-hot: pass, 1 … 12, board (all zero: not bid yet)")
        lay.add("board_levels", 4, high=4, note="per relative seat: its board level (0: none)")
        lay.add("contracts", 4, high=26, note="own team target, own board level, other team target, its board level")
        lay.add("contracts_made", 1, note="1 once the contracts are set (the play phase)")
        lay.add("joker_discard", 4, note="one-hot: the relative seat that discarded the other joker (BA-3.2)")
        lay.add("trick", 4 * 54, note="per relative seat: the card it played to the current trick")
        lay.add("leader", 4, note="one-hot: the current trick's leader, relative seat")
        lay.add("played", 4 * 54, note="per relative seat: the cards it played to this deal's finished tricks")
        lay.add("tricks_won", 2, high=13, note="this deal: own team, other team")
        lay.add("broken", 1, note="trumps broken (BA-8.2)")
        lay.add("scores", 2, low=-self.SCORE_BOUND, high=self.SCORE_BOUND, note="game score: own team, other team")
        lay.add("redeals", 1, high=max_redeals, note="consecutive all-pass deals so far")
        super().__init__(lay)
        self.action_names = list(self.BIDS) + list(self.DECK)
        self.num_actions = len(self.action_names)
        self._ids = _onehot_index(self.action_names)
        self._card = _onehot_index(self.DECK)
        self._bid = _onehot_index(self.BIDS)
        self._template = array("i", bytes(4 * self.size))
        o = self._o = {name: off for name, (off, _) in self.fields.items()}
        # Index tables of the hot path (``encode``); the field order above is relied on.
        assert o["tricks_won"] + 2 == o["broken"] and o["broken"] + 1 == o["scores"] and o["scores"] + 2 == o["redeals"]
        assert o["contracts"] + 4 == o["contracts_made"]
        self._turn_up = {c: o["turn_up"] + i for c, i in self._card.items()}
        self._trump: dict[str | None, int] = {None: o["trump"] + 4}
        self._trump.update((su, o["trump"] + i) for i, su in enumerate(SUITS))
        self._phase = {"bid": o["phase"], "play": o["phase"] + 1}
        self._h0 = o["h"] - 1
        self._deal0 = o["deal"] - 1
        self._dealer0 = o["dealer"]
        self._levels0 = o["board_levels"]
        self._leader0 = o["leader"]
        self._won0 = o["tricks_won"]
        bid_tables = [{b: o["bids"] + 14 * r + i for b, i in self._bid.items()} for r in range(4)]
        # [me][s]: (bid -> index, board level index) of absolute seat s seen from seat me.
        self._bid_rot = tuple(
            tuple((bid_tables[(s - me) & 3], o["board_levels"] + ((s - me) & 3)) for s in range(4)) for me in range(4)
        )
        # [leader][k]: card -> index for the k-th card of a trick led by relative seat ``leader``.
        self._trick_tables = self._rotations(o["trick"])
        self._played_tables = self._rotations(0)  # indices into the played field (``_played``)
        self._played0, self._played1 = o["played"], o["played"] + 4 * 54
        self._played_template = array("i", bytes(4 * 4 * 54))
        self._memo: dict[int, tuple[list[Any], array]] = {}

    def _played(self, me: int, past: list[dict[str, Any]]) -> array:
        """The ``played`` field of ``me``'s view: built on the one of the last view of this
        seat whose finished tricks ``past`` begins with (they only grow during a deal), else
        anew.  A memo of a pure function of ``(me, past)``: the cached tricks are compared
        with ``past``, not assumed."""
        memo = self._memo.get(me)
        done = 0
        if memo is not None:
            seen, cached = memo
            done = len(seen)
            if done <= len(past) and past[:done] == seen:
                if done == len(past):
                    return cached
                section = array("i", cached)
            else:
                done = 0
        if not done:
            section = array("i", self._played_template)
        rotations = self._played_tables
        for t in past[done:]:
            t0, t1, t2, t3 = rotations[(t["leader"] - me) & 3]
            c0, c1, c2, c3 = t["cards"]
            section[t0[c0]] = section[t1[c1]] = section[t2[c2]] = section[t3[c3]] = 1
        self._memo[me] = (list(past), section)
        return section

    def _rotations(self, offset: int) -> tuple[tuple[dict[str, int], ...], ...]:
        seats = [{c: offset + 54 * r + i for c, i in self._card.items()} for r in range(4)]
        return tuple(tuple(seats[(leader + k) & 3] for k in range(4)) for leader in range(4))

    def tokens(self, text: str) -> tuple[int, ...]:
        try:
            return (self._ids[text],)
        except KeyError:
            raise ValueError(f"not a Back Alley action: {text!r}") from None

    def action_text(self, ids: Sequence[int], state: Mapping[str, Any] | None = None) -> str:
        (i,) = ids
        return self.action_names[i]

    def encode(self, state: Mapping[str, Any], prefix: Sequence[int] = ()) -> array:
        # The hot path of the environment (docs/learning.md's benchmark): every index is
        # looked up in a table made once (per relative seat, card -> vector index).
        o = self._o
        v = array("i", self._template)
        me = state["seat"]
        hand = self._card
        for c in state["hand"]:
            v[hand[c]] = 1
        v[self._turn_up[state["turn_up"]]] = 1
        v[self._trump[state["trump"]]] = 1
        phase = self._phase.get(state["phase"])
        if phase is not None:
            v[phase] = 1
        v[self._h0 + state["h"]] = 1
        v[self._deal0 + state["deal"]] = 1
        v[self._dealer0 + ((state["dealer"] - me) & 3)] = 1
        for (table, level), bid, n in zip(self._bid_rot[me], state["bids"], state["board_levels"], strict=True):
            if bid is not None:
                v[table[bid]] = 1
                v[level] = n
        contracts = state["contracts"]
        if contracts is not None:
            mine, theirs = contracts[me & 1], contracts[(me & 1) ^ 1]
            c0 = o["contracts"]
            v[c0] = mine["target"]
            v[c0 + 1] = mine["board"]
            v[c0 + 2] = theirs["target"]
            v[c0 + 3] = theirs["board"]
            v[c0 + 4] = 1  # contracts_made
        jd = state["joker_discard"]
        if jd is not None:
            v[o["joker_discard"] + ((jd["seat"] - me) & 3)] = 1
        trick = state["trick"]
        if trick is not None:
            leader = (trick["leader"] - me) & 3
            v[self._leader0 + leader] = 1
            for table, c in zip(self._trick_tables[leader], trick["cards"], strict=False):  # seats in the order played
                v[table[c]] = 1
        past = state["past_tricks"]
        if past:
            v[self._played0:self._played1] = self._played(me, past)
        won = state["tricks_won"]
        scores = state["scores"]
        t = me & 1
        w0 = self._won0
        v[w0] = won[t]
        v[w0 + 1] = won[t ^ 1]
        v[w0 + 2] = 1 if state["broken"] else 0  # broken
        v[w0 + 3] = scores[t]  # scores
        v[w0 + 4] = scores[t ^ 1]
        v[w0 + 5] = state["redeals"]  # redeals
        return v


# --- Schmier ----------------------------------------------------------------------


class SchmierEncoding(Encoding):
    """Schmier (RULES.md §2): 6 seats, teams ``seat mod 3``.

    Action ids: ``0`` pass, ``1`` … ``4`` the bids ``"3"`` … ``"6"``, ``5`` …
    ``8`` trump ``C D H S``, ``9`` done (stop discarding), ``10`` … ``62`` the 53
    cards (clubs, diamonds, hearts, spades, each 2 … A, then ``JK``) — a card id
    discards in the discard decisions and plays in the play.
    """

    game = "schmier"
    players = 6
    CARDS: tuple[str, ...] = STANDARD_DECK + ("JK",)
    BIDS: tuple[str, ...] = ("pass", "3", "4", "5", "6")
    PHASES = ("bid", "trump", "discard", "dealer_discard", "play")
    POINTS = ("high", "low", "right", "left", "joker", "game")

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        opts = options or {}
        max_redeals = int(opts.get("max_redeals", 10))
        max_deals = int(opts.get("max_deals", 200))
        lay = Layout()
        lay.add("hand", 53, note="1 per card held, CARDS order")
        lay.add("phase", 5, note="one-hot: bid, trump, discard, dealer_discard, play")
        lay.add("dealer", 6, note="one-hot: the dealer, relative seat")
        lay.add("bids", 6 * 5, note="per relative seat, one-hot: pass, 3, 4, 5, 6 (all zero: not bid)")
        lay.add("declarer", 6, note="one-hot: the declarer, relative seat, once bidding is over")
        lay.add("bid", 1, high=6, note="the contract's bid (0 before)")
        lay.add("trump", 4, note="one-hot: C D H S, once named")
        lay.add("discard_counts", 6, low=-1, high=17, note="per relative seat: cards discarded, -1 unknown yet")
        lay.add("draw_counts", 6, low=-1, high=17, note="per relative seat: cards drawn, -1 unknown yet")
        lay.add("my_discards", 53, note="the cards this seat discarded face down")
        lay.add("trick", 6 * 53, note="per relative seat: the card it played to the current trick")
        lay.add("leader", 6, note="one-hot: the current trick's leader, relative seat")
        lay.add("played", 6 * 53, note="per relative seat: the cards it played to this deal's finished tricks")
        lay.add("tricks_won", 3, high=6, note="per relative team (0 = own): tricks won this deal")
        lay.add("points", 6 * 3,
                note="per point (high low right left joker game), one-hot: the relative team that holds it")
        lay.add("counts", 3, high=81, note="per relative team: card points for Game (SC-7.6) this deal")
        lay.add("scores", 3, low=-6 * max_deals, high=26, note="per relative team: game score")
        lay.add("played_deals", 1, high=max_deals, note="deals played (all-pass deals not counted)")
        lay.add("redeals", 1, high=max_redeals, note="consecutive all-pass deals so far")
        super().__init__(lay)
        self.action_names = list(self.BIDS) + list(SUITS) + ["done"] + list(self.CARDS)
        self.num_actions = len(self.action_names)
        # A card's text is a card id; "C" … "S" are the trump ids.
        self._ids = _onehot_index(self.action_names)
        self._card = _onehot_index(self.CARDS)
        self._bid = _onehot_index(self.BIDS)
        self._phase = _onehot_index(self.PHASES)
        self._template = array("i", bytes(4 * self.size))
        self._o = {name: off for name, (off, _) in self.fields.items()}

    def tokens(self, text: str) -> tuple[int, ...]:
        try:
            return (self._ids[text],)
        except KeyError:
            raise ValueError(f"not a Schmier action: {text!r}") from None

    def action_text(self, ids: Sequence[int], state: Mapping[str, Any] | None = None) -> str:
        (i,) = ids
        return self.action_names[i]

    def encode(self, state: Mapping[str, Any], prefix: Sequence[int] = ()) -> array:
        o = self._o
        card = self._card
        v = array("i", self._template)
        me = state["seat"]
        myteam = me % 3
        for c in state["hand"]:
            v[card[c]] = 1
        phase = self._phase.get(state["phase"])
        if phase is not None:
            v[o["phase"] + phase] = 1
        v[o["dealer"] + (state["dealer"] - me) % 6] = 1
        bid_ix = self._bid
        for b in state["bids"]:
            v[o["bids"] + 5 * ((b["seat"] - me) % 6) + bid_ix[b["bid"]]] = 1
        if state["declarer"] is not None:
            v[o["declarer"] + (state["declarer"] - me) % 6] = 1
            v[o["bid"]] = state["bid"]
        if state["trump"] is not None:
            v[o["trump"] + SUITS.index(state["trump"])] = 1
        dc, drc = o["discard_counts"], o["draw_counts"]
        discard_counts, draw_counts = state["discard_counts"], state["draw_counts"]
        for s in range(6):
            r = (s - me) % 6
            n = discard_counts[s]
            v[dc + r] = -1 if n is None else n
            n = draw_counts[s]
            v[drc + r] = -1 if n is None else n
        for c in state["my_discards"]:
            v[o["my_discards"] + card[c]] = 1
        trick = state["trick"]
        if trick is not None:
            leader = (trick["leader"] - me) % 6
            v[o["leader"] + leader] = 1
            t0 = o["trick"]
            for i, c in enumerate(trick["cards"]):
                v[t0 + 53 * ((leader + i) % 6) + card[c]] = 1
        p0 = o["played"]
        for past in state["tricks"]:
            leader = past["leader"] - me
            for i, c in enumerate(past["cards"]):
                v[p0 + 53 * ((leader + i) % 6) + card[c]] = 1
        points = state["points"]
        for i, name in enumerate(self.POINTS):
            team = points[name]
            if team is not None:
                v[o["points"] + 3 * i + (team - myteam) % 3] = 1
        for t in range(3):
            r = (t - myteam) % 3
            v[o["tricks_won"] + r] = state["tricks_won"][t]
            v[o["counts"] + r] = state["counts"][t]
            v[o["scores"] + r] = state["scores"][t]
        v[o["played_deals"]] = state["played_deals"]
        v[o["redeals"]] = state["redeals"]
        return v


# --- Pegs and Jokers --------------------------------------------------------------


class PegsAndJokersEncoding(Encoding):
    """Pegs and Jokers (RULES.md §3) for 4, 6 or 8 players (teams: even and odd seats).

    Positions (``P = 18·players + 6`` of them): ``S`` (start), ``T0`` …
    ``T<L-1>`` (the track, ``L = 18·players``), ``H1`` … ``H5`` (home).

    Action ids (tokens): ``0`` … ``52`` play that card (``CARDS`` order:
    clubs, diamonds, hearts, spades, each 2 … A, then ``JK``); ``53`` … ``105``
    discard that card; ``106`` … ``106 + P - 1`` a position; ``106 + P``
    end.  A move is: card, source, destination (and, for a split 7, the
    second part's source and destination); a discard is one token; ``end``
    is offered only after a complete move that could also go on.
    """

    game = "pegs-and-jokers"
    CARDS: tuple[str, ...] = STANDARD_DECK + ("JK",)
    PLAY0 = 0
    DISCARD0 = 53
    POS0 = 106

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        opts = options or {}
        n = self.players = int(opts.get("players", 4))
        if n not in (4, 6, 8):
            raise ValueError(f"players must be 4, 6 or 8, not {n!r}")
        max_turns = int(opts.get("max_turns", 10_000))
        if max_turns > INT32_MAX:
            raise ValueError(f"max_turns above {INT32_MAX} does not fit the encoding")
        L = self.holes = 18 * n
        self.positions: tuple[str, ...] = ("S", *(f"T{t}" for t in range(L)), *(f"H{k}" for k in range(1, 6)))
        P = len(self.positions)
        decks = 4 if n == 8 else 3
        lay = Layout()
        lay.add("hand", 53, high=6, note="per card (CARDS order): how many this seat holds")
        lay.add("pegs", n * P, high=5, note="per relative colour, per position: its pegs there")
        lay.add("to_act", n, note="one-hot: the relative seat to act")
        lay.add("colour", n, note="one-hot: the relative colour it moves (PJ-8)")
        lay.add("hand_sizes", n, high=6, note="per relative seat: cards in hand")
        lay.add("draw_pile", 1, high=decks * 54, note="cards in the draw pile")
        lay.add("discards", 53, high=2 * decks, note="per card: how many are in the discard pile")
        lay.add("team_home", 2, high=5 * n // 2, note="pegs home: own team, other team")
        lay.add("turns", 1, high=max_turns, note="turns played")
        lay.add("stage", 5, note="one-hot, what this seat chooses next: card, source 1, destination 1, "
                                 "source 2 (or end), destination 2; all zero when it is not to act")
        lay.add("chosen_card", 106, note="one-hot: the card token chosen in this decision (play or discard)")
        lay.add("chosen", 4 * P, note="one-hot per part position chosen so far: source 1, destination 1, "
                                      "source 2, destination 2")
        super().__init__(lay)
        self.end = self.POS0 + P
        self.num_actions = self.end + 1
        self.action_names = (
            [f"play {c}" for c in self.CARDS] + [f"discard {c}" for c in self.CARDS]
            + list(self.positions) + ["end"]
        )
        self._card = _onehot_index(self.CARDS)
        self._pos = _onehot_index(self.positions)
        self._token_cache: dict[str, tuple[int, ...]] = {}
        self._template = array("i", bytes(4 * self.size))
        self._o = {name: off for name, (off, _) in self.fields.items()}
        self._P = P

    def tokens(self, text: str) -> tuple[int, ...]:
        cached = self._token_cache.get(text)
        if cached is None:
            cached = self._parse(text)
            if len(self._token_cache) >= TOKEN_CACHE:
                self._token_cache.clear()
            self._token_cache[text] = cached
        return cached

    def _parse(self, text: str) -> tuple[int, ...]:
        try:
            if text.startswith("discard "):
                return (self.DISCARD0 + self._card[text[8:]],)
            out = [self._card[text[:2]]]
            if text[2] != " ":
                raise KeyError(text)
            pos = self._pos
            for part in text[3:].split(","):
                src, dst = part.split(":", 1)[1].split("-")
                out.append(self.POS0 + pos[src])
                out.append(self.POS0 + pos[dst])
            return tuple(out)
        except (KeyError, IndexError, ValueError):
            raise ValueError(f"not a Pegs and Jokers action: {text!r}") from None

    def action_text(self, ids: Sequence[int], state: Mapping[str, Any] | None = None) -> str:
        ids = list(ids)
        if ids and ids[-1] == self.end:
            ids.pop()
        if not ids:
            raise ValueError("no tokens")
        first = ids[0]
        if self.DISCARD0 <= first < self.POS0:
            if len(ids) != 1:
                raise ValueError("a discard is one token")
            return "discard " + self.CARDS[first - self.DISCARD0]
        if not 0 <= first < self.DISCARD0 or len(ids) not in (3, 5):
            raise ValueError(f"not a move: {ids}")
        if state is None or state.get("colour") is None:
            raise ValueError("the text of a move needs the state's colour")
        colour = state["colour"]
        names = self.positions
        parts = []
        for i in range(1, len(ids), 2):
            a, b = ids[i] - self.POS0, ids[i + 1] - self.POS0
            if not (0 <= a < self._P and 0 <= b < self._P):
                raise ValueError(f"not a position token: {ids[i]}, {ids[i + 1]}")
            parts.append(f"{colour}:{names[a]}-{names[b]}")
        return self.CARDS[first] + " " + ",".join(parts)

    def encode(self, state: Mapping[str, Any], prefix: Sequence[int] = ()) -> array:
        o = self._o
        card = self._card
        pos = self._pos
        n = self.players
        P = self._P
        v = array("i", self._template)
        me = state["seat"]
        for c in state["hand"]:
            v[card[c]] += 1
        p0 = o["pegs"]
        for colour, pegs in enumerate(state["pegs"]):
            base = p0 + P * ((colour - me) % n)
            for p in pegs:
                v[base + pos[p]] += 1
        if state["to_act"] is not None:
            v[o["to_act"] + (state["to_act"] - me) % n] = 1
        if state["colour"] is not None:
            v[o["colour"] + (state["colour"] - me) % n] = 1
        for s, k in enumerate(state["hand_sizes"]):
            v[o["hand_sizes"] + (s - me) % n] = k
        v[o["draw_pile"]] = state["draw_pile"]
        d0 = o["discards"]
        for c in state["discard_pile"]:
            v[d0 + card[c]] += 1
        th = state["team_home"]
        v[o["team_home"]] = th[me & 1]
        v[o["team_home"] + 1] = th[(me & 1) ^ 1]
        v[o["turns"]] = state["turns_played"]
        if state["to_act"] == me:
            stage = len(prefix)
            v[o["stage"] + min(stage, 4)] = 1
            if prefix:
                v[o["chosen_card"] + prefix[0]] = 1
                c0 = o["chosen"]
                for i, token in enumerate(prefix[1:5]):
                    v[c0 + P * i + token - self.POS0] = 1
        return v


def encoding_for(game: str, options: Mapping[str, Any] | None = None) -> Encoding:
    """The encoding of ``game`` (a registry name) with its options (``players``
    for Pegs and Jokers; the others only set the bounds of counters)."""
    if game == "back-alley":
        return BackAlleyEncoding(options)
    if game == "schmier":
        return SchmierEncoding(options)
    if game == "pegs-and-jokers":
        return PegsAndJokersEncoding(options)
    raise ValueError(f"no encoding for game {game!r}")
