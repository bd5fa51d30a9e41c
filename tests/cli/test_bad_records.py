"""Mutated match records of all three games: every replay mode answers clearly.

Real records (played by the random sample bot through the match runner, one
ending in a forfeit) are damaged the ways files get damaged: fields deleted,
values of the wrong type, truncation, bit flips, lines swapped, dropped or
doubled; and the ways a crafted file is made: a header with another number of
seats, a line naming a seat the game lacks, a value nested 5,000 deep, with
thousands of digits, or NaN.  Every mode of ``referee replay`` (plain,
``--deal``, ``--seat``, ``--verify``, ``--summary``, ``--request N --history``,
``--html``) must then exit 0 (shown, perhaps as corrupt), 1
(``--verify`` found a divergence) or 2 (not a record: one line), with no
traceback, never 70, and never hang.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.match.runner import run_match
from referee.match.types import BotSpec, Limits

from ..conftest import built_once
from .bad_input import assert_clear_answer, json_delete, json_paths, json_set, no_hang, referee_in_process

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
CRASHER = ROOT / "sample_bots" / "misbehaving" / "crash_mid_game.py"

GAMES = [
    ("back-alley", {}, 4, None),
    ("schmier", {"max_deals": 2}, 6, None),
    ("pegs-and-jokers", {"players": 4, "max_turns": 100}, 4, None),
    ("back-alley", {}, 4, CRASHER),  # ends in a fault line and a forfeit
]
MODES = [[], ["--deal", "2"], ["--seat", "1"], ["--verify"], ["--summary"], ["--request", "3", "--history"],
         ["--html", "{dir}/page.html"]]
#: Examples per run of the fuzzer (REFEREE_FUZZ_EXAMPLES raises it for a long run).
EXAMPLES = int(os.environ.get("REFEREE_FUZZ_EXAMPLES", "60"))
#: Stands for a value whose JSON is written by hand after ``json.dumps`` (too deep for it, or not JSON).
PLACEHOLDER = "@@raw@@"
RAW_VALUES = st.sampled_from([
    b"[" * 5000 + b"]" * 5000, b'{"a":' * 300 + b"1" + b"}" * 300, b"[" * 63 + b"]" * 63, b"9" * 5000,
    b"-" + b"9" * 400, b"NaN", b"Infinity", b"-Infinity", b"1e999",
])


def modes(game: str, folder: Path | None = None) -> list[list[str]]:
    """The replay modes of ``game``: Pegs and Jokers picks turns, not deals (it refuses --deal);
    ``--html`` writes its page into ``folder``."""
    out = [[a.replace("{dir}", str(folder)) for a in m] for m in MODES]
    if game == "pegs-and-jokers":
        return [["--turns", "2-5"] if m[:1] == ["--deal"] else m for m in out]
    return out


class Records(list):
    """The lines of each real record (a short repr keeps failure reports readable)."""

    def __repr__(self) -> str:
        return f"<{len(self)} records of {sum(map(len, self))} lines>"


@dataclass
class Damage:
    which: int
    steps: list[str]
    raw: bytes = field(repr=False)


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> Records:
    """The real records, played once per test run (the tests copy their bytes)."""
    def build(folder):
        for i, (game, options, seats, odd_bot) in enumerate(GAMES):
            bots = [BotSpec("random", (sys.executable, str(RANDOM_BOT), str(s))) for s in range(seats)]
            if odd_bot is not None:
                bots[1] = BotSpec("crasher", (sys.executable, str(odd_bot)))
            result = trio.run(partial(run_match, game, options, bots, seed=7 + i, record_path=folder / f"{i}.jsonl",
                                      limits=Limits(decision_s=10, handshake_s=20)))
            assert (result.fault is not None) == (odd_bot is not None)

    folder = built_once(tmp_path_factory, "bad-records-records", build)
    return Records((folder / f"{i}.jsonl").read_bytes().splitlines(keepends=True) for i in range(len(GAMES)))


ODD_VALUES = st.sampled_from([
    None, True, 0, -1, 1.5, 2**70, -(2**70), "", "x", "header", [], [None], [1, "a"], {}, {"a": 1},
    float("inf"), float("nan"),
])


@st.composite
def mutation(draw, lines: list[bytes], steps: list[str]) -> list[bytes]:
    kind = draw(st.sampled_from(["retype", "delete", "truncate", "bitflip", "swap", "drop", "double",
                                 "raw", "seats", "seat_ref"]))
    lines = list(lines)
    # Early lines (header, first deal) and the last ones (fault, result) matter most.
    n = len(lines)
    i = draw(st.one_of(st.integers(0, min(n - 1, 8)), st.integers(max(0, n - 4), n - 1),
                       st.integers(0, n - 1)))
    try:
        value = json.loads(lines[i])
    except (ValueError, RecursionError):  # damaged by an earlier step already (nested 5,000 deep, say)
        value = None
    if kind == "seats" and i == 0 and isinstance(value, dict) and isinstance(value.get("seats"), list) \
            and value["seats"]:
        # A header with another number of seats (0, one too few or many, 100), numbered in order.
        count = draw(st.sampled_from([0, 1, len(value["seats"]) - 1, len(value["seats"]) + 1, 100]))
        first = value["seats"][0]
        value = {**value, "seats": [dict(first, seat=s, team=s % 2) if isinstance(first, dict) else first
                                    for s in range(count)]}
        steps.append(f"header: {count} seats")
        lines[i] = json.dumps(value).encode() + b"\n"
    elif kind == "seat_ref" and isinstance(value, dict) and value.get("record") in ("decision", "fault", "event"):
        # A line naming a seat the game does not have.
        odd = draw(st.sampled_from([99, -1, 4, 6, 8, 2**40]))
        key = "to" if value["record"] == "event" else "seat"
        value = {**value, key: [odd] if key == "to" else odd}
        steps.append(f"line {i + 1}: {key} = {value[key]!r}")
        lines[i] = json.dumps(value).encode() + b"\n"
    elif kind == "raw" and isinstance(value, (dict, list)):
        # A value replaced by text json.dumps would not write: nested deep, thousands of digits, NaN.
        path = draw(st.sampled_from(list(json_paths(value, limit=6))))
        raw = draw(RAW_VALUES)
        text = json.dumps(json_set(value, path, PLACEHOLDER)).encode()
        lines[i] = text.replace(json.dumps(PLACEHOLDER).encode(), raw, 1) + b"\n"
        steps.append(f"line {i + 1}: {list(path)} = {raw[:12]!r}… ({len(raw)} bytes)")
    elif kind in ("retype", "delete") and isinstance(value, (dict, list)):
        paths = list(json_paths(value, limit=6))
        if kind == "delete":
            paths = [p for p in paths if p] or [()]
        path = draw(st.sampled_from(paths))
        if kind == "retype" or not path:
            odd = draw(ODD_VALUES)
            new = json_set(value, path, odd)
            steps.append(f"line {i + 1}: {list(path)} = {odd!r}")
        else:
            new = json_delete(value, path)
            steps.append(f"line {i + 1}: del {list(path)}")
        lines[i] = json.dumps(new).encode() + b"\n"
    elif kind == "truncate":
        raw = b"".join(lines)
        cut = draw(st.integers(0, len(raw)))
        steps.append(f"cut at byte {cut} of {len(raw)}")
        return raw[:cut].splitlines(keepends=True)
    elif kind in ("bitflip", "retype", "delete", "raw", "seats", "seat_ref"):
        line = bytearray(lines[i])
        pos = draw(st.integers(0, len(line) - 1))
        bit = draw(st.integers(0, 7))
        line[pos] ^= 1 << bit
        lines[i] = bytes(line)
        steps.append(f"line {i + 1}: flip bit {bit} of byte {pos}")
    elif kind == "swap":
        j = draw(st.integers(0, n - 1))
        lines[i], lines[j] = lines[j], lines[i]
        steps.append(f"swap lines {i + 1} and {j + 1}")
    elif kind == "drop":
        del lines[i]
        steps.append(f"drop line {i + 1}")
    else:
        lines.insert(i, lines[i])
        steps.append(f"double line {i + 1}")
    return lines


@st.composite
def damaged_record(draw, records: Records) -> Damage:
    which = draw(st.integers(0, len(records) - 1))
    lines = records[which]
    steps: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        if not lines:
            break
        lines = draw(mutation(lines, steps))
    return Damage(which, steps, b"".join(lines))


@pytest.fixture
def workdir(tmp_path):
    return tmp_path


def test_the_undamaged_records_replay_and_verify(records, tmp_path):
    for i, lines in enumerate(records):
        path = tmp_path / f"{i}.jsonl"
        path.write_bytes(b"".join(lines))
        for mode in modes(GAMES[i][0], tmp_path):
            code, out, err = referee_in_process("replay", path, *mode)
            assert code == 0 and err == "", (i, mode, err)
        assert referee_in_process("replay", path, "--verify")[1].startswith("OK: verified")


#: The fuzzer's examples are drawn in this many parts (EXAMPLES in all), each a test of its own,
#: so that pytest-xdist workers share them: as one test it was the suite's slowest (160 s loaded).
PARTS = 4


@pytest.mark.parametrize("part", range(PARTS))
@settings(max_examples=-(-EXAMPLES // PARTS), deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(data=st.data())
def test_damaged_records_get_a_clear_answer_in_every_replay_mode(records, workdir, data, part):
    damage = data.draw(damaged_record(records))
    path = workdir / "damaged.jsonl"
    path.write_bytes(damage.raw)
    with no_hang():
        for mode in modes(GAMES[damage.which][0], workdir):
            code, out, err = referee_in_process("replay", path, *mode)
            allowed = {0, 1, 2} if mode == ["--verify"] else {0, 2}
            assert_clear_answer(code, err, allowed, (GAMES[damage.which][0], mode, damage.steps))
