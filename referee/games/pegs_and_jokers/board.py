"""Board geometry of Pegs and Jokers (RULES.md PJ-2), precomputed per player count.

Internal position of a peg of colour ``c`` (an int, so the hot path stays on
ints and list indexing):

* ``START`` (-1): in the colour's start area;
* ``0 … L-1``: track hole, ``L = 18·N`` (shared by all colours);
* ``L + k - 1``: the colour's home hole ``H<k>`` (``k = 1 … 5``).

Text form (the one used in actions, events and observations): ``"S"``,
``"T<n>"``, ``"H<k>"``.  Home holes are always those of the peg's colour.
"""

from __future__ import annotations

from functools import cache

START = -1
HOME_HOLES = 5
SIDE = 18  # holes per side (PJ-2)
COME_OUT_OFFSET = 8  # PJ-2.1
IN_SPOT_OFFSET = 3  # PJ-2.2


class Board:
    """Static tables for ``n`` players; get one with ``board_for(n)``."""

    __slots__ = (
        "players", "holes", "come_out", "in_spot", "names", "codes", "part_heads",
        "to_in_spot", "path_bits", "home_bits",
    )

    def __init__(self, players: int) -> None:
        self.players = players
        L = self.holes = SIDE * players
        #: come-out hole per colour (PJ-2.1) and in-spot per colour (PJ-2.2).
        self.come_out = tuple(SIDE * p + COME_OUT_OFFSET for p in range(players))
        self.in_spot = tuple(SIDE * p + IN_SPOT_OFFSET for p in range(players))
        #: ``names[pos + 1]`` is the text of internal position ``pos``.
        self.names = ("S",) + tuple(f"T{t}" for t in range(L)) + tuple(
            f"H{k}" for k in range(1, HOME_HOLES + 1)
        )
        #: text -> internal position (inverse of ``names``).
        self.codes = {name: i - 1 for i, name in enumerate(self.names)}
        #: ``part_heads[c][pos + 1]``: ``"<c>:<position text>-"``, the start of the
        #: text of a part moving colour c's peg from ``pos``; add the target's name.
        self.part_heads = tuple(
            tuple(f"{c}:{name}-" for name in self.names) for c in range(players)
        )
        #: ``to_in_spot[c][t]``: forward steps from track hole t to colour c's in-spot.
        self.to_in_spot = tuple(
            tuple((i - t) % L for t in range(L)) for i in self.in_spot
        )
        #: ``path_bits[t][y]``: bit set of the track holes t+1 … t+y (bit i = hole i).
        self.path_bits = tuple(
            tuple(sum(1 << ((t + i) % L) for i in range(1, y + 1)) for y in range(11))
            for t in range(L)
        )
        #: bit set of the home holes (bit L+k-1 = H<k>), as positions are coded.
        self.home_bits = ((1 << HOME_HOLES) - 1) << L

    def name(self, pos: int) -> str:
        return self.names[pos + 1]

    def code(self, text: str) -> int:
        """Internal position of a position text; ``KeyError`` if not on this board."""
        return self.codes[text]

    def side_of(self, hole: int) -> int:
        return hole // SIDE


@cache
def board_for(players: int) -> Board:
    return Board(players)
