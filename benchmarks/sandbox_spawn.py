"""Spawn-to-ready time of a Python bot with and without the bubblewrap sandbox, same run.

    python benchmarks/sandbox_spawn.py [--spawns 30] [--parts 20] [--no-parts] [--games 15] [--no-what-if]

Each spawn goes through the real ``BotProcess``, as the match runner's
handshake does: ``start`` (with, sandboxed, the jail ``_Match._jail``
builds: a cgroup where writable, ``prlimit``, ``bwrap``), one ``hello``
line, wait for the ``ready`` line, then ``aclose`` (close stdin, wait for
the exit, sweep the family, remove the cgroup).  The bot is
``sample_bots/random_bot.py`` run with this interpreter.  Spawns alternate
sandboxed and not, each pair in the other order from the last, so the
machine's drift falls on both settings alike.

Printed per setting: median and p90 wall milliseconds from ``start`` to the
``ready`` line, and of ``aclose``; CPU milliseconds per spawn (this process
plus its reaped children, i.e. the bot and the sandbox's wrappers); and the
ratios sandboxed / unsandboxed.  The paired ratio is the median of the
per-pair ratios.

Unless ``--no-parts``: where the sandbox's extra time goes, each link of the
chain timed alone with ``/usr/bin/true`` as the program (spawned by
``subprocess``, as Trio does): the cgroup join (``sh``), ``prlimit``,
``bwrap`` with the bot's binds (and without its ``/etc`` binds, and with
its namespaces only), all three together, then the bot's interpreter
starting and exiting bare and in the full chain; and the referee-side
Python work per spawn (building the ``bwrap`` command line, making and
removing the cgroup).

Unless ``--games 0``: a game's four bots started at once with this process
pinned to one core, as a tournament worker starts them (``--pin-cores``),
off and sandboxed, and (unless ``--no-what-if``) sandboxed without the
cgroup, with five ``/etc`` binds instead of the allow-list, without
``prlimit``: each a monkeypatch in this process only, to show what a change
would save per game.  The CPU column is the whole of it (cpuacct), so it
is the figure to set beside a tournament's CPU per game.

CPU is counted by a cgroup v1 ``cpuacct`` group this process joins (the
bots and the sandbox's processes with it): ``getrusage`` misses processes
reaped inside a pid namespace, so its column undercounts sandboxed spawns.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import dataclasses
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from machine import cpu_ticks  # noqa: E402  (benchmarks/machine.py)

from protocol import HelloMsg  # noqa: E402
from protocol.codec import encode  # noqa: E402
from protocol.messages import TimeLimits  # noqa: E402
from referee.games import get_game  # noqa: E402
from referee.match import bubblewrap, cgroups, sandbox  # noqa: E402
from referee.match.bot import BotProcess  # noqa: E402
from referee.match.types import BotSpec, Limits  # noqa: E402

BOT = ROOT / "sample_bots" / "random_bot.py"
SPEC = BotSpec(name="random", command=(sys.executable, str(BOT), "1"), cwd=str(ROOT))
LIMITS = Limits()
TRUE = "/usr/bin/true"


def rusage_cpu() -> float:
    """CPU seconds of this process and its reaped descendants so far (getrusage).

    Misses what runs in a pid namespace of its own: a process reaped by the
    namespace's pid 1 (bwrap's) is not added to the outer parents' children
    time, so a sandboxed bot's CPU is not in RUSAGE_CHILDREN."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class CpuAccount:
    """A cgroup v1 ``cpuacct`` group of the benchmark's own: the kernel counts the CPU
    of everything in it, pid namespaces or not (the referee's bot cgroups are in
    the ``memory`` and ``pids`` hierarchies, so bots stay in this one).

    ``open()`` returns None where there is no writable cpuacct hierarchy; then
    only the rusage figures are printed."""

    ROOT = Path("/sys/fs/cgroup/cpuacct")

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def open(cls, tag: str) -> CpuAccount | None:
        path = cls.ROOT / f"referee-bench-{tag}-{os.getpid()}"
        try:
            path.mkdir()
        except OSError:
            return None
        return cls(path)

    def join(self, pid: int) -> None:
        (self.path / "cgroup.procs").write_text(str(pid))

    def seconds(self) -> float:
        return int((self.path / "cpuacct.usage").read_text()) / 1e9

    def close(self) -> None:
        """Move whatever is left (this process) back to the root and remove the group."""
        try:
            for pid in (self.path / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):
                    (self.ROOT / "cgroup.procs").write_text(pid)
            self.path.rmdir()
        except OSError:
            pass


ACCOUNT: CpuAccount | None = None  # this process's, set by main


def _cpu() -> tuple[float, float]:
    """(cpuacct seconds or NaN, rusage seconds) so far."""
    return (ACCOUNT.seconds() if ACCOUNT is not None else float("nan")), rusage_cpu()


def _hello() -> bytes:
    game = get_game("back-alley")
    options = game.normalize_options({})
    seats = game.num_seats(options)
    teams = [[s for s in range(seats) if game.team_of(s, options) == t] for t in range(game.num_teams(options))]
    return encode(HelloMsg(
        game=game.name, rules_version=game.rules_version, options=options, seat=0,
        team=game.team_of(0, options), seats=seats, teams=teams,
        limits=TimeLimits(handshake_ms=int(LIMITS.handshake_s * 1000), decision_ms=int(LIMITS.decision_s * 1000),
                          time_bank_ms=0),
    ))


def _jail() -> bubblewrap.Jail:
    """What ``_Match._jail`` builds for an entrant with no network, ro_paths or dir."""
    return bubblewrap.Jail(scratch_mb=LIMITS.scratch_mb)


async def spawn_once(jail: bubblewrap.Jail | None, hello: bytes, seats: int = 1,
                     spec: BotSpec = SPEC) -> tuple[float, float, float, float]:
    """(start-to-ready s, aclose s, cpuacct CPU s, rusage CPU s) of ``seats`` bots started
    at once through ``BotProcess``, as the runner's handshake does: ready = the last one's
    ``ready``, close = all of them closed."""
    cpu0 = _cpu()
    t0 = time.perf_counter()
    procs = [BotProcess(s, spec, LIMITS, None, jail) for s in range(seats)]

    async def one(proc: BotProcess) -> None:
        await proc.start(nursery)
        await proc.send(hello, LIMITS.handshake_s)
        line = b""
        with trio.fail_after(LIMITS.handshake_s):
            while not line.endswith(b"\n") and (data := await proc.receive_some()):
                line += data
        if b'"ready"' not in line:
            raise SystemExit(f"expected a ready line, got {line[:200]!r}")

    async with trio.open_nursery() as nursery:
        try:
            async with trio.open_nursery() as hs:
                for p in procs:
                    hs.start_soon(one, p)
            t1 = time.perf_counter()
        finally:
            with trio.CancelScope(shield=True):
                async with trio.open_nursery() as closer:
                    for p in procs:
                        closer.start_soon(p.aclose)
                for p in procs:
                    await p.wait_stderr_drained(0.2)
        t2 = time.perf_counter()
        nursery.cancel_scope.cancel()
    cpu1 = _cpu()
    return t1 - t0, t2 - t1, cpu1[0] - cpu0[0], cpu1[1] - cpu0[1]


def _ms(xs: list[float]) -> tuple[float, float]:
    """(median, p90) in ms."""
    xs = sorted(xs)
    return statistics.median(xs) * 1000, xs[min(len(xs) - 1, round(0.9 * (len(xs) - 1)))] * 1000


def big_bot_folder(mb: int) -> BotSpec:
    """The random bot in a folder of its own holding ``mb`` MB more (files of 1 MB), as a bot
    that ships a model or an opening book: the whole folder is its own, bound into its sandbox."""
    folder = Path(tempfile.mkdtemp(prefix="referee-bench-bigbot-"))
    atexit.register(shutil.rmtree, folder, True)
    (folder / "data").mkdir()
    block = os.urandom(1 << 20)
    for i in range(mb):
        (folder / "data" / f"part{i:04d}.bin").write_bytes(block)
    shutil.copy(BOT, folder / "random_bot.py")
    return BotSpec(name="random", command=(sys.executable, str(folder / "random_bot.py"), "1"), cwd=str(folder))


def _before_28() -> tuple[bubblewrap.Jail, dict]:
    """The sandbox as it was before #28: no private view, no seccomp filter, no CPU group."""
    lay = cgroups.layout()
    patch = {"layout": (lambda: dataclasses.replace(lay, cpu=None))} if not isinstance(lay, str) else {}
    return bubblewrap.Jail(scratch_mb=LIMITS.scratch_mb, view=False, seccomp=False), patch


def spawns(n: int, big_mb: int) -> None:
    """Spawn-to-ready of one bot: unsandboxed, the sandbox before #28 and today's (private view,
    seccomp filter, CPU group), for the small bot and for one in a ``big_mb`` MB folder; each
    round runs every setting once, in a rotating order, so drift falls on all alike."""
    hello = _hello()
    before, before_patch = _before_28()
    now = _jail()
    big = big_bot_folder(big_mb) if big_mb else None
    settings: dict[str, tuple[bubblewrap.Jail | None, dict, BotSpec]] = {
        "off": (None, {}, SPEC), "before #28": (before, before_patch, SPEC), "isolated": (now, {}, SPEC)}
    if big is not None:
        settings |= {f"before, {big_mb} MB": (before, before_patch, big), f"isolated, {big_mb} MB": (now, {}, big)}
    names = list(settings)
    for k in names:  # warm-up, discarded: probes, command-resolution caches, page cache, imports
        jail, patch, spec = settings[k]
        with _patched(**patch):
            trio.run(spawn_once, jail, hello, 1, spec)
    res: dict[str, list[tuple[float, float, float, float]]] = {k: [] for k in settings}
    for i in range(n):
        for k in names[i % len(names):] + names[:i % len(names)]:
            jail, patch, spec = settings[k]
            with _patched(**patch):
                res[k].append(trio.run(spawn_once, jail, hello, 1, spec))
    print(f"{'setting':>18} {'ready med':>10} {'ready p90':>10} {'close med':>10} {'close p90':>10} "
          f"{'CPU/spawn':>10} {'rusage CPU':>11}")
    rows = {}
    for k in names:
        ready, close, cpu, ru = zip(*res[k], strict=True)
        rm, rp = _ms(list(ready))
        cm, cp = _ms(list(close))
        c = statistics.mean(cpu) * 1000
        rows[k] = (rm, cm, c)
        print(f"{k:>18} {rm:>7.1f} ms {rp:>7.1f} ms {cm:>7.1f} ms {cp:>7.1f} ms {c:>7.1f} ms "
              f"{statistics.mean(ru) * 1000:>8.1f} ms")

    def ratio(a: str, b: str) -> str:
        paired = statistics.median(x[0] / y[0] for x, y in zip(res[a], res[b], strict=True))
        return (f"{a} / {b}: ready {rows[a][0] / rows[b][0]:.2f}x (paired median {paired:.2f}x), "
                f"{rows[a][0] - rows[b][0]:+.1f} ms ready, {rows[a][2] - rows[b][2]:+.1f} ms CPU")

    print(ratio("before #28", "off"))
    print(ratio("isolated", "before #28") + "   <- target: <= 1.2x")
    if big is not None:
        print(ratio(f"isolated, {big_mb} MB", f"before, {big_mb} MB") + "   <- target: <= 1.2x")
        print(ratio(f"isolated, {big_mb} MB", "before #28") + "   (the big folder against today's small bot)")


# -- where the sandbox's time goes ---------------------------------------------------------


def _run(argv: list[str]) -> None:
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{argv[:3]}... failed ({done.returncode}): {done.stderr.decode()[-300:]}")


def _with_cgroup(rest: list[str]) -> Callable[[], None]:
    def go() -> None:
        cg = cgroups.BotCgroup.create(sandbox.new_bot_id(), 1 << 30, 512)
        try:
            _run([*(cg.join_command() if cg else []), *rest])
        finally:
            if cg is not None:
                cg.remove()
    return go


def _without_etc(argv: list[str]) -> list[str]:
    """A bwrap command line without its ``--ro-bind /etc/...`` mounts."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        if argv[i] == "--ro-bind" and argv[i + 1].startswith("/etc/") and argv.index("--") > i:
            i += 3
            continue
        out.append(argv[i])
        i += 1
    return out


def parts(n: int) -> None:
    jail = _jail()
    prl = sandbox.prlimit_command(LIMITS)
    bw_true = jail.command([TRUE], str(ROOT))
    bw_bot = jail.command(list(SPEC.command), SPEC.cwd)
    bot_exit = [sys.executable, str(BOT), "1"]  # reads an empty stdin and exits
    have_cgroup = cgroups.available() is None
    no_etc = _without_etc(bw_true)
    ns_only = [*bw_true[:bw_true.index("--ro-bind")], "--dev-bind", "/", "/", TRUE]
    cases: dict[str, Callable[[], None]] = {
        "true": lambda: _run([TRUE]),
        "sh -c 'exec true'": lambda: _run(["/bin/sh", "-c", 'exec "$@"', "sh", TRUE]),
        "prlimit true": lambda: _run([*prl, TRUE]),
        "bwrap true": lambda: _run(bw_true),
        f"bwrap true, no /etc binds (-{(len(bw_true) - len(no_etc)) // 3})": lambda: _run(no_etc),
        "bwrap true, namespaces only (bind /)": lambda: _run(ns_only),
        "prlimit bwrap true": lambda: _run([*prl, *bw_true]),
        "bot start+exit": lambda: _run(bot_exit),
        "prlimit bwrap bot start+exit": lambda: _run([*prl, *bw_bot]),
    }
    if have_cgroup:  # the join itself: make the cgroup, sh writes $$ to cgroup.procs, remove it
        cases["cgroup join true"] = _with_cgroup([TRUE])
        cases["cgroup prlimit bwrap true"] = _with_cgroup([*prl, *bw_true])
        cases["cgroup prlimit bwrap bot start+exit"] = _with_cgroup([*prl, *bw_bot])
    for fn in cases.values():  # warm-up
        fn()
    wall: dict[str, list[float]] = {k: [] for k in cases}
    cpu: dict[str, list[float]] = {k: [] for k in cases}
    ru: dict[str, list[float]] = {k: [] for k in cases}
    names = list(cases)
    for i in range(n):  # rotating order
        for k in names[i % len(names):] + names[:i % len(names)]:
            c0, t0 = _cpu(), time.perf_counter()
            cases[k]()
            wall[k].append(time.perf_counter() - t0)
            c1 = _cpu()
            cpu[k].append(c1[0] - c0[0])
            ru[k].append(c1[1] - c0[1])
    print(f"\nwhere the time goes ({n} runs each, spawned by subprocess; cgroups "
          f"{'on' if have_cgroup else 'unavailable: ' + str(cgroups.available())}):")
    print(f"{'':>40} {'wall med':>9} {'wall p90':>9} {'CPU mean':>9} {'rusage':>9}")
    for k in names:
        m, p = _ms(wall[k])
        print(f"{k:>40} {m:>6.1f} ms {p:>6.1f} ms {statistics.mean(cpu[k]) * 1000:>6.1f} ms "
              f"{statistics.mean(ru[k]) * 1000:>6.1f} ms")

    # Referee-side Python work per sandboxed spawn.
    def per_call(fn: Callable[[], object], reps: int = 200) -> float:
        c0 = time.process_time()
        for _ in range(reps):
            fn()
        return (time.process_time() - c0) / reps * 1000

    env = {**os.environ, sandbox.BOT_ID_ENV: "x"}
    print(f"{'Jail.command (bwrap argv, cached resolve)':>40} {'':>20} "
          f"{per_call(lambda: jail.command(list(SPEC.command), SPEC.cwd, env)):>6.2f} ms")
    if have_cgroup:
        def mk_rm() -> None:
            cg = cgroups.BotCgroup.create(sandbox.new_bot_id(), 1 << 30, 512)
            if cg is not None:
                cg.remove()
        print(f"{'cgroup create+remove (in process)':>40} {'':>20} {per_call(mk_rm, 50):>6.2f} ms")
    print(f"{'prlimit_command':>40} {'':>20} {per_call(lambda: sandbox.prlimit_command(LIMITS)):>6.3f} ms")


# -- a game's handshake, and what-ifs --------------------------------------------------------

MINIMAL_ETC = ("passwd", "group", "nsswitch.conf", "ld.so.cache", "localtime")


@contextlib.contextmanager
def _patched(**changes: object):
    """Set module attributes for a what-if (``cgroups.layout``, ``bubblewrap.ETC_ALLOWED``,
    ``sandbox.prlimit_command``), then restore them.  Nothing on disk changes."""
    mods = {"layout": cgroups, "ETC_ALLOWED": bubblewrap, "prlimit_command": sandbox}
    old = {k: getattr(mods[k], k) for k in changes}
    for k, v in changes.items():
        setattr(mods[k], k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            setattr(mods[k], k, v)


def games(n: int, seats: int, what_if: bool) -> None:
    """``seats`` bots started at once on one core, as a pinned tournament worker starts a game's
    bots: the sandbox's cost per game, with the referee as it is and, with ``what_if``,
    without parts of the chain (monkeypatched in this process only)."""
    hello = _hello()
    jail = _jail()
    no_cgroup = {"layout": lambda: "what-if: no cgroup"}
    few_etc = {"ETC_ALLOWED": MINIMAL_ETC}
    no_prlimit = {"prlimit_command": lambda limits: []}
    variants: dict[str, tuple[bubblewrap.Jail | None, dict]] = {"off": (None, {}), "bwrap": (jail, {})}
    if what_if:
        variants |= {
            "bwrap, no cgroup": (jail, no_cgroup),
            f"bwrap, {len(MINIMAL_ETC)} /etc binds": (jail, few_etc),
            "bwrap, no prlimit": (jail, no_prlimit),
            f"bwrap, no cgroup, {len(MINIMAL_ETC)} /etc": (jail, no_cgroup | few_etc),
        }
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(before)})  # the bots inherit it, as a worker's do
    try:
        names = list(variants)
        res: dict[str, list[tuple[float, float, float, float]]] = {k: [] for k in names}
        for i in range(n + 1):  # round 0 is a warm-up, discarded
            for k in names[i % len(names):] + names[:i % len(names)]:
                j, patch = variants[k]
                with _patched(**patch):
                    out = trio.run(spawn_once, j, hello, seats)
                if i:
                    res[k].append(out)
    finally:
        os.sched_setaffinity(0, before)
    print(f"\na game's {seats} bots started at once on one core ({n} per variant, rotating order):")
    print(f"{'':>30} {'ready med':>10} {'close med':>10} {'CPU/game':>9} {'extra CPU':>10} {'extra wall':>11}")
    base_cpu = statistics.mean(x[2] for x in res["off"]) * 1000
    base_wall = statistics.median(x[0] + x[1] for x in res["off"]) * 1000
    for k in names:
        rm, _ = _ms([x[0] for x in res[k]])
        cm, _ = _ms([x[1] for x in res[k]])
        c = statistics.mean(x[2] for x in res[k]) * 1000
        w = statistics.median(x[0] + x[1] for x in res[k]) * 1000
        print(f"{k:>30} {rm:>7.1f} ms {cm:>7.1f} ms {c:>6.1f} ms {c - base_cpu:>+7.1f} ms {w - base_wall:>+8.1f} ms")
    print("extra = against off: CPU (mean) and ready+close wall (median) per game")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spawns", type=int, default=30, help="spawns per setting (default 30)")
    ap.add_argument("--big-mb", type=int, default=100, help="size of the big bot's folder (default 100; 0 skips)")
    ap.add_argument("--parts", type=int, default=20, help="runs per link of the breakdown (default 20)")
    ap.add_argument("--no-parts", action="store_true", help="skip the breakdown")
    ap.add_argument("--games", type=int, default=15, help="4-bot handshakes per variant (default 15; 0 skips)")
    ap.add_argument("--no-what-if", action="store_true", help="only off and bwrap in the 4-bot handshakes")
    args = ap.parse_args()
    if (why := bubblewrap.probe()) is not None:
        raise SystemExit(f"bubblewrap does not work here: {why}")
    from referee.logging import configure_logging
    configure_logging("warning")
    global ACCOUNT
    ACCOUNT = CpuAccount.open("spawn")
    if ACCOUNT is not None:
        ACCOUNT.join(os.getpid())
    try:
        return _main(args)
    finally:
        if ACCOUNT is not None:
            ACCOUNT.close()


def _main(args: argparse.Namespace) -> int:
    idle0, steal0 = cpu_ticks()
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    print(f"python bot spawn-to-ready, BotProcess, {args.spawns} spawns per setting alternating; "
          f"{len(os.sched_getaffinity(0))} cores, load {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    print("CPU = everything's, counted by a cpuacct cgroup around this process" if ACCOUNT is not None
          else "CPU: no writable cpuacct hierarchy here, so NaN; see the rusage column")
    print("rusage = getrusage(SELF) + getrusage(CHILDREN): misses processes reaped inside a pid namespace "
          "(the sandboxed bot)")
    spawns(args.spawns, args.big_mb)
    if not args.no_parts:
        parts(args.parts)
    if args.games:
        games(args.games, 4, not args.no_what_if)
    wall = time.perf_counter() - t0
    idle1, steal1 = cpu_ticks()
    load1 = os.getloadavg()
    print(f"\n{wall:.1f} s; load at the end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}; cores stolen "
          f"{(steal1 - steal0) / wall:.2f}, idle {(idle1 - idle0) / wall:.2f} (cores' worth of the run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
