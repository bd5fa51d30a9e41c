"""Commands as a person runs them: in a real terminal (a pty) at 80 and 100 columns,
the screen read through a terminal emulator (tests/terminal.py)."""

from __future__ import annotations

import re

import pytest

from ..terminal import ROOT, Terminal, REFEREE, assert_seen_whole

EXAMPLE = ROOT / "tournaments" / "examples" / "back-alley.toml"


@pytest.mark.parametrize("cols", [80, 100])
def test_run_shows_live_progress_that_advances_then_the_standings(tmp_path, cols):
    out = tmp_path / "out"
    with Terminal([REFEREE, "run", EXAMPLE, "--output", out, "-n", "1"], cols=cols) as term:
        seen: set[str] = set()

        def progress(t: Terminal) -> bool:
            seen.update(re.findall(r"\b(\d+)/6\b", t.text()))
            return "6" in seen

        term.wait_for(progress, timeout=120)
        status = term.wait()
    assert status == 0, term.text()
    assert len(seen) >= 2, f"the live progress never advanced: {seen}"
    assert "Standings (6 games)" in term.text()
    assert_seen_whole(term)


def test_ctrl_c_stops_a_run_in_one_line_and_the_same_command_resumes(tmp_path):
    out = tmp_path / "out"
    argv = [REFEREE, "run", EXAMPLE, "--output", out, "-n", "1", "--games-per-pairing", "10"]  # 60 games
    with Terminal(argv, cols=80) as term:
        term.wait_for(lambda t: re.search(r"\b[1-9]\d*/60\b", t.text()) is not None, timeout=120)
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
    assert "Standings (60 games)" in again.text()
