"""The learning example runs: train.py trains a table through referee.env and the
trained policy plays a real game as a subprocess bot in the bubblewrap sandbox."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from referee.match.record import read_record

from ..conftest import PATIENT_FLAGS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "sample_bots" / "learning"
HEURISTIC = ROOT / "sample_bots" / "heuristic" / "back_alley.py"


def test_train_writes_a_table_the_bot_plays_with_in_the_sandbox(tmp_path):
    bot_dir = tmp_path / "bot"
    bot_dir.mkdir()
    for name in ("bidding.py", "policy_bot.py"):
        shutil.copy(EXAMPLE / name, bot_dir / name)
    policy = bot_dir / "policy.json"
    done = subprocess.run([sys.executable, str(EXAMPLE / "train.py"), "--seconds", "3", "--out", str(policy),
                           "--no-tournament"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "scored bids" in done.stdout
    saved = json.loads(policy.read_text())
    assert saved["about"]["games"] >= 1 and saved["about"]["scored_bids"] > 0
    cells = [cell for row in saved["table"].values() for cell in row.values()]
    assert cells and all(n >= 1 for _, n in cells)

    record = tmp_path / "game.jsonl"
    venv_python = Path(sys.prefix) / "bin" / "python"  # the sandbox binds a virtualenv's installation
    learned = subprocess.list2cmdline([str(venv_python), str(bot_dir / "policy_bot.py"), str(policy)])
    heuristic = subprocess.list2cmdline([str(venv_python), str(HEURISTIC)])
    done = subprocess.run([sys.executable, "-m", "referee", "play", "back-alley", "--seed", "12", "--record",
                           str(record), "--sandbox", "required", "--quiet", *PATIENT_FLAGS,
                           "--bot", learned, "--bot", heuristic],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rec = read_record(record)
    assert rec.header.sandbox == "bwrap"
    assert rec.result is not None and rec.result.outcome.status in ("win", "draw")
    assert rec.result.names[0] == "learned-bidding"


def test_train_refuses_out_elsewhere_with_the_tournament_before_training(tmp_path):
    # The tournament's learned entrant plays runs/bidding_policy.json: a table written
    # elsewhere would leave it playing an older table (or none) under the name "learned".
    done = subprocess.run([sys.executable, str(EXAMPLE / "train.py"), "--out", str(tmp_path / "p.json")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "add --no-tournament" in done.stderr, done.stderr
    assert "trained" not in done.stdout and not (tmp_path / "p.json").exists()


def test_train_plays_its_tournament_anew_in_the_examples_runs_directory():
    # A tournament resumed after retraining would report games of the replaced table; train.py
    # removes the earlier one, and only ever inside the example's runs/ directory.  (In a
    # subprocess: importing train.py puts its directory on sys.path.)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import train; "
            "print(train.tournament_output()); print(train.DEFAULT_OUT)")
    done = subprocess.run([sys.executable, "-c", code, str(EXAMPLE)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(EXAMPLE / "runs" / "learning"), str(EXAMPLE / "runs" / "bidding_policy.json")]
