"""``report.html``: one self-contained page for a tournament (no scripts, no network).

Built from ``standings.json``'s data and the ``results.jsonl`` lines: the
standings table; each entrant's Elo with its 95 % interval as an error-bar
chart; for an SPRT the LLR over games played with its two bounds; seat and
position effects as a chart; how games ended and the faults; every game,
linked to its HTML replay (``records/NNNNNN.html``, beside its record) and
to its record.  Charts are inline SVG with ``data-`` attributes carrying
their numbers (what the browser test reads).

The replay pages are made here too (``write_replay_pages``, the page
``referee replay RECORD --html`` writes), once per record: a page newer
than its record is kept.  One takes about 0.15 s and 0.5 MB, so
``referee report`` makes every missing one, while the report a run writes
at its end makes them only for a tournament of at most
``REPLAYS_AT_RUN_END`` games; above that its page says how to make them.
"""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from referee.errors import OutputError

from .durable import write_atomic
from .figures import (
    distribution_text,
    elo_interval_text,
    elo_text,
    interval,
    los_text,
    percent,
    sandbox_notes,
    share,
    sprt_lines,
    sprt_progress,
)
from .results import GameResult

if TYPE_CHECKING:
    from .audit import Audit

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:.2em .6em;border-bottom:1px solid #eee;text-align:right}
td:first-child,th:first-child,td.l,th.l{text-align:left}th{background:#f4f4f4}
.warn{color:#a60}.ok{color:#262}.note{color:#666;font-size:.9em}svg{background:#fcfcfc;border:1px solid #eee}
.bar{stroke:#246;stroke-width:2}.dot{fill:#246}.zero{stroke:#999;stroke-dasharray:4 3}
.bound{stroke:#b33;stroke-dasharray:6 3}.llr{fill:none;stroke:#246;stroke-width:2}
"""


def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


def _fmt(x: float | None, spec: str = "+.0f") -> str:
    return "–" if x is None else format(x, spec)


def _pct(iv: dict[str, Any]) -> str:
    return share(iv)


def _ci(iv: dict[str, Any]) -> str:
    return interval(iv, "+.1f")


def _elo(e: dict[str, Any]) -> str:
    """Elo as the terminal writes it (``tournaments.figures``), with its interval."""
    return f"{_e(elo_text(e, warn=False))} {_e(elo_interval_text(e))}" + (
        " <span class=warn>(!)</span>" if e["few_units"] else "")


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], cls: str, raw: bool = False) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c if raw else _e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def elo_chart(rows: Sequence[tuple[str, dict[str, Any]]], cls: str = "elo-chart") -> str:
    """Error bars: one row per (label, Elo estimate); unbounded ends run to the edge."""
    known = [v for _, e in rows for v in (e["elo"], e["lo"], e["hi"]) if v is not None]
    span = max([50.0, *(abs(v) for v in known)]) * 1.15
    width, left, right, step = 720, 160, 20, 28
    height = 30 + step * len(rows)

    def x(v: float) -> float:
        return left + (v + span) / (2 * span) * (width - left - right)

    parts = [f'<svg class="{cls}" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img">',
             f'<line class="zero" x1="{x(0):.1f}" y1="5" x2="{x(0):.1f}" y2="{height - 20}"/>',
             f'<text x="{x(-span):.1f}" y="{height - 5}" font-size="11">{-span:+.0f}</text>',
             f'<text x="{x(0) - 4:.1f}" y="{height - 5}" font-size="11">0</text>',
             f'<text x="{x(span) - 30:.1f}" y="{height - 5}" font-size="11">{span:+.0f}</text>']
    for i, (label, e) in enumerate(rows):
        y = 20 + step * i
        value = e["elo"] if e["elo"] is not None else (span if (e["score"] or 0) >= 1 else -span)
        lo = e["lo"] if e["lo"] is not None else -span
        hi = e["hi"] if e["hi"] is not None else span
        if not e["bounded"]:
            lo, hi = -span, span
        value = max(-span, min(span, value))
        parts.append(
            f'<g class="elo-bar" data-name="{_e(label)}" data-elo="{_fmt(e["elo"], ".3f")}" '
            f'data-lo="{_fmt(e["lo"], ".3f")}" data-hi="{_fmt(e["hi"], ".3f")}" data-units="{e["units"]}">'
            f'<text x="5" y="{y + 4}" font-size="12">{_e(label)}</text>'
            f'<line class="bar" x1="{x(lo):.1f}" y1="{y}" x2="{x(hi):.1f}" y2="{y}"/>'
            f'<circle class="dot" cx="{x(value):.1f}" cy="{y}" r="4"/></g>')
    parts.append("</svg>")
    return "".join(parts)


def llr_chart(sprt: dict[str, Any]) -> str:
    """The LLR over complete units with its two bounds; its caption is the text's own
    (``figures.sprt_progress``), so chart and text say the same units and games."""
    history = [(0, 0.0), *((int(u), float(v)) for u, v in sprt.get("history", []))]
    lower, upper = sprt["lower"], sprt["upper"]
    top = max([upper, *(v for _, v in history)]) * 1.1
    bottom = min([lower, *(v for _, v in history)]) * 1.1
    most = max(sprt["units"], *(u for u, _ in history)) or 1
    width, height, left = 720, 260, 50

    def x(g: float) -> float:
        return left + g / most * (width - left - 15)

    def y(v: float) -> float:
        return 10 + (top - v) / (top - bottom) * (height - 40)

    points = " ".join(f"{x(g):.1f},{y(v):.1f}" for g, v in history)
    return (f'<svg class="llr-chart" width="{width}" height="{height}" data-units="{sprt["units"]}" '
            f'data-games="{sprt["games"]}" '
            f'viewBox="0 0 {width} {height}" role="img">'
            f'<line class="bound upper" data-llr="{upper:.4f}" x1="{left}" y1="{y(upper):.1f}" x2="{width - 15}" '
            f'y2="{y(upper):.1f}"/><text x="{left + 4}" y="{y(upper) - 4:.1f}" font-size="11">H1 {upper:+.2f}</text>'
            f'<line class="bound lower" data-llr="{lower:.4f}" x1="{left}" y1="{y(lower):.1f}" x2="{width - 15}" '
            f'y2="{y(lower):.1f}"/><text x="{left + 4}" y="{y(lower) + 12:.1f}" font-size="11">H0 {lower:+.2f}</text>'
            f'<line class="zero" x1="{left}" y1="{y(0):.1f}" x2="{width - 15}" y2="{y(0):.1f}"/>'
            f'<polyline class="llr" data-points="{len(history)}" points="{points}"/>'
            f'<text class="llr-axis" x="{left}" y="{height - 8}" font-size="11">LLR over complete units, '
            f'{_e(sprt_progress(sprt))}</text></svg>')


def positions_chart(positions: Sequence[dict[str, Any]]) -> str:
    """Each place's win share minus its fair share, with the 95 % interval, in percentage points."""
    rows = []
    for p in positions:
        adv = p["advantage"]
        rows.append((p["place"], adv))
    known = [abs(v) for _, a in rows for v in (a["value"], a["lo"], a["hi"]) if v is not None]
    span = max([0.05, *known]) * 1.15
    width, left, step = 720, 180, 28
    height = 30 + step * len(rows)

    def x(v: float) -> float:
        return left + (v + span) / (2 * span) * (width - left - 20)

    parts = [f'<svg class="positions-chart" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img">',
             f'<line class="zero" x1="{x(0):.1f}" y1="5" x2="{x(0):.1f}" y2="{height - 20}"/>',
             f'<text x="{x(-span):.1f}" y="{height - 5}" font-size="11">{-span:+.0%}</text>',
             f'<text x="{x(span) - 34:.1f}" y="{height - 5}" font-size="11">{span:+.0%}</text>']
    for i, (place, a) in enumerate(rows):
        y = 20 + step * i
        if a["value"] is None:
            continue
        lo = a["lo"] if a["lo"] is not None else -span
        hi = a["hi"] if a["hi"] is not None else span
        parts.append(f'<g class="position-bar" data-place="{_e(place)}" data-advantage="{a["value"]:.4f}">'
                     f'<text x="5" y="{y + 4}" font-size="12">{_e(place)}</text>'
                     f'<line class="bar" x1="{x(max(-span, lo)):.1f}" y1="{y}" x2="{x(min(span, hi)):.1f}" y2="{y}"/>'
                     f'<circle class="dot" cx="{x(a["value"]):.1f}" cy="{y}" r="4"/></g>')
    parts.append("</svg>")
    return "".join(parts)


REPLAYS_AT_RUN_END = 50  # the report a run writes at its end makes replay pages up to this many games (~8 s)


def record_path(output: Path, r: GameResult) -> Path:
    return output / (r.record or f"records/{r.game_id:06d}.jsonl")


def replay_path(output: Path, r: GameResult) -> Path:
    """A game's HTML replay page: beside its record, ``records/NNNNNN.html``."""
    return record_path(output, r).with_suffix(".html")


@dataclass(slots=True)
class ReplayPages:
    """What ``write_replay_pages`` did: pages written, kept (newer than their record), and
    the games left without one, with why (a record missing or that cannot be replayed)."""

    written: int = 0
    kept: int = 0
    without: dict[int, str] = field(default_factory=dict)
    not_made: int = 0  # games whose page was not attempted (a run's report over REPLAYS_AT_RUN_END games)
    failed_write: str | None = None  # the first page that could not be written (then no more are tried)


def _real_folder(path: Path) -> bool:
    """Whether ``path`` is a folder itself, not a link to one (``records -> /etc``)."""
    import stat

    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def write_replay_pages(output: Path, results: Sequence[GameResult]) -> ReplayPages:
    """Each game's replay page beside its record, made where missing or older than the record."""
    from referee.games import GAMES
    from referee.match.record import RecordError, read_record
    from referee.replay import rules_version_problem
    from referee.replay.html import RecordDiverged, render_html

    done = ReplayPages()
    # A page is written only directly in the output folder's own records folder, a real one: never
    # through a link, nor where a results line names a record out of the folder (``../x/records/..``).
    # (``output`` itself may be a link: the user named it.)
    records = output / "records"
    records_real = _real_folder(records)
    for r in sorted(results, key=lambda g: g.game_id):
        record, page = record_path(output, r), replay_path(output, r)
        if done.failed_write is not None:
            done.not_made += 1
            continue
        if not (records_real and page.parent == records and page.name not in ("", ".", "..")):
            done.without[r.game_id] = "its page would be written out of the output folder (a link or a path out of it)"
            continue
        try:
            record_mtime = record.stat().st_mtime_ns
        except OSError:
            done.without[r.game_id] = "no record"
            continue
        if page.is_file() and page.stat().st_mtime_ns >= record_mtime:
            done.kept += 1
            continue
        try:
            rec = read_record(record)
            if rec.header.game not in GAMES:
                raise RecordDiverged(f"unknown game {rec.header.game!r}")
            if (problem := rules_version_problem(rec.header)) is not None:
                raise RecordDiverged(problem)
            text = render_html(rec)
        except (RecordError, RecordDiverged) as exc:
            done.without[r.game_id] = str(exc)
            continue
        try:
            write_atomic(page, text.encode("utf-8"))
        except OutputError as exc:  # a full disk or a read-only folder: link the records instead
            done.failed_write = str(exc)
            done.not_made += 1
            continue
        done.written += 1
    return done


def _games(output: Path, results: Sequence[GameResult], page_dir: Path, replays: ReplayPages | None) -> str:
    from .standings import ending

    rows = []
    for r in sorted(results, key=lambda g: g.game_id):
        record, replay = record_path(output, r), replay_path(output, r)
        links = []
        if replay.is_file():
            links.append(f'<a class="replay" href="{_e(_href(replay, page_dir))}">replay</a>')
        if record.is_file():
            why = replays.without.get(r.game_id) if replays is not None else None
            title = f' title="no replay page: {_e(why)}"' if why else ""
            links.append(f'<a class="record" href="{_e(_href(record, page_dir))}"{title}>record</a>')
        scores = " : ".join(f"{_e(t)} {s:g}" for t, s in zip(r.teams, r.scores, strict=False))
        rows.append([str(r.game_id), f"{r.deal} / {r.arrangement}", scores, _e(ending(r)),
                     " · ".join(links) or "–"])
    return _table(["game", "deal / seating", "teams and scores", "ended", "view"], rows, "games", raw=True)


def _replay_note(output: Path, results: Sequence[GameResult], replays: ReplayPages | None) -> str:
    """A line above the games: how many have a replay page, and how to make the rest."""
    have = sum(replay_path(output, r).is_file() for r in results)
    if not results or have == len(results):
        return ""
    parts = [f"Replay pages: {have} of {len(results)} games."]
    if replays is not None and replays.without:
        parts.append(f"{len(replays.without)} cannot be replayed (hover over “record” for why).")
    if replays is not None and replays.failed_write:
        parts.append(f"Stopped making them: {replays.failed_write}.")
    if replays is None or replays.not_made:
        parts.append(f"`referee report {output} --html {output / 'report.html'}` makes the missing ones "
                     "(about 0.15 s and 0.5 MB a game).")
    return f'<p class="note replays">{_e(" ".join(parts))}</p>'


def _authentication(audit: Audit | None) -> list[str]:
    """What the results were checked against (``audit.Audit``): its notes, the worst first, and
    the lines it rejected (every field of a line is anyone's text: escaped)."""
    if audit is None:
        return []
    css = "ok" if audit.authenticated and audit.notes[0].startswith("authenticated") else "warn"
    out = [f'<p class="{css}" id="authentication" data-authenticated="{str(audit.authenticated).lower()}">'
           f"{_e(audit.notes[0])}</p>"]
    out += [f'<p class="warn">{_e(n)}</p>' for n in audit.notes[1:]]
    if audit.rejected:
        out.append("<h2>Rejected result lines</h2>" + _table(
            ["line", "game", "why"], [[str(r.line), "–" if r.game is None else str(r.game), _e(r.problem)]
                                      for r in audit.rejected], "rejected", raw=True))
    return out


def _href(target: Path, page_dir: Path) -> str:
    """A link from a page in ``page_dir`` to ``target``, relative so the folder can be moved."""
    return Path(os.path.relpath(target, page_dir)).as_posix()


def render(data: dict[str, Any], results: Sequence[GameResult], output: Path, title: str = "Tournament",
           page_dir: Path | None = None, replays: ReplayPages | None = None, audit: Audit | None = None) -> str:
    entrants = data["entrants"]
    notes = sandbox_notes(data.get("sandbox"))
    if not data["complete"] and not data.get("sprt"):
        notes.insert(0, f"incomplete: {data['games_played']} of {data['games_total']} games")
    body = [f"<h1>{_e(title)}: {data['games_played']} games</h1>"]
    body += _authentication(audit)
    body += [f'<p class="warn">{_e(n)}</p>' for n in notes]
    if sprt := data.get("sprt"):
        body.append("<h2>SPRT</h2>" + "".join(f'<p class="sprt">{_e(line)}</p>' for line in sprt_lines(sprt)))
        body.append(llr_chart(sprt))
    rows = []
    for e in entrants:
        reasons = ", ".join(f"{k} {v}" for k, v in e["forfeits_by_reason"].items()) or "–"
        rows.append([_e(e.get("rank_label", e["rank"])), _e(e["name"]), str(e["games"]),
                     f"{e['wins']}-{e['draws']}-{e['losses']}", percent(e.get("score")), _elo(e["elo"]),
                     los_text(e["elo"]),
                     _pct(e["win_rate"]), _ci(e["score_diff"]),
                     f"{e['rating']['mu']:.1f}±{e['rating']['sigma']:.1f}", _e(reasons)])
    body.append("<h2>Standings</h2>" + _table(
        ["#", "entrant", "games", "W-D-L", "score", "Elo ±95% [interval]", "LOS", "win rate [95%]",
         "score diff/deal [95%]", "rating μ±σ", "forfeits"], rows, "standings", raw=True))
    body.append('<p class="note">score: points per game (win 1, draw ½, loss 0; with three teams the placing '
                "against each other team), which orders the table; "
                "Elo from duplicate units (one deal in every seating); (!) fewer than 30 units; "
                "=N: tied, the results do not tell them apart (neither one ahead of the "
                "other in every game they both played, nor a duplicate Elo interval that excludes 0). "
                "docs/tournaments.md explains each figure.</p>")
    body.append("<h2>Elo with 95% interval</h2>" + elo_chart([(e["name"], e["elo"]) for e in entrants]))
    if data["paired"]:
        prow = [[_e(p["a"]), _e(p["b"]), str(p["units"]), _e(distribution_text(p)), _elo(p["elo"]),
                 los_text(p["elo"]), _ci(p["mean_diff"]),
                 str(p["excluded_deals"])] for p in data["paired"]]
        body.append("<h2>Pairings on duplicate deals</h2>" + _table(
            ["A", "B", "units", "pentanomial / unit scores", "Elo (A) ±95%", "LOS", "score diff [95%]",
             "left out (forfeit)"], prow, "paired", raw=True))
        body.append(elo_chart([(f"{p['a']} vs {p['b']}", p["elo"]) for p in data["paired"]], "pair-elo-chart"))
    if data.get("positions"):
        body.append("<h2>Seat and position effects</h2>" + _table(
            ["place", "units", "win share [95%]", "fair", "score diff [95%]"],
            [[_e(p["place"]), str(p["units"]), _pct(p["win_share"]), f"{p['fair_share']:.0%}", _ci(p["score_diff"])]
             for p in data["positions"]], "positions", raw=True))
        body.append(positions_chart(data["positions"]))
    body.append("<h2>How games ended</h2>" + _table(
        ["ending", "games"], [[_e(k), str(v)] for k, v in data.get("endings", {}).items()], "endings", raw=True))
    faulted = [r for r in results if r.fault is not None]
    if faulted:
        body.append("<h2>Faults</h2>" + _table(
            ["game", "entrant", "seat", "reason", "message"],
            [[str(r.game_id), _e(r.fault.entrant), str(r.fault.seat), _e(r.fault.reason), _e(r.fault.message)]
             for r in faulted if r.fault is not None], "faults", raw=True))
    body.append("<h2>Games</h2>" + _replay_note(output, results, replays)
                + _games(output, results, page_dir or output, replays))
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>{''.join(body)}</body></html>\n")


def write_html_report(output: Path, path: Path, title: str | None = None, *, audit: Audit | None = None,
                      replays: bool | Literal["run"] = "run") -> Path:
    """Write the page for the tournament in ``output`` to ``path``: only what ``audit`` (by default
    ``audit.audit_output(output)``) lets through, with its notes and the lines it rejected.

    ``replays``: make the games' replay pages (``True``: every missing one, as ``referee
    report``; ``"run"``: only for a tournament of at most ``REPLAYS_AT_RUN_END`` games, as
    at the end of ``referee run``; ``False``: none, link the pages that exist)."""
    from .audit import audit_output

    audit = audit or audit_output(output)
    results = audit.results
    folder = output.resolve()
    made: ReplayPages | None = None
    if replays is True or (replays == "run" and len(results) <= REPLAYS_AT_RUN_END):
        made = write_replay_pages(folder, results)
    elif replays == "run":
        made = ReplayPages(not_made=len(results))
    page = render(audit.data, results, folder, title or f"Tournament {output.resolve().name}",
                  page_dir=path.resolve().parent, replays=made, audit=audit)
    write_atomic(path, page.encode("utf-8"))
    return path


