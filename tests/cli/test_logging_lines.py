"""Log lines of processes that share one stderr (a tournament's workers) stay whole."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WRITER = """\
import sys
from referee.logging import configure_logging
import structlog
configure_logging("info")
log = structlog.get_logger("t")
for i in range(3000):
    log.info("line", writer=sys.argv[1], i=i, pad="x" * 50)
"""


def test_lines_of_two_processes_on_one_stderr_never_merge_even_unbuffered():
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)}
    read, write = os.pipe()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, name], stderr=write, env=env) for name in "ab"]
    os.close(write)
    with os.fdopen(read, "r") as pipe:
        lines = pipe.read().splitlines()
    assert [p.wait() for p in procs] == [0, 0]
    assert len(lines) == 6000
    assert all(line.startswith("timestamp=") and line.count("timestamp=") == 1 and line.endswith("'")
               for line in lines)
