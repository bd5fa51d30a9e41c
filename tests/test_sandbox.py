"""The bubblewrap sandbox holds against a bot that tries every known way out.

``sample_bots/misbehaving/escape_probe.py`` tries each vector (docs in the
probe) and reports one ``PROBE`` line per attempt on stderr, which the
referee keeps in its stderr folder.  Sandboxed (``Limits(sandbox="required")``)
every attempt must fail, and the probe must have reported every vector (so a
probe that silently skips one fails the test).  The same probe run
unsandboxed (the control) succeeds at many of them, so the sandboxed tests
cannot pass because the probe is unable.

Checked from outside as well: the loopback and abstract-socket listeners the
test opens get no connection; the daemon the probe starts (alive at
``game_over``) is gone after the game; no memo file appears on the host; the
tournament's ``results.jsonl`` and the records are unchanged; the secrets
(the game seed, a token in the referee's environment) appear nowhere in what
the probe saw.

Real processes throughout: every game is a real ``run_match`` or tournament.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from referee.match.record import read_record
from referee.match.runner import run_match
from referee.match.types import BotSpec, FaultReason, Limits
from referee.match.verify import verify_record
from tournaments.config import new_secret, parse, resolve
from tournaments.results import parse_results
from tournaments.runner import run_tournament

ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "sample_bots"
PROBE = BOTS / "misbehaving" / "escape_probe.py"
SEED = 8734512390871  # in the record header: the probe must not find it
SECRET_ENV = "ESCAPE_PROBE_SECRET"
SANDBOXED = Limits(sandbox="required", handshake_s=20, decision_s=5)
UNSANDBOXED = dataclasses.replace(SANDBOXED, sandbox="off")
MEMO_PLACES = (Path("/tmp"), Path("/dev/shm"), Path("/var/tmp"))

# What the probe always tries (see its docstring); the per-argument vectors are added by ``expected``.
PER_PROCESS = ("fd_list", "fd_read", "fd_write", "cmdline", "environ", "mem_read", "mem_write", "ptrace")
ALWAYS = {
    "uid", "capabilities", "etc_shadow", "list_root", "proc1_root", "write_own_program",
    *(f"{who}_{what}" for who in ("parent", "others") for what in PER_PROCESS),
    "others_signal", "others_root", "unshare_userns", "abstract_socket",
}


# -- the scene: a probe in a folder of its own, secrets, listeners ----------------------------


@dataclass
class Scene:
    """One test's probe copy, folders, secrets and listeners."""

    tmp: Path
    bot_dir: Path  # the probe's own folder (bound read-only in the sandbox)
    probe: Path
    work: Path  # the bots' working folder
    home: Path  # $HOME of the referee (and of unsandboxed bots)
    key: str  # memo key: names the memo files
    marker: str  # in the daemon's command line
    secret: str  # in the referee's environment
    tcp: socket.socket
    unix: socket.socket
    unix_name: str

    @property
    def port(self) -> int:
        return self.tcp.getsockname()[1]

    def args(self, *, read: dict[str, Path], append: dict[str, Path], gentle: bool = False,
             tag: str | None = None) -> list[str]:
        out = []
        for label, path in read.items():
            out += ["--read", f"{label}={path}"]
        for label, path in append.items():
            out += ["--append", f"{label}={path}"]
        out += ["--connect", f"tcp=127.0.0.1:{self.port}", "--unix", f"test={self.unix_name}",
                "--memo", self.key, "--daemon", self.marker,
                "--needle-hex", str(SEED).encode().hex(), "--needle-hex", self.secret.encode().hex()]
        if tag is not None:
            out += ["--tag", tag]
        return out + (["--gentle", "--peers", "3"] if gentle else [])  # the 3 other probes of its game

    def bot(self, args: list[str], **spec) -> BotSpec:
        return BotSpec("probe", (sys.executable, str(self.probe), *args), cwd=str(self.work), **spec)

    def tcp_connections(self) -> list[bytes]:
        """What was sent on each connection the TCP listener accepted."""
        got = []
        self.tcp.setblocking(False)
        while True:
            try:
                conn, _ = self.tcp.accept()
            except BlockingIOError:
                return got
            with conn:
                conn.settimeout(2)
                got.append(conn.recv(200))

    def unix_connections(self) -> int:
        self.unix.setblocking(False)
        n = 0
        while True:
            try:
                self.unix.accept()[0].close()
            except BlockingIOError:
                return n
            n += 1

    def memos_on_host(self) -> list[Path]:
        places = (*MEMO_PLACES, self.work, self.home, self.bot_dir)
        return sorted(p for place in places if place.is_dir() for p in place.glob(f"escape-memo-{self.key}-*"))


def daemons(marker: str) -> list[int]:
    """Pids on the host whose command line holds ``marker``."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    out.append(int(entry))
        except OSError:
            continue
    return out


@pytest.fixture
def scene(tmp_path, monkeypatch):
    bot_dir, work, home = tmp_path / "bot", tmp_path / "work", tmp_path / "home"
    for d in (bot_dir, work, home):
        d.mkdir()
    probe = bot_dir / PROBE.name
    shutil.copy(PROBE, probe)
    secret = "secret-" + uuid.uuid4().hex
    monkeypatch.setenv(SECRET_ENV, secret)
    monkeypatch.setenv("HOME", str(home))  # unsandboxed bots write their memo here, not in ~
    tcp = socket.create_server(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix_name = "escape-test-" + uuid.uuid4().hex
    unix.bind("\0" + unix_name)
    unix.listen(8)
    s = Scene(tmp_path, bot_dir, probe, work, home, uuid.uuid4().hex[:16], "escape-daemon-" + uuid.uuid4().hex,
              secret, tcp, unix, unix_name)
    yield s
    tcp.close()
    unix.close()
    for pid in daemons(s.marker):  # the control's daemons survive their game: they are ours to end
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for place in MEMO_PLACES:
        for p in place.glob(f"escape-memo-{s.key}-*"):
            p.unlink(missing_ok=True)


# -- reading the probe's reports ----------------------------------------------------------------


@dataclass
class Probe:
    """One probe process's stderr: its PROBE reports by vector, its NOTE lines."""

    where: str
    text: str
    reports: dict[str, dict]
    notes: dict[str, dict]

    @classmethod
    def read(cls, path: Path) -> Probe:
        text = path.read_text(errors="replace")
        reports: dict[str, dict] = {}
        notes: dict[str, dict] = {}
        for line in text.splitlines():
            if line.startswith("PROBE "):
                r = json.loads(line[len("PROBE "):])
                assert r["vector"] not in reports, f"{path}: {r['vector']} reported twice"
                reports[r["vector"]] = r
            elif line.startswith("NOTE "):
                n = json.loads(line[len("NOTE "):])
                notes[n["note"]] = n
        return cls(str(path), text, reports, notes)

    def ok(self, vector: str) -> bool:
        return self.reports[vector]["ok"]

    def escapes(self) -> list[str]:
        return [f"{v}: {r['detail']}" + (f" (found {r['needles']})" if "needles" in r else "")
                for v, r in sorted(self.reports.items()) if r["ok"]]


def expected(read: dict, append: dict) -> set[str]:
    return {*ALWAYS, *(f"read:{x}" for x in read), *(f"append:{x}" for x in append),
            "connect:tcp", "connect_unix:test", "memo_seen"}


def probes_in(stderr_dir: Path) -> list[Probe]:
    return [Probe.read(p) for p in sorted(stderr_dir.rglob("seat*.log"))]


def assert_contained(probes: list[Probe], vectors: set[str], scene: Scene, secrets: tuple[str, ...] = ()) -> None:
    """Every probe ran every vector, none escaped, none saw a secret, and the daemon lived to game over."""
    assert probes
    holes = []
    for p in probes:
        assert set(p.reports) == vectors, (p.where, sorted(set(p.reports) ^ vectors), p.text[-2000:])
        holes += [f"{p.where}: {e}" for e in p.escapes()]
        for secret in (str(SEED), scene.secret, *secrets):
            if secret in p.text:
                holes.append(f"{p.where}: saw the secret {secret!r}")
        assert p.notes["daemon_started"]["pid"] > 0 and p.notes["daemon_at_game_over"]["alive"], p.where
        assert p.notes["memo_written"]["wrote"], p.where  # it had somewhere to write: /tmp is private
    assert not holes, "escapes from the sandbox:\n" + "\n".join(holes)


def assert_no_daemon(marker: str, within_s: float = 3.0) -> None:
    deadline = time.monotonic() + within_s
    while (left := daemons(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"the probe's daemon outlived the game: pids {left}"


def assert_left_no_trace(scene: Scene) -> None:
    assert scene.memos_on_host() == []
    assert scene.tcp_connections() == []
    assert scene.unix_connections() == 0
    assert_no_daemon(scene.marker)


# -- one game -------------------------------------------------------------------------------------


def game_layout(scene: Scene):
    """A record, a stderr folder and a tournament-like output folder, all inside the probe's own
    folder, which the sandbox binds: they must be hidden even there."""
    out = scene.bot_dir / "out"
    (out / "records").mkdir(parents=True)
    results = out / "results.jsonl"
    results.write_text(json.dumps({"game_id": 0, "seed": SEED, "secret": scene.secret}) + "\n")
    old_record = out / "records" / "000000.jsonl"
    old_record.write_text(json.dumps({"record": "header", "seed": SEED}) + "\n")
    record = scene.bot_dir / "records" / "game.jsonl"
    stderr = scene.bot_dir / "stderr"
    read = {"record": record, "stderr": stderr, "output": out, "results": results, "old_record": old_record}
    append = {"record": record, "results": results, "old_record": old_record}
    return out, record, stderr, read, append


async def test_a_sandboxed_probe_finds_nothing_and_can_do_nothing(scene):
    out, record, stderr, read, append = game_layout(scene)
    before = {p: p.read_bytes() for p in (read["results"], read["old_record"])}
    bots = [scene.bot(scene.args(read=read, append=append)) for _ in range(4)]
    result = await run_match("back-alley", {}, bots, seed=SEED, record_path=record, limits=SANDBOXED,
                             stderr_dir=stderr, hide=(out,))
    assert result.sandbox == "bwrap"
    assert result.fault is None, result.fault
    probes = probes_in(stderr)
    assert len(probes) == 4
    assert_contained(probes, expected(read, append), scene)
    assert_left_no_trace(scene)
    assert {p: p.read_bytes() for p in before} == before
    assert verify_record(read_record(record)).ok


async def test_unsandboxed_the_same_probe_escapes_so_the_sandboxed_test_means_something(scene):
    out, record, stderr, read, append = game_layout(scene)
    bots = [scene.bot(scene.args(read=read, append=append, gentle=True)) for _ in range(4)]
    result = await run_match("back-alley", {}, bots, seed=SEED, record_path=record, limits=UNSANDBOXED,
                             stderr_dir=stderr, hide=(out,))
    assert result.sandbox == "off"
    probes = probes_in(stderr)
    assert len(probes) == 4
    for p in probes:
        assert set(p.reports) == expected(read, append), p.where
    # Every probe, unsandboxed, as any user (these need neither root nor ptrace rights):
    for vector in ("parent_cmdline", "parent_environ", "parent_fd_list", "parent_fd_read", "list_root",
                   "write_own_program", "read:record", "read:results", "read:output", "append:results",
                   "connect:tcp", "connect_unix:test", "others_fd_list", "others_fd_write", "others_signal",
                   "memo_seen"):
        assert all(p.ok(vector) for p in probes), (vector, [p.reports[vector] for p in probes])
    assert any(p.ok("abstract_socket") for p in probes)  # the later ones meet the first one there
    by_seat = {int(Path(p.where).name[len("seat")]): p for p in probes}
    for seat, partner in ((0, 2), (2, 0), (1, 3), (3, 1)):
        assert f'"seat": {partner}' in by_seat[seat].reports["memo_seen"]["detail"], seat
    assert str(SEED) in by_seat[0].reports["parent_fd_read"]["needles"]  # the record, through the referee's fd
    # The referee's own /proc environ is the one it started with; the bots inherit the secret set since.
    assert scene.secret in by_seat[0].reports["others_environ"]["needles"]
    assert scene.memos_on_host(), "unsandboxed memos are left on the host"
    assert len(scene.tcp_connections()) == 4 and scene.unix_connections() == 4


async def test_a_bot_that_opts_in_to_the_network_reaches_loopback_and_one_that_does_not_cannot(scene):
    args = ["--connect", f"tcp=127.0.0.1:{scene.port}", "--unix", f"test={scene.unix_name}"]
    random_bots = [BotSpec("random", (sys.executable, str(BOTS / "random_bot.py"), str(s))) for s in (2, 3)]
    bots = [scene.bot(args, network=True), scene.bot(args), *random_bots]
    stderr = scene.tmp / "stderr"
    result = await run_match("back-alley", {}, bots, seed=3, limits=SANDBOXED, stderr_dir=stderr)
    assert result.sandbox == "bwrap" and result.fault is None, result.fault
    online, offline = (Probe.read(stderr / f"seat{s}-probe.log") for s in (0, 1))
    assert online.ok("connect:tcp") and online.ok("connect_unix:test")  # it shares the host's network
    assert not offline.ok("connect:tcp") and not offline.ok("connect_unix:test")
    got = scene.tcp_connections()
    assert len(got) == 1 and got[0].startswith(b"escape-probe ")
    assert scene.unix_connections() == 1


# -- a tournament: memos across games, the other seating of the same deal ---------------------------


def probe_tournament(scene: Scene, sandbox: str, *, gentle: bool):
    out = scene.bot_dir / "out"  # inside the entrants' own folder: the sandbox must hide it
    results = out / "results.jsonl"
    read = {"output": out, "results": results, "records": out / "records", "stderr": out / "stderr",
            "secret": out / "secret"}
    append = {"results": results}
    secret = new_secret()  # deals the seeds and signs the results: a needle too
    args = [*scene.args(read=read, append=append, gentle=gentle, tag="game{game}-seat{seat}"),
            "--needle-hex", secret.hex().encode().hex()]
    data = {"game": "back-alley", "seed": 5, "games_per_pairing": 1, "jobs": 1, "output": str(out),
            "sandbox": sandbox, "limits": {"handshake_s": SANDBOXED.handshake_s, "decision_s": SANDBOXED.decision_s},
            "entrants": [{"name": n, "command": [sys.executable, str(scene.probe)], "args": args,
                          "cwd": str(scene.work)}
                         for n in ("a", "b")]}
    t = resolve(parse(data), scene.tmp).with_secret(secret)
    assert t.limits.sandbox == sandbox
    games = t.schedule()
    # Two games: both seatings of one duplicate deal, played one after the other.
    assert len(games) == 2 and games[0].seed == games[1].seed and games[0].teams == games[1].teams[::-1]
    return t, out, read, append


async def test_a_sandboxed_tournament_leaves_nothing_for_the_next_game_or_seating(scene):
    t, out, read, append = probe_tournament(scene, "required", gentle=False)
    run = await run_tournament(t)
    assert run.played == 2 and all(r.fault is None for r in run.results.values())
    probes = probes_in(out / "stderr")
    assert len(probes) == 8  # 2 games, 4 seats
    deal_seed = str(t.schedule()[0].seed)
    assert_contained(probes, expected(read, append), scene, secrets=(t.secret.hex(), deal_seed))
    assert_left_no_trace(scene)
    parsed = parse_results((out / "results.jsonl").read_bytes(), secret=t.secret)
    assert parsed.dropped == 0 and sorted(parsed.results) == [0, 1]


async def test_unsandboxed_a_tournament_game_finds_the_memos_of_the_other_seating(scene):
    t, out, read, append = probe_tournament(scene, "off", gentle=True)
    await run_tournament(t)
    second = [Probe.read(p) for p in sorted((out / "stderr" / "000001").glob("*.log"))]
    assert len(second) == 4
    for p in second:
        assert "game0-seat" in p.reports["memo_seen"]["detail"], p.reports["memo_seen"]
        assert p.ok("read:results") and p.ok("append:results") and p.ok("read:secret")
        assert t.secret.hex() in p.reports["read:secret"]["needles"]


# -- bots that cannot start, and every shipped bot -----------------------------------------------------


def missing_interpreter_script(tmp_path: Path) -> Path:
    script = tmp_path / "bot.sh"
    script.write_text("#!/usr/bin/env no-such-interpreter-zq\n")
    script.chmod(0o755)
    return script


@pytest.mark.parametrize("command, missing", [
    (lambda tmp: ("no-such-program-zq",), "no-such-program-zq"),
    (lambda tmp: (str(tmp / "no-such-bot"), "1"), "no-such-bot"),
    (lambda tmp: (str(missing_interpreter_script(tmp)),), "no-such-interpreter-zq"),
], ids=["on-path", "by-path", "shebang-interpreter"])
async def test_a_bot_whose_program_cannot_be_found_forfeits_naming_it(tmp_path, command, missing):
    others = [BotSpec("random", (sys.executable, str(BOTS / "random_bot.py"), str(s))) for s in range(3)]
    bots = [others[0], BotSpec("missing", command(tmp_path)), *others[1:]]
    result = await run_match("back-alley", {}, bots, seed=1, limits=SANDBOXED)
    assert result.sandbox == "bwrap"
    assert result.outcome.status == "forfeit"
    assert result.fault.seat == 1 and result.fault.reason is FaultReason.SPAWN_FAILED
    assert missing in result.fault.message, result.fault.message


def _c_bot(tmp_path: Path) -> tuple[str, ...]:
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler (cc not on PATH); .ci/run installs one")
    exe = tmp_path / "c-bot" / "random_bot"
    exe.parent.mkdir()
    subprocess.run([cc, "-std=c99", "-O2", "-o", str(exe), str(BOTS / "c" / "random_bot.c")],
                   check=True, capture_output=True, text=True)
    return (str(exe),)


def _node_bot(tmp_path: Path) -> tuple[str, ...]:
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("Node.js is not installed (node/nodejs not on PATH); .ci/run installs it")
    return (node, str(BOTS / "js" / "random_bot.js"))


SHIPPED = {  # id: (game, options, command without the seed)
    "random_bot.py": ("back-alley", {}, lambda tmp: (sys.executable, str(BOTS / "random_bot.py"))),
    "python_random_bot.py": ("pegs-and-jokers", {"players": 4},
                             lambda tmp: (sys.executable, str(BOTS / "python_random_bot.py"))),
    "heuristic/back_alley.py": ("back-alley", {},
                                lambda tmp: (sys.executable, str(BOTS / "heuristic" / "back_alley.py"))),
    "heuristic/schmier.py": ("schmier", {"max_deals": 10},
                             lambda tmp: (sys.executable, str(BOTS / "heuristic" / "schmier.py"))),
    "heuristic/pegs_and_jokers.py": ("pegs-and-jokers", {"players": 4},
                                     lambda tmp: (sys.executable, str(BOTS / "heuristic" / "pegs_and_jokers.py"))),
    "js/random_bot.js": ("back-alley", {}, _node_bot),
    "c/random_bot.c": ("schmier", {"max_deals": 10}, _c_bot),
}


@pytest.mark.parametrize("bot", sorted(SHIPPED))
async def test_every_shipped_bot_plays_a_whole_game_in_the_sandbox(bot, tmp_path):
    game, options, command = SHIPPED[bot]
    argv = command(tmp_path)
    seats = {"back-alley": 4, "schmier": 6, "pegs-and-jokers": 4}[game]
    bots = [BotSpec(Path(bot).stem, (*argv, str(seat + 1))) for seat in range(seats)]
    record = tmp_path / "game.jsonl"
    result = await run_match(game, options, bots, seed=11, record_path=record,
                             limits=dataclasses.replace(SANDBOXED, decision_s=2))
    assert result.sandbox == "bwrap"
    assert result.fault is None, result.fault
    assert result.outcome.status in ("win", "draw", "aborted") and result.decisions > 0
    check = verify_record(read_record(record))
    assert check.ok, check.message
