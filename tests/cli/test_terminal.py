"""Commands as a person runs them: in a real terminal (a pty) at 80 and 100 columns,
the screen read through a terminal emulator (tests/terminal.py). The run's live progress
and standings, and every other command, are in test_terminal_matrix.py."""

from __future__ import annotations

import re

import pytest

from ..terminal import REFEREE, ROOT, Terminal, assert_seen_whole

EXAMPLE = ROOT / "tournaments" / "examples" / "pegs-and-jokers.toml"


@pytest.mark.slow
def test_ctrl_c_stops_a_run_in_one_line_and_the_same_command_resumes(tmp_path):
    out = tmp_path / "out"
    # 8 short games (Pegs and Jokers to 40 turns): interrupted after the first, resumed to the end
    argv = [REFEREE, "run", EXAMPLE, "--output", out, "--games-per-pairing", "4", "-o", "max_turns=40"]
    with Terminal(argv, cols=80) as term:
        term.wait_for(lambda t: re.search(r"\b[1-9]\d*/8\b", t.text()) is not None, timeout=120)
        term.interrupt()
        status = term.wait(timeout=60)
    assert status == 130, term.text()
    assert "internal error" not in term.text() and "Traceback" not in term.text()
    interrupted = [line for line in term.lines() if "interrupt" in line.lower()]
    assert len(interrupted) == 1, term.text()
    with Terminal(argv, cols=80) as again:
        status = again.wait()
    assert status == 0, again.text()
    assert "already done" in again.text() or "resum" in again.text().lower(), again.text()
    assert "Standings (8 games)" in again.text()
    assert_seen_whole(again)
