"""``report.html``: one self-contained page for a tournament (no scripts, no network).

Built from ``standings.json``'s data and the ``results.jsonl`` lines: the
standings table; each entrant's Elo with its 95 % interval as an error-bar
chart; for an SPRT the LLR over games played with its two bounds; seat and
position effects as a chart; how games ended and the faults; every game,
linked to its HTML replay (``records/NNNNNN.html``) when one exists, else
to its record.  Charts are inline SVG with ``data-`` attributes carrying
their numbers (what the browser test reads).
"""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .durable import write_atomic
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


def _interval(iv: dict[str, Any], spec: str) -> str:
    """A value with its interval, ``v [lo, hi]`` (just ``v`` without one; ``–`` without a value)."""
    if iv.get("value") is None:
        return "–"
    if iv.get("lo") is None:
        return format(iv["value"], spec)
    return f"{iv['value']:{spec}} [{iv['lo']:{spec}}, {iv['hi']:{spec}}]"


def _pct(iv: dict[str, Any]) -> str:
    return _interval(iv, ".0%")


def _ci(iv: dict[str, Any]) -> str:
    return _interval(iv, "+.1f")


def _elo(e: dict[str, Any]) -> str:
    from .report import elo_interval_text, elo_text  # one formatting of Elo, shared with the terminal
    return f"{elo_text(e, warn=False)} {elo_interval_text(e)}" + (" <span class=warn>(!)</span>" if e["few_units"]
                                                                  else "")


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
    history = [(0, 0.0), *((int(g), float(v)) for g, v in sprt.get("history", []))]
    lower, upper = sprt["lower"], sprt["upper"]
    top = max([upper, *(v for _, v in history)]) * 1.1
    bottom = min([lower, *(v for _, v in history)]) * 1.1
    most = max(g for g, _ in history) or 1
    width, height, left = 720, 260, 50

    def x(g: float) -> float:
        return left + g / most * (width - left - 15)

    def y(v: float) -> float:
        return 10 + (top - v) / (top - bottom) * (height - 40)

    points = " ".join(f"{x(g):.1f},{y(v):.1f}" for g, v in history)
    return (f'<svg class="llr-chart" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img">'
            f'<line class="bound upper" data-llr="{upper:.4f}" x1="{left}" y1="{y(upper):.1f}" x2="{width - 15}" '
            f'y2="{y(upper):.1f}"/><text x="{left + 4}" y="{y(upper) - 4:.1f}" font-size="11">H1 {upper:+.2f}</text>'
            f'<line class="bound lower" data-llr="{lower:.4f}" x1="{left}" y1="{y(lower):.1f}" x2="{width - 15}" '
            f'y2="{y(lower):.1f}"/><text x="{left + 4}" y="{y(lower) + 12:.1f}" font-size="11">H0 {lower:+.2f}</text>'
            f'<line class="zero" x1="{left}" y1="{y(0):.1f}" x2="{width - 15}" y2="{y(0):.1f}"/>'
            f'<polyline class="llr" data-points="{len(history)}" points="{points}"/>'
            f'<text x="{width - 120}" y="{height - 8}" font-size="11">games played: {most}</text></svg>')


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


def _games(output: Path, results: Sequence[GameResult], page_dir: Path) -> str:
    from .standings import ending

    rows = []
    for r in sorted(results, key=lambda g: g.game_id):
        record = r.record or f"records/{r.game_id:06d}.jsonl"
        replay = Path(record).with_suffix(".html")
        if (output / replay).is_file():
            link = f'<a class="replay" href="{_e(_href(output / replay, page_dir))}">replay</a>'
        elif (output / record).is_file():
            link = f'<a class="record" href="{_e(_href(output / record, page_dir))}">record</a>'
        else:
            link = "–"
        scores = " : ".join(f"{_e(t)} {s:g}" for t, s in zip(r.teams, r.scores, strict=False))
        rows.append([str(r.game_id), f"{r.deal} / {r.arrangement}", scores, _e(ending(r)), link])
    return _table(["game", "deal / seating", "teams and scores", "ended", "view"], rows, "games", raw=True)


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
           page_dir: Path | None = None, audit: Audit | None = None) -> str:
    from .report import distribution_text, sandbox_notes, sprt_lines

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
                     f"{e['wins']}-{e['draws']}-{e['losses']}", _elo(e["elo"]),
                     "–" if e["elo"]["los"] is None else f"{e['elo']['los']:.1%}",
                     _pct(e["win_rate"]), _ci(e["score_diff"]),
                     f"{e['rating']['mu']:.1f}±{e['rating']['sigma']:.1f}", _e(reasons)])
    body.append("<h2>Standings</h2>" + _table(
        ["#", "entrant", "games", "W-D-L", "Elo ±95% [interval]", "LOS", "win rate [95%]", "score diff/deal [95%]",
         "rating μ±σ", "forfeits"], rows, "standings", raw=True))
    body.append('<p class="note">Elo from duplicate units (one deal in every seating); (!) fewer than 30 units; '
                "=N: tied, not told apart at 95%. docs/tournaments.md explains each figure.</p>")
    body.append("<h2>Elo with 95% interval</h2>" + elo_chart([(e["name"], e["elo"]) for e in entrants]))
    if data["paired"]:
        prow = [[_e(p["a"]), _e(p["b"]), str(p["units"]), _e(distribution_text(p)), _elo(p["elo"]),
                 "–" if p["elo"]["los"] is None else f"{p['elo']['los']:.1%}", _ci(p["mean_diff"]),
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
    body.append("<h2>Games</h2>" + _games(output, results, page_dir or output))
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>{''.join(body)}</body></html>\n")


def write_html_report(output: Path, path: Path, title: str | None = None, audit: Audit | None = None) -> Path:
    """Write the page for the tournament in ``output`` to ``path``: only what ``audit`` (by default
    ``audit.audit_output(output)``) lets through, with its notes and the lines it rejected."""
    from .audit import audit_output

    audit = audit or audit_output(output)
    page = render(audit.data, audit.results, output.resolve(), title or f"Tournament {output.resolve().name}",
                  page_dir=path.resolve().parent, audit=audit)
    write_atomic(path, page.encode("utf-8"))
    return path


