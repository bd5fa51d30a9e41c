#!/usr/bin/env python3
"""Test bot: tries every known way out of its sandbox, and reports each attempt.

Standard library only, no project imports (copy it anywhere).  It plays
legally (the first legal action), and on ``hello``, before answering, tries
each vector below; at ``game_over`` it looks for the memos other bots left.
Every attempt is one line on stderr::

    PROBE {"vector": "parent_environ", "ok": false, "detail": "..."}

where ``ok`` true means the escape SUCCEEDED: it found something or could do
it.  Lines starting ``NOTE`` are setup facts (memos written, the daemon's pid)
that a test checks from outside.  tests/test_sandbox.py runs it sandboxed
(every ``ok`` must be false) and unsandboxed (several must be true).

Vectors, always tried:

* ``uid``, ``capabilities``: running as root, holding any capability.
* ``etc_shadow``: reading /etc/shadow.  ``list_root``: anything in ``/`` beyond
  the system folders and the folders this bot runs from.  ``proc1_root``: the
  host's files through /proc/1/root.  ``write_own_program``: opening its own
  program for writing (new files in its folder are memos, below).
* ``parent_*`` on the parent process and ``others_*`` on every other process
  it can see in /proc: listing its fds (``fd_list``), reading regular files
  through them (``fd_read``: the referee's record, say), opening its pipes
  and files for writing (``fd_write``: a zero-byte write, proof enough),
  ``cmdline``, ``environ``, reading and writing its memory through
  /proc/PID/mem (``mem_write`` writes back the bytes it read from a
  read-only mapping, so nothing changes), ``ptrace`` (PTRACE_ATTACH then
  detach); ``others_signal`` (kill 0), ``others_root`` (another root through
  /proc/PID/root).
* ``unshare_userns``: making a user namespace (in a child process).
* ``abstract_socket``: meeting another bot at an abstract unix socket.

Vectors the caller names, one per argument:

* ``--read LABEL=PATH``: ``read:LABEL``, reading a file or listing a folder.
* ``--append LABEL=PATH``: ``append:LABEL``, appending to an existing file.
* ``--connect LABEL=HOST:PORT``: ``connect:LABEL``, a TCP connection.
* ``--unix LABEL=NAME``: ``connect_unix:LABEL``, the abstract socket NAME.
* ``--memo KEY``: writes ``escape-memo-KEY-<nonce>`` to /tmp, /dev/shm,
  /var/tmp, the working folder, ``$HOME`` and its own folder; ``memo_seen``
  (at ``game_over``) is any such memo with another nonce: a partner's, or one
  left by an earlier game.  ``--tag TEXT`` goes into the memo (``{game}``, say).
* ``--daemon MARKER``: starts a double-forked ``setsid`` daemon with an empty
  environment and MARKER in its command line, which must not outlive the game.
* ``--needle-hex HEX``: a secret (the seed, a token in the referee's
  environment), hex-encoded so that finding it in a command line that holds
  the probe's own arguments means nothing; every vector says which needles
  it found.
* ``--gentle``: for running unsandboxed on a shared machine: the
  ``others_*`` vectors only target the processes whose command line holds
  the memo key (the other probes), not every process on the host; with
  ``--peers N`` it first waits (up to 5 s) until it sees N of them, as the
  bots of a game start one after the other.
"""

import ctypes
import json
import os
import secrets
import socket
import stat
import sys
import time

PTRACE_ATTACH, PTRACE_DETACH = 16, 17
CLONE_NEWUSER = 0x10000000
WALL = 0x40000000
MEMO_PREFIX = "escape-memo-"
SYSTEM_TOP = {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "dev", "proc", "tmp", "scratch"}
HERE = os.path.dirname(os.path.abspath(__file__))
NONCE = secrets.token_hex(6)


def parse_args(argv):
    opts = {"read": [], "append": [], "connect": [], "unix": [], "needle": [], "memo": None, "daemon": None,
            "tag": None, "gentle": False, "peers": 0}
    i = 0
    while i < len(argv):
        flag = argv[i]
        key = flag[2:]
        if flag == "--gentle":
            opts["gentle"] = True
        elif key in ("read", "append", "connect", "unix") and i + 1 < len(argv):
            opts[key].append(argv[i + 1])
            i += 1
        elif flag == "--needle-hex" and i + 1 < len(argv):
            opts["needle"].append(bytes.fromhex(argv[i + 1]).decode())
            i += 1
        elif flag == "--peers" and i + 1 < len(argv):
            opts["peers"] = int(argv[i + 1])
            i += 1
        elif key in ("memo", "daemon", "tag") and i + 1 < len(argv):
            opts[key] = argv[i + 1]
            i += 1
        i += 1  # anything else (a seed, say) is ignored
    return opts


OPTS = parse_args(sys.argv[1:])


def labelled(text):
    label, _, value = text.partition("=")
    return label, value


def show(data, limit=160):
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    data = str(data)
    return data if len(data) <= limit else data[:limit] + f"...({len(data)} chars)"


def needles_in(data):
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    return [n for n in OPTS["needle"] if n and n in str(data)]


def line(kind, payload):
    sys.stderr.write(f"{kind} {json.dumps(payload, sort_keys=True)}\n")
    sys.stderr.flush()


def report(vector, ok, detail, seen=()):
    payload = {"vector": vector, "ok": bool(ok), "detail": show(detail, 1200)}
    found = sorted(set(n for data in seen for n in needles_in(data)))
    if found:
        payload["needles"] = found
    line("PROBE", payload)


def note(what, **fields):
    line("NOTE", {"note": what, **fields})


def attempt(vector, fn):
    """Run one vector; an exception is a failed escape, with its reason."""
    try:
        ok, detail, seen = fn()
    except Exception as exc:  # noqa: BLE001 - any failure is the answer
        ok, detail, seen = False, f"{type(exc).__name__}: {exc}", ()
    report(vector, ok, detail, seen)


# -- who am I ------------------------------------------------------------------------


def status_field(pid, name):
    with open(f"/proc/{pid}/status") as f:
        for text in f:
            if text.startswith(name + ":"):
                return text.split(":", 1)[1].strip()
    return ""


def v_uid():
    ids = (os.getuid(), os.geteuid(), os.getgid(), os.getegid())
    return 0 in ids, f"uid {ids[0]} euid {ids[1]} gid {ids[2]} egid {ids[3]} groups {os.getgroups()}", ()


def v_capabilities():
    caps = {n: status_field("self", n) for n in ("CapEff", "CapPrm", "CapAmb")}
    return any(int(v or "0", 16) for v in caps.values()), str(caps), ()


# -- files ---------------------------------------------------------------------------


def read_path(path, limit=4096):
    """(ok, detail, data): a file's first bytes, or what the files in a folder hold.

    A folder is a find when any file in it (or below) has something to read:
    a sandbox may show empty stand-ins where it hides what is there."""
    if not os.path.isdir(path):
        with open(path, "rb") as f:
            data = f.read(limit)
        return bool(data), f"{path}: {len(data)} bytes: {show(data)}", data
    names = sorted(os.listdir(path))
    read, failed, seen = [], 0, []
    for folder, _dirs, files in os.walk(path):
        for name in sorted(files)[:50]:
            try:
                with open(os.path.join(folder, name), "rb") as f:
                    data = f.read(limit)
            except OSError:
                failed += 1
                continue
            if data:
                read.append(f"{os.path.relpath(os.path.join(folder, name), path)}: {show(data, 80)}")
                seen.append(data)
        if len(read) >= 5:
            break
    detail = f"{path}: folder listing {names[:20]}; {len(read)} files with content, {failed} unreadable"
    return bool(read), detail + ("; " + " | ".join(read) if read else ""), b" ".join([" ".join(names).encode(), *seen])


def v_read(path):
    def run():
        ok, detail, data = read_path(path)
        return ok, detail, (data,)
    return run


def v_append(path):
    def run():
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)  # no O_CREAT: only a file that exists
        try:
            n = os.write(fd, b"")
            n = os.write(fd, b'{"probe": "appended"}\n')
        finally:
            os.close(fd)
        return n > 0, f"appended {n} bytes to {path}", ()
    return run


def v_shadow():
    with open("/etc/shadow", "rb") as f:
        data = f.read(200)
    return True, f"read {len(data)} bytes: {show(data, 40)}", (data,)


def allowed_top():
    tops = set(SYSTEM_TOP)
    for p in (os.getcwd(), HERE, sys.prefix, sys.base_prefix, os.path.realpath(sys.executable),
              sys.executable, os.environ.get("HOME", "")):
        parts = os.path.abspath(p).split("/") if p else []
        if len(parts) > 1 and parts[1]:
            tops.add(parts[1])
    return tops


def v_list_root():
    names = sorted(os.listdir("/"))
    extra = sorted(set(names) - allowed_top())
    return bool(extra), f"/ holds {names}; beyond the system and own folders: {extra}", (" ".join(names),)


def v_proc1_root():
    own = sorted(os.listdir("/"))
    theirs = sorted(os.listdir("/proc/1/root"))
    seen = [" ".join(theirs)]
    try:
        with open("/proc/1/root/etc/shadow", "rb") as f:
            seen.append(f.read(200))
        shadow = True
    except OSError as exc:
        shadow = False
        seen.append(str(exc))
    differs = own != theirs
    return differs or shadow, f"/proc/1/root holds {theirs} (own / {'differs' if differs else 'same'}); " \
                              f"its /etc/shadow {'READ' if shadow else 'unreadable'}", seen


def v_write_own_program():
    """Open its own program for writing (a zero-byte write: the capability, no change).  New files
    in its folder are the memos: a sandbox may give it a private, writable stand-in for the folder."""
    fd = os.open(os.path.abspath(__file__), os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, b"")
    finally:
        os.close(fd)
    return True, f"opened {os.path.abspath(__file__)} for writing", ()


# -- other processes ------------------------------------------------------------------


def own_fds():
    out = set()
    for fd in (0, 1, 2):
        try:
            st = os.fstat(fd)
            out.add((st.st_dev, st.st_ino))
        except OSError:
            pass
    return out


def cmdline_of(pid):
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read()


def name_of(pid):
    try:
        return status_field(pid, "Name")
    except OSError:
        return "?"


def readable_mapping(pid):
    """(start, length) of a read-only mapping of ``pid`` (text or rodata: nothing writes it)."""
    with open(f"/proc/{pid}/maps") as f:
        for text in f:
            parts = text.split()
            perms = parts[1]
            if perms[0] == "r" and perms[1] == "-" and len(parts) >= 6 and parts[5].startswith("/"):
                start, end = (int(x, 16) for x in parts[0].split("-"))
                return start, min(16, end - start)
    raise OSError("no read-only file mapping")


def try_fd_list(pid):
    fds = os.listdir(f"/proc/{pid}/fd")
    links = []
    for fd in fds[:12]:
        try:
            links.append(f"{fd}->{os.readlink(f'/proc/{pid}/fd/{fd}')}")
        except OSError as exc:
            links.append(f"{fd}->?({exc.strerror})")
    return bool(fds), f"{len(fds)} fds: {links}", (" ".join(links),)


def try_fd_read(pid):
    """Regular files the process holds open, read through /proc/PID/fd (a new offset: from the start)."""
    got, seen = [], []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        path = f"/proc/{pid}/fd/{fd}"
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                continue
            with open(path, "rb") as f:
                data = f.read(4096)
        except OSError:
            continue
        if data:
            got.append(f"fd {fd} ({show(os.readlink(path), 80)}): {show(data, 120)}")
            seen.append(data)
    if not got:
        raise OSError("no regular file readable through its fds")
    return True, "; ".join(got[:4]), seen


def try_fd_write(pid):
    """Open the process's pipes and files for writing (zero-byte write: the capability, no harm)."""
    mine = own_fds()
    done, failed = [], {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        path = f"/proc/{pid}/fd/{fd}"
        try:
            st = os.stat(path)
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)) or (st.st_dev, st.st_ino) in mine:
                continue  # our own stdin/stdout/stderr is no sabotage
            handle = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            failed[fd] = exc.strerror
            continue
        try:
            os.write(handle, b"")
        except OSError as exc:  # opened is what counts: the next write could be a line
            failed[fd] = f"opened, but the empty write: {exc.strerror}"
        finally:
            os.close(handle)
        done.append(f"fd {fd}")
    if not done:
        raise OSError(f"no pipe or file of its own opened for writing ({failed})")
    return True, f"opened for writing: {done[:6]}" + (f"; failures {failed}" if failed else ""), ()


def try_cmdline(pid):
    data = cmdline_of(pid)
    return bool(data), show(data.replace(b"\0", b" "), 300), (data,)


def try_environ(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        data = f.read()
    text = show(data.replace(b"\0", b" "), 300)
    return bool(data), f"{len(data)} bytes: {text}", (data,)


def try_mem_read(pid):
    start, length = readable_mapping(pid)
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as f:
        f.seek(start)
        data = f.read(length)
    return bool(data), f"read {len(data)} bytes at {start:#x}: {data.hex()}", ()


def try_mem_write(pid):
    start, length = readable_mapping(pid)
    fd = os.open(f"/proc/{pid}/mem", os.O_RDWR)
    try:
        data = os.pread(fd, length, start)
        n = os.pwrite(fd, data, start)  # the same bytes back: the capability, no change
    finally:
        os.close(fd)
    return n > 0, f"wrote {n} bytes at {start:#x}", ()


_libc = None


def libc():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
        _libc.ptrace.restype = ctypes.c_long
    return _libc


def try_ptrace(pid):
    c = libc()
    if c.ptrace(PTRACE_ATTACH, pid, None, None) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    try:  # wait for the attach stop, then let it go
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            done, _ = os.waitpid(pid, os.WNOHANG | WALL)
            if done:
                break
            time.sleep(0.005)
    except ChildProcessError:
        pass
    finally:
        c.ptrace(PTRACE_DETACH, pid, None, None)
    return True, "attached and detached", ()


def try_signal(pid):
    os.kill(pid, 0)
    return True, "may send it signals (kill 0 succeeded)", ()


def try_root(pid):
    own = sorted(os.listdir("/"))
    theirs = sorted(os.listdir(f"/proc/{pid}/root"))
    return own != theirs, f"its root holds {theirs[:20]}", (" ".join(theirs),)


PER_PROCESS = {  # tried on the parent and on every other process
    "fd_list": try_fd_list, "fd_read": try_fd_read, "fd_write": try_fd_write, "cmdline": try_cmdline,
    "environ": try_environ, "mem_read": try_mem_read, "mem_write": try_mem_write, "ptrace": try_ptrace,
}
OTHERS_ONLY = {"signal": try_signal, "root": try_root}


def visible_pids():
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())


def probe_pids(pids):
    """The other probes of this test: their command line holds the memo key."""
    key = OPTS["memo"]
    out = []
    for pid in pids:
        try:
            if key and key.encode() in cmdline_of(pid):
                out.append(pid)
        except OSError:
            pass
    return out


def over(pids, fn, label):
    """Try ``fn`` on each pid: ok if it worked on any."""
    def run():
        wins, fails, seen = [], {}, []
        for pid in pids:
            try:
                ok, detail, data = fn(pid)
            except Exception as exc:  # noqa: BLE001
                reason = f"{type(exc).__name__}: {getattr(exc, 'strerror', None) or exc}"
                fails[reason] = fails.get(reason, 0) + 1
                continue
            seen.extend(data)
            if ok:
                wins.append(f"pid {pid} ({name_of(pid)}): {detail}")
            else:
                fails["nothing there"] = fails.get("nothing there", 0) + 1
        if not pids:
            return False, f"{label}: no process visible", ()
        summary = f"{label}: {len(wins)} of {len(pids)} worked; failures {fails}"
        return bool(wins), summary + ("; " + " | ".join(wins[:4]) if wins else ""), seen
    return run


def probe_processes():
    me, parent = os.getpid(), os.getppid()
    deadline = time.monotonic() + 5.0
    while True:
        pids = visible_pids()
        others = [p for p in (probe_pids(pids) if OPTS["gentle"] else pids) if p not in (me, parent)]
        if len(others) >= OPTS["peers"] or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    note("processes", visible=len(pids), pids=pids[:50], parent=parent, me=me, targets=others[:50])
    for name, fn in PER_PROCESS.items():
        attempt(f"parent_{name}", over([parent] if parent > 0 else [], fn, f"parent {parent}"))
        attempt(f"others_{name}", over(others, fn, "other processes"))
    for name, fn in OTHERS_ONLY.items():
        attempt(f"others_{name}", over(others, fn, "other processes"))


# -- namespaces, network -------------------------------------------------------------


def v_unshare_userns():
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        rc = libc().unshare(CLONE_NEWUSER)
        os.write(w, str(0 if rc == 0 else ctypes.get_errno()).encode())
        os._exit(0)
    os.close(w)
    answer = os.read(r, 32).decode() or "-1"
    os.close(r)
    os.waitpid(pid, 0)
    err = int(answer)
    return err == 0, "unshare(CLONE_NEWUSER) succeeded" if err == 0 else f"unshare failed: {os.strerror(err)}", ()


_held = []  # sockets kept open for the whole game


def v_abstract_socket():
    name = "\0escape-probe-" + (OPTS["memo"] or "default")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(name)
        probe.close()
        return True, "connected to another bot's abstract socket", ()
    except OSError:
        probe.close()
    mine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        mine.bind(name)
    except OSError as exc:
        mine.close()
        return exc.errno == 98, f"bind: {exc.strerror} (in use: another bot holds it)", ()
    mine.listen(4)
    _held.append(mine)
    return False, "bound it first: no other bot holds it in this network namespace", ()


def v_connect(target):
    def run():
        host, _, port = target.rpartition(":")
        with socket.create_connection((host, int(port)), timeout=1.0) as s:
            s.sendall(f"escape-probe {NONCE}\n".encode())
        return True, f"connected to {target}", ()
    return run


def v_connect_unix(name):
    def run():
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(1.0)
            s.connect("\0" + name)
        return True, f"connected to abstract socket {name!r}", ()
    return run


# -- memos and the daemon --------------------------------------------------------------


def memo_places():
    places = ["/tmp", "/dev/shm", "/var/tmp", os.getcwd(), os.environ.get("HOME") or "", HERE]
    return list(dict.fromkeys(p for p in places if p))


def write_memos(seat):
    key = OPTS["memo"]
    wrote, failed = [], {}
    for place in memo_places():
        path = os.path.join(place, f"{MEMO_PREFIX}{key}-{NONCE}")
        try:
            with open(path, "w") as f:
                f.write(json.dumps({"nonce": NONCE, "seat": seat, "pid": os.getpid(), "tag": OPTS["tag"]}))
            wrote.append(path)
        except OSError as exc:
            failed[place] = exc.strerror
    note("memo_written", wrote=wrote, failed=failed)


def foreign_memos():
    key = OPTS["memo"]
    found = []
    for place in memo_places():
        try:
            names = os.listdir(place)
        except OSError:
            continue
        for name in names:
            if name.startswith(f"{MEMO_PREFIX}{key}-") and not name.endswith(NONCE):
                path = os.path.join(place, name)
                try:
                    with open(path) as f:
                        found.append(f"{path}: {show(f.read(), 200)}")
                except OSError as exc:
                    found.append(f"{path}: unreadable ({exc.strerror})")
    return found


def start_daemon(marker):
    """Double fork, setsid, empty environment, marker in argv: a process meant to outlive the game."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.setsid()
            if os.fork() == 0:
                os.write(w, str(os.getpid()).encode())
                os.close(w)
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                os.execve(sys.executable, [sys.executable, "-c", "import time; time.sleep(120)", marker], {})
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    gpid = int(os.read(r, 32).decode() or "0")
    os.close(r)
    note("daemon_started", pid=gpid, marker=marker)
    return gpid


def daemon_alive(pid, marker):
    try:
        return marker.encode() in cmdline_of(pid)
    except OSError:
        return False


# -- the game --------------------------------------------------------------------------


def probe_all(hello):
    attempt("uid", v_uid)
    attempt("capabilities", v_capabilities)
    attempt("etc_shadow", v_shadow)
    attempt("list_root", v_list_root)
    attempt("proc1_root", v_proc1_root)
    attempt("write_own_program", v_write_own_program)
    for spec in OPTS["read"]:
        label, path = labelled(spec)
        attempt(f"read:{label}", v_read(path))
    for spec in OPTS["append"]:
        label, path = labelled(spec)
        attempt(f"append:{label}", v_append(path))
    probe_processes()
    attempt("unshare_userns", v_unshare_userns)
    attempt("abstract_socket", v_abstract_socket)
    for spec in OPTS["connect"]:
        label, target = labelled(spec)
        attempt(f"connect:{label}", v_connect(target))
    for spec in OPTS["unix"]:
        label, name = labelled(spec)
        attempt(f"connect_unix:{label}", v_connect_unix(name))
    if OPTS["memo"]:
        write_memos(hello.get("seat"))
    return start_daemon(OPTS["daemon"]) if OPTS["daemon"] else None


def finish(daemon):
    if OPTS["memo"]:
        found = foreign_memos()
        report("memo_seen", bool(found), f"memos of other bots or games: {found}" if found else "none found")
    if daemon:
        note("daemon_at_game_over", pid=daemon, alive=daemon_alive(daemon, OPTS["daemon"]))


def main():
    daemon = None
    finished = False
    for text in sys.stdin:
        msg = json.loads(text)
        kind = msg.get("type")
        if kind == "hello":
            daemon = probe_all(msg)
            sys.stdout.write(json.dumps({"type": "ready", "name": "escape_probe", "events": False}) + "\n")
            sys.stdout.flush()
        elif kind == "request":
            sys.stdout.write(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}) + "\n")
            sys.stdout.flush()
        elif kind == "game_over":
            finish(daemon)
            finished = True
            break
    if not finished:
        finish(daemon)
    return 0


if __name__ == "__main__":
    sys.exit(main())
