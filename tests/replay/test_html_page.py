"""The self-contained page helper and `referee replay --html` without a browser."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from referee.games import get_game
from referee.match.record import read_record
from referee.match.walk import RecordDiverged
from referee.replay.html import card_face, render_html
from referee.replay.html.frames import build_replay
from referee.replay.html.page import CSP, asset, escape, fill, json_for_script, self_contained_page

from ..conftest import built_once

ROOT = Path(__file__).resolve().parents[2]
BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"


def referee(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


def test_json_for_script_cannot_end_the_script_element_and_reads_back():
    data = {"a": "</script><script>x()</script>", "b": "<!-- -->", "c": "\u2028\u2029 & > é", "n": [1, 2.5, None]}
    text = json_for_script(data)
    assert re.search(r"</|<!--|[<>&\u2028\u2029]", text) is None
    assert json.loads(text) == data


def test_escape_covers_text_and_both_attribute_quotes():
    assert escape("<a href=\"x\" title='y'>&</a>") == "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;"


def test_fill_refuses_a_missing_or_an_unused_part():
    assert fill("<p>{{a}} {{b_2}} {{a}}</p>", a="1", b_2="2") == "<p>1 2 1</p>"
    with pytest.raises(ValueError, match="without a part: \\['b'\\]"):
        fill("{{a}} {{b}}", a="1")
    with pytest.raises(ValueError, match="without a marker: \\['c'\\]"):
        fill("{{a}}", a="1", c="3")


def test_a_page_inlines_everything_and_refuses_an_inline_end_tag():
    page = self_contained_page("T <1>", "<main>hi</main>", css="b{}", js="let x = 1;", data={"k": "</script>"})
    assert "<title>T &lt;1&gt;</title>" in page and "<style>\nb{}\n</style>" in page
    assert page.count("</script>") == 2  # the data block's and the script's own
    assert f'content="{escape(CSP)}"' in page and "default-src 'none'" in CSP
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    with pytest.raises(ValueError, match="</script"):
        self_contained_page("t", "", css="", js="'</SCRIPT>'", data={})
    with pytest.raises(ValueError, match="</style"):
        self_contained_page("t", "", css="</style>", js="", data={})


def test_the_assets_are_package_data():
    for name in ("assets/replay.js", "assets/replay.css", "assets/replay.html"):
        assert asset("referee.replay.html", name).strip()


def test_card_faces_come_from_the_one_card_notation():
    assert card_face("TS") == {"rank": "10", "suit": "♠", "colour": "black", "joker": None, "title": "T of spades"}
    assert card_face("QH")["colour"] == "red" and card_face("2D")["suit"] == "♦"
    assert card_face("BJ")["joker"] == "big" and card_face("LJ")["joker"] == "little"
    assert card_face("JK")["joker"] == "joker"


@pytest.fixture(scope="module")
def record(tmp_path_factory):
    """Played once per test run: the tests only read it (their pages go to their own folders)."""
    def build(folder):
        res = referee("play", "schmier", "--bot", BOT, "--bot", BOT, "--bot", BOT, "--seed", 2, "--record",
                      folder / "sc.jsonl", "--decision-ms", 20000, "--handshake-ms", 60000, "-o", "max_deals=12")
        assert res.returncode == 0, res.stderr

    return built_once(tmp_path_factory, "html-page-record", build) / "sc.jsonl"


def test_frames_follow_the_record_decision_by_decision(record):
    rec = read_record(record)
    data = build_replay(rec)
    frames = data["frames"]
    moves = [f for f in frames if f["kind"] == "move"]
    assert [f["n"] for f in moves] == [e.n for e in rec.entries if getattr(e, "record", "") == "decision"]
    assert frames[0]["kind"] == "start" and frames[-1]["kind"] == "end"
    assert frames[-1]["result"]["scores"] == rec.result.outcome.scores
    assert [f["done"] for f in frames if f["kind"] == "move"] == list(range(1, len(moves) + 1))
    rows = data["score_rows"]
    assert rows and rows[-1]["cells"][-3:] == rec.result.outcome.scores
    assert all(frames[r["step"]]["scores"] == r["cells"][-3:] for r in rows)


def test_a_record_the_engine_refuses_is_a_one_line_error(record, tmp_path):
    lines = record.read_text().splitlines()
    k = next(i for i, line in enumerate(lines) if '"record":"decision"' in line)
    d = json.loads(lines[k])
    d["action"] = "9" if d["action"] != "9" else "8"  # no Schmier bid goes that high
    lines[k] = json.dumps(d)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(RecordDiverged, match=r"^line \d+: illegal action '9'"):
        build_replay(read_record(bad))
    res = referee("replay", bad, "--html", tmp_path / "bad.html")
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "cannot replay" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "bad.html").exists()


def test_html_refuses_flags_it_does_not_use(record, tmp_path):
    for extra in (["--deal", "2"], ["--seat", "1"], ["--verify"], ["--summary"]):
        res = referee("replay", record, "--html", tmp_path / "x.html", *extra)
        assert res.returncode == 2, extra
        assert res.stderr.count("\n") == 1 and f"drop {extra[0]}" in res.stderr
    assert not (tmp_path / "x.html").exists()


def test_an_unwritable_html_path_is_a_one_line_error(record, tmp_path):
    res = referee("replay", record, "--html", tmp_path / "no" / "such" / "dir.html")
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "--html" in res.stderr


def test_a_truncated_record_still_renders(record, tmp_path):
    lines = record.read_text().splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    page = render_html(read_record(cut))
    data = json.loads(re.search(r'id="page-data">(.*?)</script>', page, re.S).group(1))
    assert data["truncated"] and data["result"] is None
    assert data["frames"][-1]["kind"] != "end"
    assert get_game("schmier").title in page


def test_a_fault_at_the_first_request_is_a_fault_frame_not_a_second_start(tmp_path):
    import trio
    from trio.testing import MockClock

    from referee.match.types import Limits
    from tests.match.fakes import play, player

    path = tmp_path / "fault.jsonl"
    unparseable = player(reply=lambda n, msg: b'{"type":"action","id":%d,"action":"??"}\n' % msg["id"])
    result, _ = trio.run(lambda: play(dict.fromkeys(range(6), unparseable), Limits(), game="schmier", seed=4,
                                      record_path=path), clock=MockClock(autojump_threshold=0))
    rec = read_record(path)
    assert result.fault is not None and not [e for e in rec.entries if e.record == "decision"]  # the first forfeited
    frames = build_replay(rec)["frames"]
    assert [f["kind"] for f in frames] == ["start", "fault", "end"]
    assert frames[1]["fault"]["seat"] == result.fault.seat and frames[1]["legal"]
