"""Damaged and crafted output folders: a resume and a report answer clearly, and write nowhere else.

A finished tournament's output folder (a real run: Pegs and Jokers, two
games) is damaged the ways files get damaged and crafted the ways a hostile
folder is made: a file of it (``results.jsonl``, ``tournament.json``,
``secret``, ``standings.json``, a record) gets a JSON value of another type,
deleted, nested thousands deep, with thousands of digits, NaN; lines cut,
swapped, dropped or doubled, bits flipped; or the file is removed or replaced
by a device node, a FIFO, a folder, a sparse file over its cap, or a symbolic
link out of the folder.  Then ``referee run`` (the resume) and ``referee
report`` must exit 0 or refuse in one line with exit 2: no traceback, never 70,
never a hang (a timeout), and nothing written outside the folder.

Real ``referee`` subprocesses with an address-space cap.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..cli.bad_input import json_paths, json_set
from ..conftest import built_once

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("REFEREE_FUZZ_EXAMPLES", "40"))
MEMORY_CAP = 2 << 30
TIMEOUT_S = 120
TOURNAMENT = f"""game = "pegs-and-jokers"
options = {{ players = 4, max_turns = 40 }}
seed = 5
games_per_pairing = 1
jobs = 1
output = "out"
sandbox = "off"
[[entrants]]
name = "a"
command = "{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
cwd = "{ROOT}"
[[entrants]]
name = "b"
command = "{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
cwd = "{ROOT}"
"""
FILES = ["results.jsonl", "tournament.json", "secret", "standings.json", "records/000000.jsonl",
         "records/000001.jsonl"]
RAW_VALUES = [b"[" * 5000 + b"]" * 5000, b'{"a":' * 300 + b"1" + b"}" * 300, b"9" * 5000, b"NaN", b"-Infinity",
              b"1e999", b'"' + b"x" * 100_000 + b'"']
ODD_VALUES = [None, True, -1, 2**70, 1.5, "", "x", [], {}, [1, "a"], {"a": 1}]
REPLACEMENTS = ["remove", "zero", "urandom", "fifo", "folder", "sparse", "link_file", "link_folder"]


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def referee(*args):
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=TIMEOUT_S, preexec_fn=_cap)


def assert_clear(res, context) -> None:
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr, (context, res.stderr)
    assert res.returncode in (0, 2), (context, res.returncode, res.stdout, res.stderr)
    if res.returncode == 2:
        lines = [line for line in res.stderr.splitlines() if line.strip()]
        assert lines[-1].startswith("referee: error: "), (context, res.stderr)
        assert sum(line.startswith("referee: error: ") for line in lines) == 1, (context, res.stderr)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """The finished tournament (made once per test run: each test damages a copy)."""
    def build(folder):
        (folder / "t.toml").write_text(TOURNAMENT)
        res = referee("run", folder / "t.toml")
        assert res.returncode == 0, res.stdout + res.stderr
        assert len((folder / "out" / "results.jsonl").read_bytes().splitlines()) == 2

    return built_once(tmp_path_factory, "output-fuzz-finished", build)


@dataclass
class Damage:
    name: str
    steps: list[str] = field(default_factory=list)


def damage_text(draw, data: bytes, steps: list[str]) -> bytes:
    lines = data.splitlines(keepends=True) or [b""]
    i = draw(st.integers(0, len(lines) - 1))
    kind = draw(st.sampled_from(["retype", "raw", "cut", "bitflip", "swap", "drop", "double"]))
    try:
        value = json.loads(lines[i])
    except (ValueError, RecursionError):  # an earlier step may have nested it 5,000 deep
        value = None
    if kind in ("retype", "raw") and isinstance(value, (dict, list)):
        path = draw(st.sampled_from(list(json_paths(value, limit=6))))
        if kind == "retype":
            odd = draw(st.sampled_from(ODD_VALUES))
            lines[i] = json.dumps(json_set(value, path, odd)).encode() + b"\n"
            steps.append(f"line {i + 1}: {list(path)} = {odd!r}")
        else:
            raw = draw(st.sampled_from(RAW_VALUES))
            text = json.dumps(json_set(value, path, "@@raw@@")).encode()
            lines[i] = text.replace(b'"@@raw@@"', raw, 1) + b"\n"
            steps.append(f"line {i + 1}: {list(path)} = {raw[:10]!r}… ({len(raw)} bytes)")
    elif kind == "cut":
        whole = b"".join(lines)
        cut = draw(st.integers(0, len(whole)))
        steps.append(f"cut at {cut} of {len(whole)}")
        return whole[:cut]
    elif kind in ("swap", "drop", "double") and len(lines) > 1:
        j = draw(st.integers(0, len(lines) - 1))
        if kind == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "drop":
            del lines[i]
        else:
            lines.insert(i, lines[i])
        steps.append(f"{kind} line {i + 1}" + (f" and {j + 1}" if kind == "swap" else ""))
    elif lines[i]:
        line = bytearray(lines[i])
        pos = draw(st.integers(0, len(line) - 1))
        line[pos] ^= 1 << draw(st.integers(0, 7))
        lines[i] = bytes(line)
        steps.append(f"line {i + 1}: flip a bit of byte {pos}")
    return b"".join(lines)


def replace_file(path: Path, how: str, victim: Path) -> None:
    if path.exists() or path.is_symlink():
        path.unlink()
    if how == "zero":
        os.mknod(path, stat.S_IFCHR | 0o644, os.makedev(1, 5))
    elif how == "urandom":
        os.mknod(path, stat.S_IFCHR | 0o644, os.makedev(1, 9))
    elif how == "fifo":
        os.mkfifo(path)
    elif how == "folder":
        path.mkdir()
    elif how == "sparse":
        with open(path, "wb") as f:
            f.truncate((4 << 30) + 1)  # over every cap
    elif how == "link_file":
        path.symlink_to(victim / "precious")
    elif how == "link_folder":
        path.symlink_to(victim)


#: What the fuzzer damages: each file of the folder, and the two folders.
TARGETS = [*FILES, "records", "stderr"]


@st.composite
def damage(draw, folder: Path, victim: Path, name: str) -> Damage:
    """Damage ``name`` in the copy of the output folder at ``folder/out`` in place; what was done."""
    out = folder / "out"
    d = Damage(name)
    path = out / name
    if name in ("records", "stderr") or draw(st.booleans()):
        how = draw(st.sampled_from(REPLACEMENTS))
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        if how != "remove":
            path.parent.mkdir(parents=True, exist_ok=True)
            replace_file(path, how, victim)
        d.steps.append(f"{name}: {how}")
    else:
        data = path.read_bytes()
        for _ in range(draw(st.integers(1, 3))):
            data = damage_text(draw, data, d.steps)
        path.write_bytes(data)
    return d


def tree(victim: Path) -> list[tuple[str, bytes]]:
    return sorted((str(p.relative_to(victim)), p.read_bytes() if p.is_file() else b"")
                  for p in victim.rglob("*"))


# One test per target, the examples shared out among them: the same cases as one test that
# draws the target, but pytest-xdist can run them on different workers (one test of 40
# examples held one worker for 4 minutes of a full run).
@pytest.mark.parametrize("target", TARGETS)
@settings(max_examples=max(1, EXAMPLES // len(TARGETS)), deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@pytest.mark.slow
@given(data=st.data())
def test_a_damaged_output_folder_gets_a_clear_answer_and_no_write_outside_it(finished, tmp_path, target, data):
    work = tmp_path / "case"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(finished, work, symlinks=True)
    victim = tmp_path / "victim"
    if victim.exists():
        shutil.rmtree(victim)
    victim.mkdir()
    (victim / "precious").write_text("keep me\n")
    before = tree(victim)
    d = data.draw(damage(work, victim, target))
    resumed = referee("run", work / "t.toml")
    assert_clear(resumed, ("run", d))
    reported = referee("report", work / "out", "--html", tmp_path / "report.html")
    assert_clear(reported, ("report", d))
    assert tree(victim) == before, ("a write left the output folder", d)


@pytest.mark.parametrize("name", [f for f in FILES if "/" not in f])
def test_a_folder_where_a_run_file_belongs_is_refused_when_the_folder_is_opened(finished, tmp_path, name):
    # Found by the fuzzer above: a folder named standings.json passed the opening checks, the
    # games were played, and the run stopped at its end (exit 74) when it wrote the standings.
    work = tmp_path / "case"
    shutil.copytree(finished, work, symlinks=True)
    path = work / "out" / name
    path.unlink()
    path.mkdir()
    resumed = referee("run", work / "t.toml")
    assert resumed.returncode == 2, resumed.stderr
    assert f"{path} is a folder" in resumed.stderr and resumed.stderr.count("\n") == 1, resumed.stderr
