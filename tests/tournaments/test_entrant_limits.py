"""Per-entrant limits and sandbox ([entrants.limits], an entrant's `sandbox`):
enforced per bot by the match runner, with real bot processes; shown in the
plan and the standings."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from referee.match import bubblewrap
from referee.match.types import BotSpec, Limits
from tournaments.config import ConfigError, describe_overrides, parse, resolve
from tournaments.report import print_standings
from tournaments.runner import run_tournament

from .test_cli_run import referee

ROOT = Path(__file__).resolve().parents[2]

# Says its limits on stderr (as the hello gives them, and its address-space cap),
# then answers each request after SLEEP_S with the first legal action.
SLOW_BOT = '''
import json, resource, sys, time
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        sys.stderr.write("limits %s as %d\\n" % (json.dumps(msg["limits"], sort_keys=True),
                                                 resource.getrlimit(resource.RLIMIT_AS)[0] >> 20))
        sys.stderr.flush()
        print(json.dumps({"type": "ready", "name": "slow"}), flush=True)
    elif msg["type"] == "request":
        time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0.3)
        print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
    elif msg["type"] == "game_over":
        break
'''


def settings(tmp_path: Path, **overrides) -> dict:
    bot = tmp_path / "bots" / "slow.py"
    bot.parent.mkdir(exist_ok=True)
    bot.write_text(SLOW_BOT)
    data = {
        "game": "back-alley", "seed": 1, "jobs": 1, "output": str(tmp_path / "out"), "sandbox": "off",
        "limits": {"decision_s": 0.1, "memory_mb": 1024},
        "entrants": [
            {"name": "patient", "command": [sys.executable, str(bot)],
             "limits": {"decision_s": 2.0, "memory_mb": 512}},
            {"name": "hasty", "command": [sys.executable, str(bot)]},
        ],
    }
    data.update(overrides)
    return data


def test_an_entrants_limits_replace_only_the_settings_it_gives(tmp_path):
    t = resolve(parse(settings(tmp_path)), tmp_path)
    patient, hasty = t.limits_of("patient"), t.limits_of("hasty")
    assert (patient.decision_s, patient.memory_mb, patient.handshake_s) == (2.0, 512, t.limits.handshake_s)
    assert hasty == t.limits and (hasty.decision_s, hasty.memory_mb) == (0.1, 1024)
    assert t.overrides == {"patient": {"decision_s": 2.0, "memory_mb": 512}}
    assert describe_overrides(t.overrides) == ["patient: decision_s 2.0, memory_mb 512"]
    assert t.identity()["entrants"][0]["limits"] == {"decision_s": 2.0, "memory_mb": 512}
    spec = t.entrant("patient").bot_spec(seat=0, game_seed=1, game_id=0)
    assert BotSpec.from_json(spec.to_json()) == spec and spec.limits == patient


@pytest.mark.parametrize(("limits", "message"), [
    ({"decision_s": 0}, "entrants.0.limits.decision_s: Input should be greater than 0"),
    ({"decison_s": 1.0}, "entrants.0.limits.decison_s: unknown setting"),
    ({"memory_mb": True}, "entrants.0.limits.memory_mb: Input should be a valid integer"),
])
def test_bad_entrant_limits_are_one_line_errors(tmp_path, limits, message):
    data = settings(tmp_path)
    data["entrants"][0]["limits"] = limits
    with pytest.raises(ConfigError, match=message):
        resolve(parse(data), tmp_path)


def test_each_bot_plays_under_its_own_entrants_limits(tmp_path):
    t = resolve(parse(settings(tmp_path)), tmp_path)
    run = trio_run(run_tournament(t))  # worker processes: the limits travel with each bot's spec
    assert len(run.results) == 2
    for r in run.results.values():
        assert r.status == "forfeit" and r.fault is not None
        assert (r.fault.entrant, r.fault.reason) == ("hasty", "timeout"), r.fault
    logs = {p.name: p.read_text() for p in (tmp_path / "out" / "stderr").glob("*/*.log")}
    said = {name.split("-", 1)[1].removesuffix(".log"): text for name, text in logs.items()}
    assert '"decision_ms": 2000' in said["patient"] and " as 512" in said["patient"]
    assert '"decision_ms": 100' in said["hasty"] and " as 1024" in said["hasty"]
    standings = json.loads((tmp_path / "out" / "standings.json").read_text())
    assert standings["overrides"] == {"patient": {"decision_s": 2.0, "memory_mb": 512}}
    record = tmp_path / "out" / "records" / "000000.jsonl"
    header = json.loads(record.read_text().splitlines()[0])
    own = {s["name"]: s.get("limits") for s in header["seats"]}
    assert own["patient"]["decision_s"] == 2.0 and own["hasty"] is None and header["limits"]["decision_s"] == 0.1
    verified = referee("replay", record, "--verify")
    assert verified.returncode == 0, verified.stderr


def trio_run(coro):
    import trio

    async def main():
        return await coro
    return trio.run(main)


@pytest.mark.skipif(bubblewrap.probe() is not None, reason="bubblewrap does not work here")
def test_an_entrant_may_run_unsandboxed_and_the_game_says_so(tmp_path):
    data = settings(tmp_path, sandbox="auto")
    data["entrants"][1]["sandbox"] = "off"
    for entrant in data["entrants"]:
        entrant["command"].append("0")  # no sleeping
    t = resolve(parse(data), tmp_path)
    assert t.limits_of("hasty").sandbox == "off" and t.limits_of("patient").sandbox == "auto"
    assert t.limits_of("hasty").decision_s == 0.1 and t.overrides["hasty"] == {"sandbox": "off"}
    run = trio_run(run_tournament(t))
    assert {r.sandbox for r in run.results.values()} == {"off"}, "a game is isolated only if every bot is"
    assert {r.fault for r in run.results.values()} == {None}


def test_the_plan_and_the_standings_show_entrants_own_limits(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(f'''
game = "back-alley"
output = "out"
[limits]
decision_s = 1.0
[[entrants]]
name = "v2"
command = "{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
sandbox = "off"
[entrants.limits]
decision_s = 2.5
memory_mb = 2048
[[entrants]]
name = "v1"
command = "{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
''')
    res = referee("run", path, "--dry-run")
    assert res.returncode == 0, res.stderr
    assert "back-alley: 2 entrants, 1 pairing x 1 deal x 2 seatings = 2 games" in res.stderr
    assert "  own limits: v2: decision_s 2.5, memory_mb 2048, sandbox off" in res.stderr
    from rich.console import Console
    console = Console(record=True, width=100)
    from tournaments.standings import compute_standings
    standings = compute_standings(["v2", "v1"], 2, [])
    standings.overrides = {"v2": {"decision_s": 2.5}}
    print_standings(standings.to_json(), console)
    assert "own limits: v2: decision_s 2.5" in console.export_text()


def test_a_bot_spec_without_limits_of_its_own_plays_under_the_matchs():
    spec = BotSpec(name="x", command=("true",))
    assert "limits" not in spec.to_json() and BotSpec.from_json(spec.to_json()).limits is None
    own = BotSpec(name="x", command=("true",), limits=Limits(decision_s=3.0))
    assert BotSpec.from_json(own.to_json()).limits == Limits(decision_s=3.0)


def test_time_limits_may_be_given_in_milliseconds_as_on_the_command_line(tmp_path):
    path = tmp_path / "t.toml"
    bot = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
    text = f'''
game = "back-alley"
output = "out"
[limits]
decision_ms = 1500
[[entrants]]
name = "v2"
command = "{bot}"
[entrants.limits]
decision_ms = 2500
time_bank_ms = 10000
handshake_ms = 4000
[[entrants]]
name = "v1"
command = "{bot}"
'''
    path.write_text(text)
    res = referee("run", path, "--dry-run")
    assert res.returncode == 0, res.stderr
    assert "own limits: v2: handshake_s 4.0, decision_s 2.5, time_bank_s 10.0" in res.stderr, res.stderr
    import tomllib

    t = resolve(parse(tomllib.loads(text), "t.toml"), tmp_path)
    assert t.limits.decision_s == 1.5 and t.limits_of("v1").decision_s == 1.5
    assert t.limits_of("v2").decision_s == 2.5 and t.limits_of("v2").time_bank_s == 10.0
    both = text.replace("decision_ms = 2500", "decision_ms = 2500\ndecision_s = 2.5")
    path.write_text(both)
    res = referee("run", path, "--dry-run")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "decision_ms or decision_s, not both" in res.stderr
    path.write_text(text.replace("decision_ms = 2500", "decision_ms = 2.5"))
    res = referee("run", path, "--dry-run")
    assert res.returncode == 2 and "whole number of milliseconds" in res.stderr, res.stderr
