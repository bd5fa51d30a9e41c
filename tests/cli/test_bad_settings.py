"""Damaged tournament files and odd command-line values: a clear answer, never a bug.

The example tournaments are damaged (settings deleted or given values of
another type, ``inf``, huge numbers, unknown keys; values nested thousands
deep or with thousands of digits; a ``secret_file`` or ``deals`` file that is
a device, a FIFO, a folder or over its cap; bytes flipped, the text cut, bytes
that are not UTF-8) and checked with ``referee run --dry-run``;
``play``, ``run --dry-run`` and ``replay`` get random values for their flags.
The answer is always exit 0 or a one-line refusal with exit 2: no traceback,
never 70, never a hang.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .bad_input import assert_clear_answer, json_delete, json_paths, json_set, no_hang, referee_in_process

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "tournaments" / "examples"
RANDOM_BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
QUICK_BOT = shutil.which("false") or "false"  # starts and exits at once: a game ends at the handshake
TEAMS = {"back-alley": 2, "schmier": 3, "pegs-and-jokers": 2}
#: Examples per run of each fuzzer (REFEREE_FUZZ_EXAMPLES raises it for a long run).
EXAMPLES_PER_RUN = int(os.environ.get("REFEREE_FUZZ_EXAMPLES", "60"))
SETTINGS = settings(max_examples=EXAMPLES_PER_RUN, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def example_data() -> list[dict]:
    """The example tournaments as data, with every entrant's folder absolute (so the
    damaged copy works from anywhere)."""
    out = []
    for path in sorted(EXAMPLES.glob("*.toml")):
        data = tomllib.loads(path.read_text())
        for e in data["entrants"]:
            e["cwd"] = str((EXAMPLES / e.get("cwd", ".")).resolve())
        out.append(data)
    return out


EXAMPLE_DATA = example_data()


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_value(x)}" for k, x in v.items()) + "}"


def to_toml(data: dict) -> str:
    return "".join(f"{json.dumps(str(k))} = {toml_value(v)}\n" for k, v in data.items())


ODD = st.sampled_from([
    True, 0, -1, 1.5, 2**62, -(2**62), 10**30, "", "x", "back-alley", [], [1, "a"], {}, {"a": 1},
    math.inf, -math.inf, math.nan, 99999999999999, 1e300, 0.0001,
])


#: Stands for a value whose TOML is written by hand (too deep for ``toml_value``, or a huge number).
PLACEHOLDER = "@@raw@@"
RAW_TOML = st.sampled_from([
    "[" * 5000 + "]" * 5000, "[" * 64 + "]" * 64, "[" * 65 + "]" * 65, "{ a = " * 300 + "1" + " }" * 300,
    "9" * 5000, "9" * 4000, "-" + "9" * 4300, "1e99999", "0x" + "f" * 3000,
])
#: What a file a tournament names (``secret_file``, ``deals``) may be instead of a file of its kind.
ODD_FILES = ["/dev/zero", "/dev/urandom", "/dev/null", "{fifo}", "{sparse}", "/", "/no/such/file", "/etc/shadow"]


@st.composite
def damaged_toml(draw) -> tuple[list[str], bytes]:
    data = draw(st.sampled_from(EXAMPLE_DATA))
    steps = []
    raw_value = None
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in json_paths(data) if p]
        path = draw(st.sampled_from(paths))
        kind = draw(st.sampled_from(["retype", "delete", "add", "raw", "file"]))
        if kind == "raw":
            raw_value = draw(RAW_TOML)
            data = json_set(data, path, PLACEHOLDER)
            steps.append(f"{list(path)} = {raw_value[:12]}… ({len(raw_value)} characters)")
        elif kind == "file":
            key, odd_file = draw(st.sampled_from(["secret_file", "deals"])), draw(st.sampled_from(ODD_FILES))
            data = {**data, key: odd_file}
            steps.append(f"{key} = {odd_file}")
        elif kind == "retype":
            odd = draw(ODD)
            data = json_set(data, path, odd)
            steps.append(f"{list(path)} = {odd!r}")
        elif kind == "delete":
            data = json_delete(data, path)
            steps.append(f"del {list(path)}")
        else:
            data = {**data, "limits": {**(data.get("limits") if isinstance(data.get("limits"), dict) else {}),
                                        draw(st.sampled_from(["decision_s", "memory_mb", "cpu_s", "typo_s"])):
                                            draw(ODD)}}
            steps.append(f"limits: {data['limits']}")
    text = to_toml(data)
    if raw_value is not None:
        text = text.replace(json.dumps(PLACEHOLDER), raw_value)
    raw = bytearray(text.encode())
    text_damage = draw(st.sampled_from(["none", "bitflip", "cut", "latin1"]))
    if text_damage == "bitflip":
        pos = draw(st.integers(0, len(raw) - 1))
        raw[pos] ^= 1 << draw(st.integers(0, 7))
        steps.append(f"flip a bit of byte {pos}")
    elif text_damage == "cut":
        cut = draw(st.integers(0, len(raw)))
        raw = raw[:cut]
        steps.append(f"cut at {cut}")
    elif text_damage == "latin1":
        pos = draw(st.integers(0, len(raw)))
        raw[pos:pos] = "# café\n".encode("latin-1")
        steps.append(f"latin-1 comment at {pos}")
    return steps, bytes(raw)


def test_the_undamaged_examples_pass_the_dry_run(tmp_path):
    for i, data in enumerate(EXAMPLE_DATA):
        path = tmp_path / f"{i}.toml"
        path.write_text(to_toml(data))
        code, _, err = referee_in_process("run", path, "--dry-run")
        assert code == 0 and "games; jobs" in err, err


@SETTINGS
@given(damaged=damaged_toml())
def test_damaged_tournament_files_get_a_clear_answer(damaged, tmp_path):
    steps, raw = damaged
    path = tmp_path / "t.toml"
    fifo, sparse = tmp_path / "fifo", tmp_path / "sparse"
    if not fifo.exists():  # tmp_path is the same for every example
        os.mkfifo(fifo)
    with open(sparse, "wb") as f:
        f.truncate(100 << 20)  # over every cap of a file a tournament names
    raw = raw.replace(b"{fifo}", str(fifo).encode()).replace(b"{sparse}", str(sparse).encode())
    path.write_bytes(raw)
    with no_hang():
        code, _, err = referee_in_process("run", path, "--dry-run")
    assert_clear_answer(code, err, {0, 2}, steps)


def test_a_file_that_is_not_utf8_and_limits_past_their_bounds_are_one_line(tmp_path):
    path = tmp_path / "t.toml"
    path.write_bytes(to_toml(EXAMPLE_DATA[0]).encode() + "# café\n".encode("latin-1"))
    code, _, err = referee_in_process("run", path, "--dry-run")
    assert code == 2 and "not valid TOML: not UTF-8 text" in err
    for limits, needle in [({"decision_s": math.inf}, "limits.decision_s: Input should be a finite number"),
                           ({"memory_mb": 99999999999999}, "limits.memory_mb: Input should be less than or equal"),
                           ({"handshake_s": math.nan}, "limits.handshake_s: Input should be a finite number"),
                           ({"cpu_s": True}, "limits.cpu_s: Input should be a valid integer")]:
        path.write_text(to_toml({**EXAMPLE_DATA[0], "limits": limits}))
        code, _, err = referee_in_process("run", path, "--dry-run")
        assert_clear_answer(code, err, {2}, limits)
        assert needle in err, err


# -- command-line values ----------------------------------------------------------------------

FLAG_VALUE = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.sampled_from(["0", "-1", "1", "1024", "99999999999999", "1" + "0" * 40, "-" + "9" * 30, "1.5", "inf",
                     "nan", "1e400", "", "abc", "0x10", " 7", "٣"]),
)
OPTION_VALUE = st.sampled_from([
    "max_redeals=1", "max_redeals=0", "max_redeals=-1", "max_redeals=1e400", "max_redeals=true",
    "max_redeals=[1]", "max_redeals={}", "max_deals=2", "max_deals=99999999999999999999", "players=6",
    "players=5", "players=null", "max_turns=10", "nope=1", "=", "max_redeals", "players=\"4\"",
])
PLAY_FLAGS = ["--seed", "--players", "--decision-ms", "--handshake-ms", "--time-bank-ms", "--memory-mb",
              "--cpu-s", "--max-processes", "--max-open-files", "--max-line-bytes", "--stderr-keep-bytes"]
RUN_FLAGS = ["--seed", "--players", "--jobs", "--games-per-pairing", "--decision-ms", "--handshake-ms",
             "--time-bank-ms"]


@st.composite
def flag_values(draw, flags: list[str]) -> list[str]:
    args: list[str] = []
    for flag in draw(st.lists(st.sampled_from(flags), max_size=4, unique=True)):
        args += [flag, draw(FLAG_VALUE)]
    for option in draw(st.lists(OPTION_VALUE, max_size=2)):
        args += ["--option", option]
    return args


@SETTINGS
@given(game=st.sampled_from(sorted(TEAMS)), args=flag_values(PLAY_FLAGS))
def test_play_refuses_odd_flag_values_in_one_line(game, args, tmp_path):
    bots = ["--bot", QUICK_BOT] * TEAMS[game]
    with no_hang():
        code, _, err = referee_in_process("play", game, *bots, "--record", tmp_path / "r.jsonl", "-q", *args)
    # QUICK_BOT exits at once: a game that starts ends by a forfeit (exit 3), or the flags are refused (2).
    assert_clear_answer(code, err, {2, 3}, args)


@SETTINGS
@given(game=st.sampled_from([*sorted(TEAMS), "chess", ""]), args=flag_values(RUN_FLAGS))
def test_run_refuses_odd_flag_values_in_one_line(game, args, tmp_path):
    entrants = [x for i in range(3) for x in ("--entrant", f"bot{i}={RANDOM_BOT}")]
    with no_hang():
        code, _, err = referee_in_process("run", "--game", game, *entrants, "--output", tmp_path / "out",
                                          "--dry-run", *args)
    assert_clear_answer(code, err, {0, 2}, (game, args))


@pytest.fixture(scope="module")
def small_record(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("rec") / "s.jsonl"
    code, _, err = referee_in_process("play", "schmier", *["--bot", RANDOM_BOT] * 3, "--option", "max_deals=1",
                                      "--seed", "3", "--record", path, "-q")
    assert code == 0, err
    return path


@SETTINGS
@given(deal=FLAG_VALUE, seat=FLAG_VALUE, extra=st.sampled_from([[], ["--verify"], ["--summary"]]))
def test_replay_refuses_odd_deal_and_seat_values_in_one_line(small_record, deal, seat, extra):
    with no_hang():
        code, _, err = referee_in_process("replay", small_record, "--deal", deal, "--seat", seat, *extra)
    assert_clear_answer(code, err, {0, 2}, (deal, seat, extra))
