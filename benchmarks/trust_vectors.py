#!/usr/bin/env python3
"""Issue #28's vectors that a test cannot show working on the new code, tried on a checkout.

usage: benchmarks/trust_vectors.py CHECKOUT   (CHECKOUT/.venv has the referee installed)

For example, beside the commit before the #28 work and today's:

    git worktree add /tmp/old 916cd0e && (cd /tmp/old && python3 -m venv .venv && .venv/bin/pip install -q -e .)
    .venv/bin/python benchmarks/trust_vectors.py /tmp/old    # 31 WORKS, 2 BLOCKED, 1 N/A
    .venv/bin/python benchmarks/trust_vectors.py .           # 0 WORKS, 34 BLOCKED

Prints one line per vector: WORKS (the attack succeeds) or BLOCKED, with a short reason.
Harmless: the "record is executable" probe runs `id` into a marker file in a temp dir;
the symlink target is a temp dir; hostile files run under a timeout and a 2 GB address cap.
"""
from __future__ import annotations

import json
import os
import re
import resource
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

CHECKOUT = Path(sys.argv[1]).resolve()
PY = str(CHECKOUT / ".venv" / "bin" / "python")
HERE = Path(__file__).resolve().parents[1]  # this checkout
# The hostile bot lives only in the new tree; a bot is just a program, so both trees use this one.
HOSTILE = HERE / "sample_bots" / "misbehaving" / "hostile_text.py"
RANDOM = CHECKOUT / "sample_bots" / "random_bot.py"
TMP = Path(tempfile.mkdtemp(prefix="trust-vectors-"))
results: list[tuple[str, bool | None, str]] = []


def cap():
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def referee(*args, timeout=240, cwd=None):
    try:
        p = subprocess.run([PY, "-m", "referee", *map(str, args)], capture_output=True, cwd=cwd or TMP,
                           timeout=timeout, preexec_fn=cap)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return "timeout", e.stdout or b"", e.stderr or b""


def say(name, works, why):
    results.append((name, works, why))
    print(f"{'WORKS  ' if works else 'BLOCKED' if works is False else 'N/A    '} {name}: {why}", flush=True)


def bot(path, *args):
    return shlex.join([sys.executable, str(path), *map(str, args)])


def play(record, *bots, extra=()):
    args = ["play", "back-alley", "--seed", 5, "--record", record, "--sandbox", "off", "-q", *extra]
    for b in bots:
        args += ["--bot", b]
    return referee(*args)


def short(rc, err):
    line = err.decode("utf-8", "replace").strip().splitlines()
    return f"exit {rc}" + (f", {line[-1][:110]!r}" if line else "")


# ---------------------------------------------------------------- 2. a record is executable
PROBE = TMP / "probe" / "probe.py"
PROBE.parent.mkdir()
PROBE.write_text(
    "import os, resource, subprocess, sys\n"
    "marker = sys.argv[1]\n"
    "try:\n"
    "    with open(marker, 'a') as f:\n"
    "        f.write(subprocess.run(['id'], capture_output=True, text=True).stdout.strip()\n"
    "                + ' as=' + str(resource.getrlimit(resource.RLIMIT_AS)[0]) + '\\n')\n"
    "except OSError as e:\n"
    "    print('PROBE contained:', e, file=sys.stderr)\n"
    "sys.exit(0)\n")
genuine = TMP / "genuine.jsonl"
rc, out, err = play(genuine, bot(RANDOM, 1), bot(RANDOM, 2))
assert rc == 0, err


def crafted(marker: Path) -> Path:
    lines = genuine.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    unleashed = {"sandbox": "off", "memory_mb": None, "max_processes": None, "cpu_s": None}
    for seat in header["seats"]:
        seat["command"] = [sys.executable, str(PROBE), str(marker)]
        seat["limits"] = {**(header.get("limits") or {}), **unleashed}
    header["limits"] = {**(header.get("limits") or {}), **unleashed}
    header["sandbox"] = "off"
    path = marker.with_suffix(".jsonl")
    path.write_bytes(b"\n".join([json.dumps(header).encode(), *lines[1:]]))
    return path


def probe_ran(marker: Path) -> str | None:
    return marker.read_text().splitlines()[0] if marker.exists() else None


m = TMP / "m2a"
rec = crafted(m)
rc, out, err = referee("ask", rec, 1, "--from", "--record", TMP / "new2a.jsonl", "--sandbox", "required")
ran = probe_ran(m)
say("2a ask --from runs the record's commands (--sandbox required)", ran is not None,
    f"host probe wrote: {ran}" if ran else short(rc, err))

m = TMP / "m2b"
rec = crafted(m)
probe = bot(PROBE, m)
rc, out, err = referee("ask", rec, 1, "--from", "--record", TMP / "new2b.jsonl", "--bot", probe, "--bot", probe,
                       "--sandbox", "required")
ran = probe_ran(m)
say("2b ask --from --bot X --sandbox required: record's seat limits turn sandbox off / lift caps",
    ran is not None, f"probe ran unsandboxed: {ran}" if ran else short(rc, err))

m = TMP / "m2c"
rec = crafted(m)
rc, out, err = referee("ask", rec, 1, "--from", "--record", TMP / "new2c.jsonl", "--bots-from-record",
                       "--sandbox", "required")
ran = probe_ran(m)
if b"no such option" in err.lower() or b"No such option" in err:
    say("2c ask --from --bots-from-record --sandbox required: record lowers the sandbox", None, "no such flag here")
else:
    say("2c ask --from --bots-from-record --sandbox required: record lowers the sandbox", ran is not None,
        f"probe ran unsandboxed: {ran}" if ran else short(rc, err))

m = TMP / "m2d"
rec = crafted(m)
rc, out, err = referee("ask", rec, 3, "--bot", bot(PROBE, m), "--sandbox", "required")
ran = probe_ran(m)
say("2d ask N --bot X --sandbox required (no --from): record's limits turn the sandbox off",
    ran is not None, f"probe ran unsandboxed: {ran}" if ran else short(rc, err))

# ---------------------------------------------------------------- 3. bot text on the terminal
BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]


def controls(data: bytes) -> list[str]:
    text = data.decode("utf-8", "replace")
    found = []
    if "\x1b" in text:
        found.append("ESC")
    if "\x07" in text:
        found.append("BEL")
    if any(0x80 <= ord(c) <= 0x9F for c in text):
        found.append("C1")
    if any(c in text for c in BIDI):
        found.append("bidi")
    return found


def escapes(name, rc, out, err):
    found = controls(out + err)
    say(name, bool(found), f"raw {'+'.join(found)} in output ({short(rc, b'')})" if found
        else f"no control byte in {len(out + err)} bytes of output ({short(rc, b'')})")


recs = {}
for fault in ("key", "type", "output"):
    recs[fault] = TMP / f"hostile-{fault}.jsonl"
    rc, out, err = play(recs[fault], bot(HOSTILE, "--fault", fault), bot(RANDOM, 2))
    rc, out, err = referee("play", "back-alley", "--seed", 5, "--record", TMP / f"hostile-{fault}-2.jsonl",
                           "--sandbox", "off", "--bot", bot(HOSTILE, "--fault", fault), "--bot", bot(RANDOM, 2))
    escapes(f"3a play (fault {fault}: parser echo / refused output, stderr tail, name)", rc, out, err)
rc, out, err = play(TMP / "hostile-q.jsonl", bot(HOSTILE, "--fault", "type"), bot(RANDOM, 2))
escapes("3b play --quiet (fault line)", rc, out, err)
rc, out, err = referee("replay", recs["key"])
escapes("3c replay (default view)", rc, out, err)
rc, out, err = referee("replay", recs["key"], "--summary")
escapes("3c replay --summary", rc, out, err)
rc, out, err = referee("ask", recs["output"], 1, "--bot", bot(HOSTILE, "--fault", "output", "--after", 0),
                       "--sandbox", "off")
escapes("3d ask (reply, verdict, stderr tail)", rc, out, err)
rc, out, err = referee("ask", recs["key"], 1, "--from", "--record", TMP / "hostile-from.jsonl", "--sandbox", "off",
                       "--bot", bot(HOSTILE, "--fault", "key"), "--bot", bot(RANDOM, 2))
escapes("3e ask --from (new game's fault, stderr)", rc, out, err)
rc, out, err = referee("run", "--game", "back-alley", "-e", f"h={bot(HOSTILE, '--fault', 'type')}",
                       "-e", f"r={bot(RANDOM, 1)}", "-n", 1, "--output", TMP / "hostile-run", "--seed", 1,
                       "--sandbox", "off", timeout=300)
escapes("3f run (fault lines)", rc, out, err)
rc, out, err = referee("report", TMP / "hostile-run", "--html", TMP / "hostile-run.html")
escapes("3g report", rc, out, err)

# ---------------------------------------------------------------- 4. report trusts unauthenticated files
run_dir = TMP / "run4"
rc, out, err = referee("run", "--game", "back-alley", "-e", f"a={bot(RANDOM, '{seed}')}", "-e",
                       f"b={bot(RANDOM, '{seed}')}", "-n", 2, "--output", run_dir, "--seed", 1, "--sandbox", "off",
                       "-q", timeout=300)
assert rc == 0, err


def variant(name, edit):
    d = TMP / f"run4-{name}"
    shutil.copytree(run_dir, d, symlinks=True)
    edit(d)
    page = d / "page.html"
    rc, out, err = referee("report", d, "--html", page)
    return rc, out, err, (page.read_text(errors="replace") if page.exists() else "")


def lines_of(d):
    return (d / "results.jsonl").read_text().splitlines()


def edit_score(d):
    ls = lines_of(d)
    first = json.loads(ls[0])
    first["scores"][0] = 31337
    ls[0] = json.dumps(first)
    (d / "results.jsonl").write_text("\n".join(ls) + "\n")


def forge_before(d):
    ls = lines_of(d)
    forged = json.loads(ls[0])
    forged["scores"][0] = 31338
    forged["mac"] = "0" * 64
    (d / "results.jsonl").write_text("\n".join([json.dumps(forged), *ls]) + "\n")


def edit_standings(d):
    s = json.loads((d / "standings.json").read_text())
    s["entrants"][0]["wins"] = 4242
    s["entrants"][0]["points"] = 4242.0
    (d / "standings.json").write_text(json.dumps(s))


def delete_line(d):
    ls = lines_of(d)
    (d / "results.jsonl").write_text("\n".join(ls[:1] + ls[2:]) + "\n")


rc, out, err, page = variant("score", edit_score)
say("4a report publishes an edited score (31337)", "31337" in page, short(rc, err))
rc, out, err, page = variant("forged", forge_before)
say("4b report publishes a forged line placed before the genuine one (31338)", "31338" in page, short(rc, err))
rc, out, err, page = variant("standings", edit_standings)
say("4c report publishes an edited standings.json (4242)", "4242" in page, short(rc, err))
rc, out, err, page = variant("deleted", delete_line)
noticed = bool(re.search(r"line[s]? deleted|deleted line", page + err.decode(errors="replace"), re.I))
say("4d report says nothing of a deleted line", not noticed, short(rc, err))

# ---------------------------------------------------------------- 5. hostile files
def internal(rc, err):
    return rc == 70 or rc == "timeout" or b"Traceback" in err or b"internal error" in err.lower() or (
        isinstance(rc, int) and rc < 0)


def hostile(name, rc, out, err):
    say(name, internal(rc, err), short(rc, err))


tdir = TMP / "t5"
tdir.mkdir()


def tournament(body: str) -> Path:
    path = tdir / f"t{len(list(tdir.iterdir()))}.toml"
    path.write_text(f'game = "back-alley"\ngames_per_pairing = 1\nsandbox = "off"\n{body}\n'
                    f'[[entrants]]\nname = "a"\ncommand = {json.dumps(bot(RANDOM, 1))}\n'
                    f'[[entrants]]\nname = "b"\ncommand = {json.dumps(bot(RANDOM, 2))}\n')
    return path


def dry(path, *extra):
    return referee("run", path, "--output", tdir / f"out-{path.stem}", "--dry-run", *extra, timeout=60)


deep = "x = " + "[" * 5000 + "]" * 5000
hostile("5a tournament file nested 5,000 deep", *dry(tournament(deep)))
hostile("5b 5,000-digit seed", *dry(tournament("seed = " + "7" * 5000)))
hostile("5c /dev/zero as the tournament file", *referee("run", "/dev/zero", "--output", tdir / "o5c", "--dry-run",
                                                          timeout=60))
hostile("5d /dev/urandom as secret_file", *dry(tournament('secret_file = "/dev/urandom"')))
hostile("5e /dev/zero as deals", *dry(tournament('deals = "/dev/zero"')))
hostile("5f /dev/zero as a record (replay)", *referee("replay", "/dev/zero", "--verify", timeout=60))
fifo = TMP / "fifo.jsonl"
os.mkfifo(fifo)
hostile("5g a FIFO as a record (replay hangs)", *referee("replay", fifo, timeout=20))
t = tournament("")
hostile("5h a FIFO as the tournament file", *referee("run", fifo, "--output", tdir / "o5h", "--dry-run", timeout=20))
# an output-folder file that is a device: results.jsonl as /dev/zero's device node, then resume
d = TMP / "run5-dev"
shutil.copytree(run_dir, d, symlinks=True)
(d / "results.jsonl").unlink()
os.mknod(d / "results.jsonl", stat.S_IFCHR | 0o644, os.makedev(1, 5))
hostile("5i results.jsonl is /dev/zero's device node (resume)",
        *referee("run", "--game", "back-alley", "-e", f"a={bot(RANDOM, '{seed}')}", "-e", f"b={bot(RANDOM, '{seed}')}",
                 "-n", 2, "--output", d, "--seed", 1, "--sandbox", "off", "-q", timeout=60))


def header_edit(name, edit, line_edit=None) -> Path:
    lines = genuine.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    edit(header)
    body = lines[1:]
    if line_edit:
        body = [line_edit(x) for x in body]
    path = TMP / f"{name}.jsonl"
    path.write_bytes(b"\n".join([json.dumps(header).encode(), *body]))
    return path


no_seats = header_edit("noseats", lambda h: h.__setitem__("seats", []))
hostile("5j replay --request 3 --history, header with no seats", *referee("replay", no_seats, "--request", 3,
                                                                           "--history"))
def seat99(line: bytes) -> bytes:
    if b'"record":"decision"' in line and b'"n":3,' in line:
        return re.sub(rb'"seat":\d+', b'"seat":99', line)
    return line


s99 = header_edit("seat99", lambda h: None, seat99)
hostile("5k replay --request 3 --history, a decision for seat 99", *referee("replay", s99, "--request", 3,
                                                                             "--history"))
nan = header_edit("nan", lambda h: None, lambda x: re.sub(rb'"ms":[0-9.]+', b'"ms":NaN', x))
hostile("5l replay --html on a record with \"ms\": NaN", *referee("replay", nan, "--html", TMP / "nan.html"))
for label, seats in (("no seats", []), ("100 seats", None)):
    def edit(h, seats=seats):
        h["seats"] = seats if seats is not None else [dict(h["seats"][i % 4], seat=i) for i in range(100)]
    r = header_edit(f"verify-{len(seats) if seats is not None else 100}", edit)
    rc, out, err = referee("replay", r, "--verify")
    say(f"5m --verify on a header with {label} says OK", rc == 0, short(rc, out + err))

# ---------------------------------------------------------------- 6. writes follow a link out of the folder
d = TMP / "run6"
shutil.copytree(run_dir, d, symlinks=True)
target = TMP / "link-target"
target.mkdir()
shutil.rmtree(d / "records")
(d / "records").symlink_to(target)
rc, out, err = referee("run", "--game", "back-alley", "-e", f"a={bot(RANDOM, '{seed}')}", "-e",
                       f"b={bot(RANDOM, '{seed}')}", "-n", 3, "--output", d, "--seed", 1, "--sandbox", "off", "-q",
                       timeout=300)
written = sorted(p.name for p in target.iterdir())
say("6a a resume writes through records -> outside dir", bool(written),
    f"wrote {written} outside" if written else short(rc, err))

# report writes replay pages beside the records: records -> a folder elsewhere holding the genuine records
d = TMP / "run6b"
shutil.copytree(run_dir, d, symlinks=True)
target = TMP / "link-target-b"
shutil.copytree(d / "records", target)
for page in target.glob("*.html"):
    page.unlink()
shutil.rmtree(d / "records")
(d / "records").symlink_to(target)
rc, out, err = referee("report", d, "--html", TMP / "run6b.html")
written = sorted(p.name for p in target.glob("*.html"))
say("6b report writes replay pages through records -> outside dir", bool(written),
    f"wrote {written} outside" if written else short(rc, err))

print(f"\n{sum(1 for r in results if r[1])} WORKS, {sum(1 for r in results if r[1] is False)} BLOCKED, "
      f"{sum(1 for r in results if r[1] is None)} N/A  ({CHECKOUT})")
