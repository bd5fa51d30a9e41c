"""The tournament file: validation, resolution, refusals (config.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tournaments.config import ConfigError, describe_differences, load_file, parse, parse_secret, resolve

from .helpers import SECRET

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "tournaments" / "examples").glob("*.toml"))
BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"


def settings(**overrides):
    data = {
        "game": "back-alley",
        "seed": 3,
        "entrants": [{"name": "a", "command": BOT}, {"name": "b", "command": BOT}],
    }
    data.update(overrides)
    return data


def build(tmp_path=None, **overrides):
    return resolve(parse(settings(**overrides)), tmp_path or ROOT)


def test_every_example_file_is_valid_and_covers_every_game():
    assert {load_file(p)["game"] for p in EXAMPLES} == {"back-alley", "schmier", "pegs-and-jokers"}
    for path in EXAMPLES:
        t = resolve(parse(load_file(path), str(path)), path.parent)
        assert t.output.is_relative_to(path.parent), "output is relative to the file's folder"
        assert all(e.cwd.is_dir() for e in t.entrants)
        assert len(t.with_secret(SECRET).schedule()) == t.total_games()


def test_players_shortcut_sets_the_pegs_and_jokers_option():
    t = build(game="pegs-and-jokers", players=8)
    assert t.options["players"] == 8 and t.num_seats == 8 and t.num_teams == 2
    with pytest.raises(ConfigError, match="contradicts"):
        build(game="pegs-and-jokers", players=8, options={"players": 4})
    with pytest.raises(ConfigError, match="pegs-and-jokers options"):
        build(game="pegs-and-jokers", players=5)


def test_relative_cwd_and_output_are_resolved_against_the_base_folder(tmp_path):
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "bot.py").write_text("")
    t = resolve(parse(settings(output="out", entrants=[
        {"name": "a", "command": "python3 bot.py", "cwd": "bots"},
        {"name": "b", "command": ["python3", "bots/bot.py"]},
    ])), tmp_path)
    assert t.output == tmp_path.resolve() / "out"
    assert t.entrant("a").cwd == tmp_path.resolve() / "bots"
    assert t.entrant("b").cwd == tmp_path.resolve()


def test_placeholders_become_per_seat_values_and_nothing_else_changes():
    t = build(entrants=[{"name": "a", "command": BOT, "args": ["{seed}", "--json={\"x\": 1}", "s{seat}g{game}"]},
                        {"name": "b", "command": BOT}]).with_secret(SECRET)
    game = t.schedule()[0]
    bots = t.bots(game)
    assert len(bots) == 4 and [b.name for b in bots] == ["a", "b", "a", "b"]
    seeds = {b.command[-3] for b in bots if b.name == "a"}
    assert len(seeds) == 2 and all(s.isdigit() for s in seeds)
    assert bots[2].command[-2:] == ('--json={"x": 1}', "s2g0")
    assert t.bots(game) == bots, "the same game gets the same commands"


@pytest.mark.parametrize(("overrides", "message"), [
    ({"game": "poker"}, "unknown game 'poker'"),
    ({"game": "schmier"}, "at least 3 entrants"),
    ({"entrants": [{"name": "a", "command": "no-such-program-xyz"}, {"name": "b", "command": BOT}]},
     "'no-such-program-xyz' not found on PATH"),
    ({"entrants": [{"name": "a", "command": "python3 missing_bot.py"}, {"name": "b", "command": BOT}]},
     "script 'missing_bot.py' not found"),
    ({"entrants": [{"name": "a", "command": "./nothing/here"}, {"name": "b", "command": BOT}]},
     "'./nothing/here' not found"),
    ({"entrants": [{"name": "a", "command": BOT, "cwd": "no/such/dir"}, {"name": "b", "command": BOT}]},
     "working directory"),
    ({"entrants": [{"name": "a", "command": BOT}, {"name": "a", "command": BOT}]}, "distinct: a"),
])
def test_bad_settings_are_refused_before_any_game(overrides, message):
    with pytest.raises(ConfigError, match=message) as info:
        build(**overrides)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("data", "message"), [
    ({"seed": 1}, "game: Field required"),
    ({"game": "back-alley", "entrants": []}, "entrants: List should have at least 1 item"),
    ({"game": "back-alley", "entrants": [{"name": "a"}]}, "entrants.0.command: Field required"),
    ({"game": "back-alley", "entrants": [{"name": "a", "command": "  "}]}, "command is empty"),
    ({"game": "back-alley", "entrants": [{"name": "a b", "command": "x"}]}, "entrants.0.name: names use"),
    ({"game": "back-alley", "entrants": [{"name": "a", "command": "x"}], "games_per_pairings": 2},
     "games_per_pairings: unknown setting"),
    ({"game": "back-alley", "entrants": [{"name": "a", "command": "x"}], "games_per_pairing": 0},
     "games_per_pairing: Input should be greater than or equal to 1"),
    ({"game": "back-alley", "entrants": [{"name": "a", "command": "x"}], "limits": {"decision_s": -1}},
     "limits.decision_s"),
])
def test_invalid_files_get_one_line_naming_the_setting(data, message):
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")) as info:
        parse(data, "t.toml")
    assert str(info.value).startswith("t.toml: ") and "\n" not in str(info.value)


def test_unreadable_files_are_config_errors(tmp_path):
    bad = tmp_path / "t.toml"
    bad.write_text("game = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_file(bad)
    with pytest.raises(ConfigError, match="no such tournament file"):
        load_file(tmp_path / "missing.toml")


def test_limits_map_to_the_match_limits_with_zero_meaning_no_cap():
    t = build(limits={"decision_s": 2.5, "memory_mb": 0, "cpu_s": 30})
    assert t.limits.decision_s == 2.5 and t.limits.memory_mb is None and t.limits.cpu_s == 30


def test_identity_ignores_jobs_and_output_but_not_what_decides_results(tmp_path):
    a = build(jobs=1, output=str(tmp_path / "x"))
    b = build(jobs=4, output=str(tmp_path / "y"))
    assert a.identity() == b.identity()
    assert build(seed=4).identity() != a.identity()


def test_differences_are_described_by_path():
    old = {"seed": 3, "entrants": [{"name": "a", "argv": ["x"]}], "limits": {"decision_s": 1.0}}
    new = {"seed": 4, "entrants": [{"name": "a", "argv": ["y"]}], "limits": {"decision_s": 1.0}, "extra": 1}
    assert describe_differences(old, new) == [
        "entrants[0].argv[0] was 'x', now 'y'", "extra added (1)", "seed was 3, now 4"]


def test_a_changed_entrant_list_is_described_by_names():
    old = {"entrants": [{"name": "a"}, {"name": "b"}]}
    new = {"entrants": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}
    assert describe_differences(old, new) == ["entrants were a, b, now a, b, c"]


def test_the_schedule_needs_the_secret_and_the_secret_is_never_in_the_identity():
    t = build()
    with pytest.raises(ValueError, match="secret is not known yet"):
        t.schedule()
    bound = t.with_secret(SECRET)
    assert len(bound.schedule()) == t.total_games()
    assert bound.identity() == t.identity() and bound.to_json() == t.to_json()
    assert SECRET.hex() not in repr(bound) + str(bound.to_json())


def test_secret_file_is_read_relative_to_the_base_folder(tmp_path):
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "s").write_text(SECRET.hex() + "\n")
    t = build(tmp_path, secret_file="keys/s")
    assert t.secret == SECRET
    assert build(tmp_path).secret is None, "no setting: the output directory decides"


@pytest.mark.parametrize(("content", "message"), [
    (None, "no such file"),
    ("00" * 31, "64 hex digits"),
    ("zz" * 32, "64 hex digits"),
    ("00" * 33, "64 hex digits"),
])
def test_a_bad_secret_file_is_refused_in_one_line(tmp_path, content, message):
    if content is not None:
        (tmp_path / "s").write_text(content)
    with pytest.raises(ConfigError, match=message) as info:
        build(tmp_path, secret_file="s")
    assert str(info.value).startswith(f"secret_file {tmp_path / 's'}: ") and "\n" not in str(info.value)


def test_parse_secret_takes_exactly_32_bytes_of_hex():
    assert parse_secret(f"  {SECRET.hex().upper()}\n", "x") == SECRET
    for bad in ("", "0x" + "00" * 31, "00 " * 32):
        with pytest.raises(ConfigError, match="^--secret: a tournament secret is 64 hex digits"):
            parse_secret(bad, "--secret")


def test_rounds_multiply_the_deals_per_pairing():
    t = build(rounds=3, games_per_pairing=2)
    assert t.deals_per_pairing == 6 and t.total_games() == 1 * 6 * 2
    assert t.identity()["rounds"] == 3 and "rounds" not in build().identity(), "old identities stay valid"
    with pytest.raises(ConfigError, match="rounds: Input should be greater than or equal to 1"):
        build(rounds=0)


def test_deals_per_pairing_are_capped_so_a_typo_cannot_hang_the_plan():
    with pytest.raises(ConfigError, match="games_per_pairing: Input should be less than or equal to 1000000"):
        build(games_per_pairing=2**62)
    with pytest.raises(ConfigError, match="rounds x games_per_pairing is 2000000 deals per pairing; at most 1000000"):
        build(rounds=2, games_per_pairing=1_000_000)
    assert build(games_per_pairing=1_000_000).total_games() == 2_000_000
