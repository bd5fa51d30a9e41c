"""Tables that fit a terminal: no cell cut with "…", no column dropped without a word.

A ``Grid`` is a table's columns and rows as text.  ``Grid.fit(width)`` turns it into
one rich ``Table`` when it fits ``width`` columns (its headers on one line if that
fits too, else on two where a header has a ``\n``), else into several: every part keeps
the key columns (what names a row: a deal, an entrant) and takes the other columns
most-used first (``Col.rank``) while they fit; the later parts are titled
"(continued)".  Names that are too long wrap over lines (``Col.fold``) instead of
being cut.  ``width=None`` gives one table of every column (``--wide``): print it with
``print_tables``, which renders each table at its own width so the console never
squeezes it.

Every column may wrap as a last resort (a single value wider than the screen), so rich
never writes an ellipsis.  Used by ``referee play`` and ``replay`` (score tables) and
``referee run`` (standings, decision times).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rich is imported where it is used: the renderers import this module
    from rich.console import Console, JustifyMethod
    from rich.table import Table

#: Narrowest a folding (name) column is made before columns move to another table.
MIN_FOLD = 10
#: The width tables are fitted to when the output is no terminal (a file, a pipe).
PIPE_WIDTH = 100


@dataclass(frozen=True)
class Col:
    """One column: its header (``\\n`` for a two-line header), how cells align, whether it
    names the row (``key``: repeated in every part), how used it is (``rank``: lower
    stays first), whether its cells may wrap over lines (``fold``: names) and the group it
    moves with (``group``)."""

    header: str
    justify: JustifyMethod = "right"
    key: bool = False
    rank: int = 50
    fold: bool = False
    #: Columns of one group (e.g. the six points of a Schmier deal) go into the same part.
    group: str | None = None


def _lines_width(text: str) -> int:
    from rich.cells import cell_len

    return max((cell_len(line) for line in text.split("\n")), default=0)


def table_width(widths: Sequence[int]) -> int:
    """The width of a rich table (default box, padding 1 each side) with these column widths."""
    return sum(widths) + 3 * len(widths) + 1


@dataclass
class Grid:
    title: str | None
    cols: list[Col]
    rows: list[list[str]] = field(default_factory=list)
    caption: str | None = None

    def add_row(self, *cells: str) -> None:
        assert len(cells) == len(self.cols), (len(cells), len(self.cols))
        self.rows.append([str(c) for c in cells])

    def natural_widths(self, flat: bool = False) -> list[int]:
        """Each column's width for its longest cell and header (``flat``: the header on one line)."""
        return [max([_lines_width(c.header.replace("\n", " ") if flat else c.header),
                     *(_lines_width(r[i]) for r in self.rows)])
                for i, c in enumerate(self.cols)]

    def fits_flat(self, width: int | None) -> bool:
        """Whether the whole table fits with every header on one line."""
        return width is None or table_width(self.natural_widths(flat=True)) <= width

    def parts(self, width: int | None) -> list[tuple[list[int], dict[int, int]]]:
        """The columns of each part (indexes in display order) and the widths folding
        columns are capped at."""
        natural = self.natural_widths()
        everything = list(range(len(self.cols)))
        if width is None or table_width(natural) <= width:
            return [(everything, {})]
        keys = [i for i, c in enumerate(self.cols) if c.key]
        caps: dict[int, int] = {}
        widths = list(natural)
        folding = [i for i in keys if self.cols[i].fold]
        # Keys take about a third of the screen at most: folding keys (names) wrap first.
        budget = width // 3
        fixed = sum(natural[i] for i in keys if i not in folding) + 3 * len(keys) + 1
        if folding and fixed + sum(natural[i] for i in folding) > budget:
            share = max(MIN_FOLD, (budget - fixed) // len(folding))
            for i in folding:
                if natural[i] > share:
                    caps[i] = widths[i] = share
        key_width = table_width([widths[i] for i in keys])
        # The units that move between parts: a group of columns together, else one column;
        # the most-used (lowest rank) first.
        units: dict[object, list[int]] = {}
        for i in everything:
            if i not in keys:
                units.setdefault(self.cols[i].group or i, []).append(i)
        rest = sorted(units.values(), key=lambda u: (min(self.cols[i].rank for i in u), u[0]))
        parts: list[tuple[list[int], dict[int, int]]] = []
        while rest:
            used, taken = key_width, []
            for unit in rest:
                extra = sum(widths[i] + 3 for i in unit)
                if used + extra <= width:
                    taken.append(unit)
                    used += extra
            part_caps = dict(caps)
            if not taken:  # wider than the screen beside the keys: its values wrap
                taken = [rest[0]]
                for i in rest[0]:
                    part_caps[i] = max(MIN_FOLD, (width - key_width) // len(rest[0]) - 3)
            rest = [u for u in rest if u not in taken]
            parts.append((sorted(keys + [i for u in taken for i in u]), part_caps))
        return parts or [(everything, caps)]

    def fit(self, width: int | None) -> list[Table]:
        """Rich tables showing every cell of this grid within ``width`` columns (None: one
        table, as wide as it needs)."""
        from rich.table import Table

        tables = []
        flat = self.fits_flat(width)  # headers on one line when that fits, else on two
        parts = self.parts(width)
        for n, (indexes, caps) in enumerate(parts):
            title = self.title if n == 0 or self.title is None else f"{self.title.split(' (')[0]} (continued)"
            caption = self.caption if n == 0 else None
            table = Table(title=title, caption=caption, header_style="bold")
            for i in indexes:
                c = self.cols[i]
                table.add_column(c.header.replace("\n", " ") if flat else c.header, justify=c.justify,
                                 no_wrap=False, overflow="fold", max_width=caps.get(i))
            for row in self.rows:
                table.add_row(*(row[i] for i in indexes))
            tables.append(table)
        return tables


def fit_grids(grids: Sequence[Grid], width: int | None) -> tuple[list[Table], bool]:
    """Every grid fitted to ``width``; and whether any was split into parts."""
    tables: list[Table] = []
    split = False
    for grid in grids:
        parts = grid.fit(width)
        split = split or len(parts) > 1
        tables.extend(parts)
    return tables, split


def fit_width(console: Console) -> int:
    """The width to fit tables to: the terminal's; for a file or a pipe the console's
    width, at most ``PIPE_WIDTH`` (the CLI's piped console is 200 wide: 100).

    Not ``COLUMNS`` itself: GNU readline exports it (80 when not on a terminal) into
    every child of a process that loaded it, such as pytest, and piped output would
    change with the parent."""
    if console.is_terminal:
        return console.width
    return min(console.width, PIPE_WIDTH)


def print_tables(console: Console, tables: Sequence[Table]) -> None:
    """Print tables each at its own width (at least the console's), so none is squeezed."""
    for table in tables:
        needed = console.measure(table, options=console.options.update_width(10_000)).maximum
        # soft_wrap off: a console made with soft_wrap (the CLI's) would not wrap the
        # title and caption to the table's width
        if needed <= console.width:
            console.print(table, soft_wrap=False)
            continue
        saved = console.width  # console.print never renders wider than the console
        console.width = needed
        try:
            console.print(table, soft_wrap=False)
        finally:
            console.width = saved
