"""Documentation that must stay true.

The rule book: docs/rules.md is a copy of the shared rule book, which lives
beside the checkout (``../shared/RULES.md``).  Two tests keep the copy honest:

* where the shared book is found, the copy must equal it; where it is not,
  the test skips on a developer's machine but FAILS under CI (``CI`` set, as
  CI services do), so a CI layout without the book cannot pass silently;
* everywhere, the copy must hash to ``RULE_BOOK["sha256"]`` with the games at
  ``RULE_BOOK["rules_versions"]``: whoever copies in a new rule book meets
  this test and must decide which games' ``rules_version`` to bump.

The protocol messages in the docs (protocol.md's worked example, writing-a-bot.md,
debugging.md, the game pages) must be ones the models accept, with exactly the fields
the referee sends in real games; and what debugging.md says a re-asked bot gets after
its request is what ``referee ask`` does.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from protocol.messages import PROTOCOL_VERSION, BotMessage, RefereeMessage
from referee.games import GAMES

from .conftest import built_once

ROOT = Path(__file__).resolve().parent.parent
COPY = ROOT / "docs" / "rules.md"
#: Where the shared rule book is documented to be: beside the checkout.
SHARED_RULES = ROOT.parent / "shared" / "RULES.md"
#: The rule book the engines implement, and each game's rules version for it.
RULE_BOOK = {
    "sha256": "56dc8f4607852328635a4e7676d2a96d91d27dd53b4bdba3d4c4d6bb61da45b6",
    "rules_versions": {"back-alley": "2", "schmier": "2", "pegs-and-jokers": "2"},
}


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def test_the_rule_book_copy_in_docs_is_current():
    if not SHARED_RULES.is_file():
        message = (f"the shared rule book is not at {SHARED_RULES} (beside the checkout), so "
                   "docs/rules.md cannot be compared with it")
        if in_ci():
            pytest.fail(message + "; CI must check shared/ out beside the repository")
        pytest.skip(message)
    assert COPY.read_bytes() == SHARED_RULES.read_bytes(), (
        f"docs/rules.md differs from {SHARED_RULES}: copy it again (and see RULE_BOOK in this file)"
    )


def test_the_rule_book_copy_is_the_one_the_engines_implement():
    digest = hashlib.sha256(COPY.read_bytes()).hexdigest()
    versions = {name: spec.rules_version for name, spec in GAMES.items()}
    assert (digest, versions) == (RULE_BOOK["sha256"], RULE_BOOK["rules_versions"]), (
        "docs/rules.md or a game's rules_version changed: bump the rules_version of every game "
        f"whose rules changed, then set RULE_BOOK in tests/test_docs.py to sha256 {digest} "
        f"and rules_versions {versions}"
    )


def test_every_relative_link_in_the_docs_points_at_a_file():
    missing = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", doc.read_text()):
            if "://" in target:
                continue
            if not (doc.parent / target).exists():
                missing.append(f"{doc.relative_to(ROOT)} -> {target}")
    assert not missing, missing


def test_the_ci_script_runs_the_readme_test_command():
    """The README's second command, whole (the parallel run included), is the last line
    .ci/run runs, and the only command it runs besides installing system packages; CONTRIBUTING.md
    shows the same."""
    commands = re.findall(r"```sh\n(.*?)\n```", (ROOT / "README.md").read_text())
    command = commands[1]
    assert command.startswith("python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && "
                              ".venv/bin/python -m pytest -q -n auto"), command
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci[-1] == command
    # Nothing else is run as a test or a check: the gate is in the suite (tests/test_gate.py).
    assert not [line for line in ci[:-1] if re.search(r"\b(pytest|ruff|mypy|pip)\b", line)], ci
    assert command in re.findall(r"```sh\n(.*?)\n```", (ROOT / "CONTRIBUTING.md").read_text())


# -- the protocol messages the docs show are the ones the referee sends and accepts ---------------

#: Every doc a bot author reads for the protocol's messages.
MESSAGE_DOCS = ["docs/protocol.md", "docs/writing-a-bot.md", "docs/debugging.md", "docs/games/back-alley.md",
                "docs/games/schmier.md", "docs/games/pegs-and-jokers.md"]
FROM_REFEREE, FROM_BOT = {"hello", "event", "request", "game_over"}, {"ready", "action", "bye"}
#: What a line of a conversation is prefixed with in the docs' code blocks.
_PREFIX = re.compile(r"(?m)^[ \t]*(?:< |> |referee → bot\s+|bot → referee\s+|reply: )")
_START = re.compile(r'(?m)^[ \t]*\{"(?:type|table)"')
_INLINE = re.compile(r'`(\{"type": ?"[a-z_]+".*?\})`')
_ELIDED = re.compile(r'\{\.\.\.\}|\{…\}|,\s*(?:\.\.\.|…)')
LOGGING_BOT = ROOT / "tests" / "replay" / "logging_bot.py"
#: A bot that serves several tables (protocol version 2) and, like logging_bot, writes its stdin to stderr.
MULTI_TABLE_LOGGER = """import json, random, sys
rng = random.Random(1)
for raw in sys.stdin.buffer:
    sys.stderr.buffer.write(raw)
    sys.stderr.buffer.flush()
    m = json.loads(raw)
    t = m.get("table", 0)
    if m["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "multi", "tables": 2, "table": t}), flush=True)
    elif m["type"] == "request":
        print(json.dumps({"type": "action", "table": t, "id": m["id"], "action": rng.choice(m["legal"])}), flush=True)
"""
#: Referee messages whose ``table`` is a tag the referee puts first on every line to a multi-table
#: process (referee/match/pool.py), not a field of their model.
TAGGED = {"event", "request", "game_over"}


def doc_messages() -> list[tuple[str, dict, bool]]:
    """(where, message, whole) for every JSON message in the docs' code blocks and inline code:
    ``whole`` False for an abbreviated one (``...``, ``{...}``), read with those parts left out."""
    decoder = json.JSONDecoder()
    found = []
    for name in MESSAGE_DOCS:
        text = (ROOT / name).read_text()
        for block in re.finditer(r"```[a-z]*\n(.*?)```", text, re.S):
            body = _PREFIX.sub("", block.group(1))
            at = 0
            while (m := _START.search(body, at)) is not None:
                start = body.index("{", m.start())
                where = f"{name}: {body[start:start + 60]}"
                try:
                    message, at = decoder.raw_decode(body, start)
                    found.append((where, message, True))
                except ValueError:
                    line = body[start:].split("\n", 1)[0]
                    found.append((where, json.loads(_ELIDED.sub(lambda e: "{}" if "{" in e[0] else "", line)),
                                  False))
                    at = start + len(line)
        found += [(f"{name}: {m[1][:60]}", json.loads(m[1]), True) for m in _INLINE.finditer(text)]
    return found


@pytest.fixture(scope="module")
def sent_lines(tmp_path_factory) -> list[dict]:
    """Every line the referee sent the bots of one real game of each game (logging_bot writes its
    stdin to its stderr), events asked for; played once per test run (the test only reads them)."""
    games = (("back-alley", [], "logger", 2), ("schmier", ["--option", "max_deals=3"], "logger", 3),
             ("pegs-and-jokers", ["--players", "4"], "logger", 2),
             ("pegs-and-jokers", ["--players", "4", "--option", "max_turns=40"], "multi", 2))

    def build(folder):
        (folder / "multi.py").write_text(MULTI_TABLE_LOGGER)
        command = {"logger": f"{sys.executable} {LOGGING_BOT}", "multi": f"{sys.executable} {folder / 'multi.py'}"}
        for i, (game, extra, bot, teams) in enumerate(games):
            res = subprocess.run([sys.executable, "-m", "referee", "play", game, *extra, "--seed", "5",
                                  *[a for t in range(teams) for a in ("--bot", f"{command[bot]} {t}")],
                                  "--record", str(folder / f"{i}.jsonl"), "--stderr-dir", str(folder / str(i)),
                                  "--stderr-keep-bytes", str(64 << 20), "-q"], capture_output=True, text=True,
                                 cwd=ROOT, timeout=300)
            assert res.returncode == 0, res.stderr

    folder = built_once(tmp_path_factory, "docs-sent-lines", build)
    lines = []
    for i in range(len(games)):
        for log in sorted((folder / str(i)).iterdir()):
            lines += [json.loads(line) for line in log.read_text().splitlines()]
    return lines


def keys(value: dict) -> frozenset[str]:
    return frozenset(value)


def test_the_docs_show_protocol_messages():
    messages = doc_messages()
    kinds = {m.get("type") for _, m, _ in messages}
    assert kinds >= FROM_REFEREE | FROM_BOT, kinds  # every kind is shown somewhere
    assert sum(whole for _, _, whole in messages) >= 25


def test_every_message_in_the_docs_is_one_the_models_accept():
    referee, bot = TypeAdapter(RefereeMessage), TypeAdapter(BotMessage)
    bad = []
    for where, message, whole in doc_messages():
        kind = message.get("type")
        if kind not in FROM_REFEREE | FROM_BOT:
            continue  # an event's body, shown on its own (checked below)
        model = (referee if kind in FROM_REFEREE else bot).validate_python
        if kind in TAGGED:
            message = {k: v for k, v in message.items() if k != "table"}
        if whole:
            try:
                model(message)
            except ValueError as exc:
                bad.append(f"{where}: {exc}")
        else:
            from protocol import messages as m

            cls = {"hello": m.HelloMsg, "event": m.EventMsg, "request": m.RequestMsg, "game_over": m.GameOverMsg,
                   "ready": m.ReadyMsg, "action": m.ActionMsg, "bye": m.ByeMsg}[kind]
            unknown = set(message) - set(cls.model_fields)
            if unknown:
                bad.append(f"{where}: no such field {sorted(unknown)}")
        if kind == "hello" and message.get("protocol", PROTOCOL_VERSION) != PROTOCOL_VERSION:
            bad.append(f"{where}: protocol {message['protocol']}, the referee speaks {PROTOCOL_VERSION}")
    assert not bad, "\n".join(bad)


def test_every_referee_message_in_the_docs_has_the_fields_the_referee_sends(sent_lines):
    """Field by field, as sent: a message (or event, or request state) in the docs has exactly
    the keys of one the referee sent of its kind; an abbreviated one, a part of them."""
    sent: dict[str, set[frozenset[str]]] = {}
    for line in sent_lines:
        sent.setdefault(line["type"], set()).add(keys(line))
        if line["type"] == "event":
            sent.setdefault("event:" + line["event"]["type"], set()).add(keys(line["event"]))
        if line["type"] == "request":
            sent.setdefault("state:" + line["decision"], set()).add(keys(line["state"]))
        if line["type"] == "game_over":
            sent.setdefault("outcome", set()).add(keys(line["outcome"]))
    assert {"hello", "event", "request", "game_over"} <= set(sent)
    bad = []

    def check(where: str, kind: str, value: dict, whole: bool) -> None:
        have = keys(value)
        if kind not in sent:
            bad.append(f"{where}: the referee sent no {kind} in three real games")
        elif whole and have not in sent[kind]:
            closest = min(sent[kind], key=lambda s: len(s ^ have))
            bad.append(f"{where}: {kind} with fields {sorted(have)}; the referee sends "
                       f"{sorted(closest)} (missing {sorted(closest - have)}, extra {sorted(have - closest)})")
        elif not whole and not any(have <= s for s in sent[kind]):
            bad.append(f"{where}: {kind} fields {sorted(have)} are not among those the referee sends")

    for where, message, whole in doc_messages():
        kind = message.get("type")
        if kind in FROM_BOT:
            continue
        if kind not in FROM_REFEREE:  # an event body on its own
            check(where, f"event:{kind}", message, whole)
            continue
        check(where, kind, message, whole)
        if kind == "event" and message.get("event"):
            check(where, "event:" + message["event"]["type"], message["event"], whole)
        if kind == "request" and message.get("state"):
            check(where, "state:" + message["decision"], message["state"], whole)
        if kind == "game_over" and message.get("outcome"):
            check(where, "outcome", message["outcome"], whole)
    assert not bad, "\n".join(bad)


# -- docs/debugging.md: what a re-asked bot gets after request N --------------------------------


@pytest.fixture(scope="module")
def logged_game(tmp_path_factory) -> Path:
    """Played once per test run: the tests only read it (``ask`` without ``--from`` writes nothing)."""
    def build(folder):
        bot = f"{sys.executable} {LOGGING_BOT}"
        res = subprocess.run([sys.executable, "-m", "referee", "play", "pegs-and-jokers", "--players", "4",
                              "--seed", "1", "--bot", f"{bot} 1", "--bot", f"{bot} 2", "--record",
                              str(folder / "g.jsonl"), "-q"], capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert res.returncode == 0, res.stderr

    return built_once(tmp_path_factory, "docs-logged-game", build) / "g.jsonl"


def lines_after_request(record: Path, n: int, reply: str, tmp_path: Path, seed: int = 1) -> tuple[int, list[dict]]:
    """`referee ask RECORD n` with logging_bot answering ``reply``: its exit status and the
    lines the bot read after request n."""
    err = tmp_path / f"err-{n}-{reply}"
    res = subprocess.run([sys.executable, "-m", "referee", "ask", str(record), str(n), "--bot",
                          f"{sys.executable} {LOGGING_BOT} {seed} --reply {reply}", "--stderr-dir", str(err)],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    (log,) = err.iterdir()
    got = [json.loads(line) for line in log.read_text().splitlines()]
    at = next(i for i, m in enumerate(got) if m["type"] == "request" and m["id"] == n)
    return res.returncode, got[at + 1:]


def test_ask_sends_no_game_over_after_a_legal_reply_mid_game(logged_game, tmp_path):
    code, after = lines_after_request(logged_game, 5, "last", tmp_path)
    assert code == 0
    # Perhaps the events of its move (if it reads them before it is stopped); never more.
    assert {m["type"] for m in after} <= {"event"}, after
    assert all(m["event"]["type"] != "game_over" for m in after)
    assert "but no other request\n  and no `game_over`" in (ROOT / "docs" / "debugging.md").read_text()


def test_ask_sends_game_over_after_a_refused_reply(logged_game, tmp_path):
    code, after = lines_after_request(logged_game, 5, "invalid", tmp_path)
    assert code == 1
    assert [m["type"] for m in after] == ["game_over"]
    assert after[0]["outcome"]["status"] == "forfeit" and after[0]["outcome"]["reason"] == "invalid_action"
    assert after[0]["result"] == "loss"


def test_ask_sends_game_over_after_a_legal_reply_that_ends_the_game(logged_game, tmp_path):
    decisions = [json.loads(line) for line in logged_game.read_text().splitlines()
                 if json.loads(line)["record"] == "decision"]
    last = decisions[-1]
    # The bot of that seat in the game, with its seed (1 for team 0, 2 for team 1): it replies as it did.
    code, after = lines_after_request(logged_game, last["n"], "random", tmp_path, seed=1 + last["seat"] % 2)
    assert code == 0
    assert after[-1]["type"] == "game_over" and after[-1]["outcome"]["status"] == "win"
    assert [m["event"]["type"] for m in after[:-1]][-1] == "game_over"  # the game's last events first
