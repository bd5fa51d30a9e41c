"""Hostile text in a real terminal (#28 point 3, #25): a bot whose name, stderr and
refused replies carry OSC 52 (clipboard), OSC 0 (window title), CSI, the 8-bit CSI
U+009B, BEL, bidi overrides and rich markup (sample_bots/misbehaving/hostile_text.py)
is played, replayed, asked and run in a pty; none of its control bytes may reach the
terminal, and each must be shown as a visible escape instead."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ..conftest import PATIENT_FLAGS
from ..terminal import ROOT, run_in_terminal

HOSTILE = ROOT / "sample_bots" / "misbehaving" / "hostile_text.py"
RANDOM = ROOT / "sample_bots" / "random_bot.py"
WIDE = 400  # columns: a long fault line stays on one screen line

BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]


def hostile(fault: str) -> str:
    return f"{sys.executable} {HOSTILE} --fault {fault}"


def flat(term) -> str:
    """The screen's lines joined without separators (a visible escape cut by a wrap is whole again)."""
    return "".join(term.lines())


def assert_no_control_from_the_bot(term) -> None:
    """Nothing the bot wrote acts on the terminal: no OSC, no BEL, no 8-bit CSI, no bidi
    control, none of its CSI sequences in the bytes the terminal received."""
    raw = bytes(term.raw)
    text = raw.decode("utf-8", "replace")
    assert b"\x1b]" not in raw, "an OSC sequence reached the terminal"
    assert b"\x07" not in raw, "a BEL reached the terminal"
    assert "\x9b" not in text and "\x9d" not in text, "an 8-bit CSI/OSC reached the terminal"
    assert not [c for c in BIDI if c in text], "a bidi override or isolate reached the terminal"
    assert b"\x1b[31mHOSTILE" not in raw and b"\x1b[2J" not in raw, "the bot's CSI reached the terminal"
    assert "Traceback" not in term.text() and "internal error" not in term.text(), term.text()


def assert_shown_escaped(term, *, markup: bool = True) -> None:
    """The hostile text is on the screen, its controls as visible escapes."""
    screen = flat(term)
    for needle in ("\\x1b]52;c;SE9TVElMRS1DTElQ\\x07", "\\x1b]0;HOSTILE-TITLE\\x07", "\\x1b[31mHOSTILE-RED",
                   "\\x9b31mHOSTILE-C1", "\\u202eHOSTILE-RLO\\u202c\\u2066HOSTILE-LRI\\u2069"):
        assert needle in screen, f"{needle!r} not shown:\n{term.text()}"
    if markup:
        assert "[bold red]HOSTILE-MARKUP[/bold red]" in screen, f"rich markup was interpreted:\n{term.text()}"


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> dict[str, Path]:
    """One game per fault kind, played in a terminal (checked by the play tests)."""
    folder = tmp_path_factory.mktemp("hostile")
    return {kind: folder / f"{kind}.jsonl" for kind in ("key", "type", "output")}


def play(record: Path, fault: str, *extra: str):
    return run_in_terminal("play", "back-alley", "--bot", hostile(fault), "--bot", f"{sys.executable} {RANDOM}",
                           "--seed", "3", "--record", record, *PATIENT_FLAGS, *extra, cols=WIDE)


@pytest.mark.parametrize("fault", ["key", "type"])
def test_play_shows_the_parsers_echo_and_the_stderr_tail_escaped(records, fault):
    status, term = play(records[fault], fault)
    assert status == 3, term.text()
    assert_no_control_from_the_bot(term)
    assert "wrong_message" in term.text()
    assert "Last stderr lines" in term.text()
    assert_shown_escaped(term)


def test_play_quiet_still_prints_the_fault_line_escaped(records):
    status, term = play(records["output"], "output", "--quiet")
    assert status == 3, term.text()
    assert "invalid_json" in term.text()
    assert_no_control_from_the_bot(term)
    assert "HOSTILE-OUTPUT" in term.text()


def test_play_shows_a_hostile_name_literally(tmp_path):
    status, term = play(tmp_path / "g.jsonl", "key", "--quiet")
    assert status == 3
    screen = flat(term)
    assert "[bold red]HOSTILE-NAME[/]" in screen, term.text()  # the name's markup, not interpreted
    assert_no_control_from_the_bot(term)


@pytest.mark.parametrize("view", [[], ["--seat", "0"], ["--seat", "2"], ["--summary"], ["--deal", "1"]])
def test_replay_views_show_the_recorded_fault_and_stderr_escaped(records, view):
    rec = records["key"]
    if not rec.exists():
        play(rec, "key")
    status, term = run_in_terminal("replay", rec, *view, cols=WIDE)
    assert status == 0, term.text()
    assert "Fault: seat" in term.text(), term.text()
    assert_no_control_from_the_bot(term)
    assert "HOSTILE-KEY" in term.text()


def test_replay_of_a_crafted_record_escapes_names_and_stderr(records, tmp_path):
    """A record handed to the operator can hold anything the bot could not send itself:
    raw controls in a seat's name and command, in the ready names and in the fault."""
    rec = records["type"]
    if not rec.exists():
        play(rec, "type")
    payload = "HOSTILE \x1b]52;c;SE9TVElMRS1DTElQ\x07\x1b]0;HOSTILE-TITLE\x07\x1b[31mHOSTILE-RED\x9b31mHOSTILE-C1" \
              "\u202eHOSTILE-RLO\u202c\u2066HOSTILE-LRI\u2069[bold red]HOSTILE-MARKUP[/bold red]"
    lines = [json.loads(line) for line in rec.read_text().splitlines()]
    for entry in lines:
        if entry.get("record") == "header":
            for seat in entry["seats"]:
                seat["name"] = "N" + payload
        if entry.get("record") == "ready":
            entry["names"] = ["R" + payload] * len(entry["names"])
        if entry.get("record") == "fault":
            entry["message"] = "M" + payload
            entry["stderr_tail"] = ["S" + payload]
    crafted = tmp_path / "crafted.jsonl"
    crafted.write_text("".join(json.dumps(e) + "\n" for e in lines))
    status, term = run_in_terminal("replay", crafted, cols=WIDE)
    assert status == 0, term.text()
    assert_no_control_from_the_bot(term)
    assert_shown_escaped(term)


def test_ask_shows_the_reply_and_stderr_escaped(records):
    rec = records["key"]
    if not rec.exists():
        play(rec, "key")
    # request 9 is the seat-0 request the hostile bot refused; ask the hostile bot again.
    status, term = run_in_terminal("ask", rec, "9", "--bot", hostile("key"), "--sandbox", "off", cols=WIDE)
    assert status != 0 and "refused" in term.text(), term.text()
    assert "Last stderr lines" in term.text()
    assert_no_control_from_the_bot(term)
    assert_shown_escaped(term)


def test_ask_from_shows_the_new_games_fault_and_stderr_escaped(records, tmp_path):
    rec = records["key"]
    if not rec.exists():
        play(rec, "key")
    status, term = run_in_terminal("ask", rec, "5", "--from", "--record", tmp_path / "new.jsonl",
                                   "--bot", hostile("type"), "--bot", f"{sys.executable} {RANDOM}",
                                   "--sandbox", "off", cols=WIDE)
    assert status == 3, term.text()
    assert "wrong_message" in term.text()
    assert_no_control_from_the_bot(term)
    assert_shown_escaped(term)


def test_run_prints_fault_lines_escaped_during_the_live_display(tmp_path):
    toml = tmp_path / "t.toml"
    toml.write_text(f"""
game = "back-alley"
seed = 3
games_per_pairing = 1
jobs = 1
output = "out"
[[entrants]]
name = "hostile"
command = {json.dumps(hostile("type"))}
[[entrants]]
name = "random"
command = {json.dumps(f"{sys.executable} {RANDOM}")}
""")
    status, term = run_in_terminal("run", toml, cols=WIDE, cwd=tmp_path)
    assert status == 0, term.text()
    assert "fault:" in term.text(), term.text()
    assert_no_control_from_the_bot(term)
    assert "\\x1b]52;c;SE9TVElMRS1DTElQ\\x07" in flat(term), term.text()


def test_log_lines_at_debug_level_show_the_bots_words_escaped(tmp_path):
    """structlog's lines (referee/logging.py; workers use the same configuration) carry
    fault messages and names: on a terminal they are escaped like the rest."""
    status, term = run_in_terminal("--log-level", "debug", "play", "back-alley", "--bot", hostile("type"),
                                   "--bot", f"{sys.executable} {RANDOM}", "--seed", "3",
                                   "--record", tmp_path / "g.jsonl", "--quiet", *PATIENT_FLAGS, cols=WIDE)
    assert status == 3, term.text()
    assert "level='info'" in term.text() or "level='debug'" in term.text(), term.text()
    assert_no_control_from_the_bot(term)


def test_report_prints_its_one_line_escaped(tmp_path):
    """`referee report` on a folder whose results hold the hostile bot's fault messages
    and a forged line full of controls: its one line on stderr stays inert."""
    test_run_prints_fault_lines_escaped_during_the_live_display(tmp_path)
    out = tmp_path / "out"
    payload = "\x1b]52;c;SE9TVElMRS1DTElQ\x07\x1b]0;HOSTILE-TITLE\x07\x9b2J\u202e"
    forged = {"v": 3, "game_id": 1, "seq": 1, "teams": [payload], "fault": {"message": payload}, "mac": payload}
    with open(out / "results.jsonl", "a") as f:
        f.write(json.dumps(forged, ensure_ascii=False) + "\n")
    status, term = run_in_terminal("report", out, "--html", tmp_path / "page.html", cols=WIDE)
    assert status == 0, term.text()
    assert "1 line rejected" in term.text(), term.text()
    assert_no_control_from_the_bot(term)


def test_an_error_quoting_a_crafted_file_name_is_escaped(tmp_path):
    """The one error line (referee_cli/main.py) quotes what it was given: a record's name
    or content can carry controls too."""
    name = tmp_path / "HOSTILE\x1b]0;HOSTILE-TITLE\x07\u202e.jsonl"
    name.write_text("not json\n")
    status, term = run_in_terminal("replay", name, cols=WIDE)
    assert status == 2, term.text()
    assert "referee: error:" in term.text()
    assert_no_control_from_the_bot(term)
    assert "\\x1b]0;HOSTILE-TITLE\\x07\\u202e" in flat(term)
