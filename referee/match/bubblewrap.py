"""Run each bot in its own bubblewrap sandbox (the first layer; ``sandbox`` is the second).

One ``bwrap`` per bot process, so no two bots share anything but the game:

* **Namespaces:** new user, pid, network (unless the entrant opts in), IPC,
  UTS and cgroup namespaces.  Inside, the bot runs as ``nobody``
  (uid/gid 65534) with no capabilities, in a new session, and may not make
  user namespaces of its own.  ``/proc`` is the sandbox's own: it shows the
  bot's processes and nothing else, so the referee, other bots, their pipes,
  memory and command lines are out of reach (no ``ptrace``, no signals).
* **Lifetime:** the bot is pid 1 of its own pid namespace (``--as-pid-1``:
  no bwrap process inside that it could inspect); ``bwrap`` outside dies
  with the referee (``--die-with-parent``) and takes the bot with it; when
  pid 1 goes, the kernel kills every process in the namespace, so nothing the
  bot starts can outlive it — however it forks, detaches or renames itself.
* **Private view:** where the referee may mount (root), every host folder
  bound inside (system directories, ``/etc``'s copy, the interpreter, the
  bot's folder, ``/dev``'s nodes) is seen through a read-only overlay made
  for this one process, in a mount namespace of its own (``unshare``), so
  its files are inodes of its own: a lock, lease or watch set by one bot
  process is invisible to every other.  Nothing is copied (an overlay reads
  through), so a 100 MB folder costs what a small one does, once per process.
* **Seccomp:** a filter (``--seccomp``) answers ``EPERM`` to what no bot
  needs: ``ptrace``, ``bpf``, ``userfaultfd``, ``perf_event_open``, keyrings,
  every mount call, new namespaces (``unshare``, ``setns``, ``clone`` with a
  namespace flag), file watches (``inotify``, ``fanotify``, ``F_NOTIFY``),
  leases, and probing or evicting the shared page cache (``mincore``,
  ``cachestat``, ``fadvise(DONTNEED)``, ``madvise(COLD/PAGEOUT)``); without the
  private view, file locks too (``flock``, ``F_SETLK``,
  OFD locks).  ``clone3`` gets ``ENOSYS``, so libc falls back to ``clone``,
  whose flags the filter can see.
* **Files:** an empty root with, read-only: the system directories
  (``/usr``, ``/bin``, ``/lib*``, ``/sbin``), an allow-list of ``/etc`` (no
  ``shadow``, no keys), the installation the bot's interpreter comes from
  (a virtualenv, a pyenv version: see ``resolve_program``), the bot's own
  folder (the folder of its program or script, or the entrant's ``dir``),
  the project's bot helper (``protocol/``), the game engines
  (``referee/games/``, ``ENGINE_PATHS``) and the entrant's extra
  ``ro_paths``.  Writable: a fresh, size-capped tmpfs at ``/tmp`` and one at
  ``/scratch`` (``HOME``), new for every bot process and so for every game.
  Records, the tournament folder and file, and the referee's own packages
  (all but the engines) are masked even where they lie inside a bound folder.
* **Environment:** cleared; ``PATH`` (the interpreter's folders first),
  ``HOME``, ``TMPDIR``, ``LANG``/``LC_ALL``/``TZ`` when set.
* **Resources:** rlimits are set before ``bwrap`` starts (``prlimit``), so
  everything in the sandbox inherits them; where a cgroup hierarchy is
  writable (v1 ``memory`` and ``pids``, or v2 with both controllers), the
  bot's whole sandbox is put in a cgroup of its own, capped in memory and
  tasks, before ``bwrap`` runs (``cgroups``).

Only stdin, stdout and stderr are inherited (``subprocess`` closes the rest).
See docs/security.md for the threat model.
"""

from __future__ import annotations

import atexit
import contextlib
import enum
import errno
import functools
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from referee.errors import UserFault

NOBODY = 65534
BOT_ID_ENV = "REFEREE_BOT_ID"  # a random token per bot process (referee.match.sandbox), kept inside
SCRATCH = "/scratch"
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# /etc entries interpreters and libc may read; nothing secret (no shadow, sudoers, ssh keys).
ETC_ALLOWED = (
    "passwd", "group", "nsswitch.conf", "host.conf", "hosts", "gai.conf", "protocols", "services",
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "alternatives",
    "ssl", "ca-certificates", "ca-certificates.conf", "mime.types", "os-release", "debian_version",
    "locale.alias", "locale.conf", "nodejs", "java-17-openjdk", "perl", "python3", "python3.11",
)
ETC_NETWORK = ("resolv.conf",)
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # holds referee/, protocol/, tournaments/
BOT_HELPER_DIR = _PACKAGE_ROOT / "protocol"  # the bot helper (protocol.bot) bots may import
#: The game engines, which bots may import like the helper: pure code with no secret in it
#: (a search bot samples and plays out states with them, sample_bots/search/): referee/games/
#: and the two modules it imports.  The rest of the referee stays hidden.
ENGINE_PATHS = tuple(_PACKAGE_ROOT / "referee" / p for p in ("__init__.py", "errors.py", "games"))


def _referee_hidden() -> tuple[Path, ...]:
    """The referee's own packages, but for ``ENGINE_PATHS``: every other entry of
    ``referee/`` (its ``__pycache__`` too), all of ``tournaments/`` and the command (``referee_cli/``)."""
    ref = _PACKAGE_ROOT / "referee"
    above = (_PACKAGE_ROOT / "tournaments", _PACKAGE_ROOT / "referee_cli")
    try:
        entries = sorted(ref.iterdir())
    except OSError:
        return (ref, *above)
    return (*(p for p in entries if p not in ENGINE_PATHS), *above)


REFEREE_DIRS = _referee_hidden()
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"
SECCOMP_HINT = "install libseccomp (Debian/Ubuntu: apt-get install libseccomp2)"


class SandboxMode(str, enum.Enum):
    """``--sandbox``: what ``play`` and ``run`` do about bubblewrap."""

    AUTO = "auto"  # bubblewrap when it works, else run unisolated with one warning line
    REQUIRED = "required"  # refuse to start without it
    OFF = "off"  # rlimits and process-family teardown only


class SandboxUnavailable(UserFault):
    """``--sandbox required`` on a machine where bubblewrap does not work: a setting the
    machine cannot honour, so the user's to fix (exit 2)."""


class CannotSandbox(Exception):
    """This bot's command cannot be run in the sandbox (a missing program, say): its fault."""


# -- is bubblewrap usable here? ------------------------------------------------------------


@functools.cache
def probe() -> str | None:
    """None when bubblewrap works on this machine, else why not (one line).  Cached."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bwrap is not installed"
    argv = [bwrap, *_namespace_args(network=False, disable_userns=False), "--ro-bind", "/usr", "/usr",
            *_system_links(), "--proc", "/proc", "--dev", "/dev", "--", "/usr/bin/true"]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap did not run: {exc}"
    if done.returncode != 0:
        text = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap failed: {text[-1] if text else f'exit code {done.returncode}'}"
    return None


@functools.cache
def _supports_disable_userns() -> bool:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False
    try:
        out = subprocess.run([bwrap, "--help"], capture_output=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return b"--disable-userns" in out


def effective_mode(mode: str | SandboxMode) -> str:
    """``"bwrap"`` or ``"off"`` for a requested mode; ``SandboxUnavailable`` for
    ``required`` where bubblewrap does not work."""
    mode = SandboxMode(mode)
    if mode is SandboxMode.OFF:
        return "off"
    why = probe()
    if why is None:
        if (no_filter := seccomp_problem()) is not None:
            if mode is SandboxMode.REQUIRED:
                raise SandboxUnavailable(f"--sandbox required, but the sandbox's seccomp filter cannot be made here: "
                                         f"{no_filter}; {SECCOMP_HINT}")
            _warn_once(f"referee: warning: bots run without their seccomp filter ({no_filter}): they may "
                       f"reach kernel features no bot needs; {SECCOMP_HINT}, or pass --sandbox required to refuse")
        return "bwrap"
    if mode is SandboxMode.REQUIRED:
        raise SandboxUnavailable(f"--sandbox required, but bubblewrap does not work here: {why}; {INSTALL_HINT}")
    return "off"


@functools.cache
def _warn_once(line: str) -> None:
    """One line on stderr, once per process (``auto`` runs on, less isolated)."""
    print(line, file=sys.stderr, flush=True)


def unisolated_warning() -> str | None:
    """The one line ``auto`` prints when it falls back to running bots unisolated."""
    why = probe()
    if why is None:
        return None
    return (f"warning: bots are NOT isolated ({why}): they can read the referee's files and each other's; "
            f"{INSTALL_HINT}, or pass --sandbox off to run unisolated on purpose")


# -- /etc ---------------------------------------------------------------------------------


def _world_readable(mode: int) -> bool:
    """Whether an entry of this ``st_mode`` is one every user may read (a link always is)."""
    if stat.S_ISLNK(mode):
        return True
    need = 0o005 if stat.S_ISDIR(mode) else 0o004
    return mode & need == need


#: One entry of the ``/etc`` copy: its path below ``/etc``, its kind ("d" folder, "l"
#: symbolic link, "f" file) and what identifies its content (a link's target; a file's or
#: folder's mode, size and modification time).
_EtcEntry = tuple[str, str, str]


def _etc_plan(names: Iterable[str]) -> list[_EtcEntry]:
    """What the ``/etc`` copy holds: the allowed entries that every user may read (a
    symbolic link is copied as a link), folders walked in name order."""
    plan: list[_EtcEntry] = []

    def add(rel: str) -> None:
        src = "/etc/" + rel
        try:
            st = os.lstat(src)
            if not _world_readable(st.st_mode):
                return
            if stat.S_ISLNK(st.st_mode):
                plan.append((rel, "l", os.readlink(src)))
                return
            if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
                return
            kind = "d" if stat.S_ISDIR(st.st_mode) else "f"
            plan.append((rel, kind, f"{stat.S_IMODE(st.st_mode):o} {st.st_size} {st.st_mtime_ns}"))
            children = sorted(os.listdir(src)) if kind == "d" else []
        except OSError:
            return  # unreadable or vanished: the bot simply does not get it
        for child in children:
            add(f"{rel}/{child}")

    for name in names:
        if os.path.lexists("/etc/" + name):
            add(name)
    return plan


def _build_etc(root: Path, plan: list[_EtcEntry]) -> None:
    made: set[str] = {""}
    for rel, kind, what in plan:
        if rel.rpartition("/")[0] not in made:
            continue  # its folder could not be copied
        src, dst = "/etc/" + rel, root / rel
        try:
            if kind == "l":
                os.symlink(what, dst)
            elif kind == "d":
                dst.mkdir()
                made.add(rel)
            else:
                shutil.copy2(src, dst)
        except OSError:
            continue  # unreadable or vanished since the plan: the bot simply does not get it
    for rel, kind, _ in reversed(plan):  # folders' modes and times last: their entries are in
        if kind == "d" and rel in made:
            with contextlib.suppress(OSError):
                shutil.copystat("/etc/" + rel, root / rel)
    root.chmod(0o755)


def _shared_copy_usable(path: Path) -> bool:
    """A finished copy of this user's, which nobody else may change."""
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022


@functools.cache
def etc_copy(network: bool) -> Path:
    """A copy of the allowed ``/etc`` entries that every user may read, bound read-only as
    the sandbox's ``/etc`` in one mount (one bind per entry cost ~5 ms of CPU per bot).
    Only what every user may read is copied (so not ``/etc/ssl/private``): inside, the
    bot's uid maps to the referee's, which may own files it should not see.

    One copy serves every referee process of this user while ``/etc`` stays as it is: it
    is named after what it holds (``referee-etc-UID-DIGEST`` in the temporary folder, the
    digest of every entry's path, mode, size, time or link target), built under another
    name and renamed into place whole. Building one is ~700 files and links (most of
    them ``/etc/alternatives`` and ``/etc/ssl/certs``): 0.03 s of CPU on a quiet
    machine, but up to 0.7 s of CPU and 5 s of wall time on an ext4 ``/tmp`` that other
    processes are writing to, for each referee and worker process that started a bot,
    and as much again to remove it. A copy that is not this user's alone is not used:
    the process then makes a private one, removed when it exits."""
    plan = _etc_plan(ETC_ALLOWED + (ETC_NETWORK if network else ()))
    digest = hashlib.sha256(repr(plan).encode()).hexdigest()[:20]
    shared = Path(tempfile.gettempdir()) / f"referee-etc-{os.geteuid()}-{digest}"
    if _shared_copy_usable(shared):
        return shared
    root = Path(tempfile.mkdtemp(prefix=f"referee-etc-{os.geteuid()}-new-"))
    try:
        _build_etc(root, plan)
        os.rename(root, shared)  # fails if another process put its copy there first
    except OSError:
        if _shared_copy_usable(shared):
            shutil.rmtree(root, ignore_errors=True)
            return shared
        atexit.register(shutil.rmtree, root, True)
        return root
    return shared


# -- resolving a command to programs that exist inside -------------------------------------


def _is_system(path: Path) -> bool:
    text = str(path)
    return any(text == d or text.startswith(d + "/") for d in SYSTEM_DIRS)


def _prefix(path: Path) -> Path:
    """The installation a program belongs to: ``X`` for ``X/bin/prog``, else its folder."""
    folder = path.parent
    return folder.parent if folder.name in ("bin", "sbin") and folder.parent != Path("/") else folder


def _pyenv_real(shim: Path, name: str, cwd: Path) -> Path | None:
    """The program a pyenv shim would run (honouring .python-version from ``cwd``)."""
    try:
        text = shim.read_text(errors="replace")
    except OSError:
        return None
    if "pyenv" not in text:
        return None
    root = os.environ.get("PYENV_ROOT") or str(shim.parent.parent)
    pyenv = Path(root) / "libexec" / "pyenv"
    if not pyenv.is_file():
        pyenv = Path(root) / "bin" / "pyenv"
    try:
        done = subprocess.run([str(pyenv), "which", name], cwd=cwd, capture_output=True, timeout=10,
                              env={**os.environ, "PYENV_ROOT": root})
    except (OSError, subprocess.SubprocessError):
        return None
    found = done.stdout.decode(errors="replace").strip()
    return Path(found) if done.returncode == 0 and found else None


def _shebang(path: Path) -> list[str] | None:
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    return head[2:].split(b"\n", 1)[0].decode(errors="replace").split()


@dataclass(slots=True)
class Resolved:
    """A command made runnable in the sandbox: its argv and what it needs bound."""

    argv: list[str]
    installs: list[Path] = field(default_factory=list)  # interpreters' installations (read-only)
    own: Path | None = None  # the bot's own folder (read-only)
    path_dirs: list[str] = field(default_factory=list)  # PATH inside, before the system's


def _find_on_path(name: str, cwd: Path) -> Path:
    found = shutil.which(name)
    if found is None:
        raise CannotSandbox(f"program {name!r} not found on PATH")
    path = Path(found)
    if path.parent.name == "shims":
        real = _pyenv_real(path, name, cwd)
        if real is not None:
            return real
    return path


def _add_program(res: Resolved, path: Path) -> None:
    """Bind what a program found on PATH (or named by a shebang) needs."""
    if path.parent.name == "shims":
        raise CannotSandbox(f"{path} is a version-manager shim the sandbox cannot follow; "
                            f"name the real program instead")
    for p in (path, Path(os.path.realpath(path))):
        if not _is_system(p):
            res.installs.append(_prefix(p))
    if not _is_system(path):
        res.path_dirs.append(str(path.parent))


def _is_file(path: Path) -> bool:
    """``Path.is_file``, False too for a name the kernel refuses (an argument such as
    ``python -c CODE``'s code is no file, and may be longer than a name can be)."""
    try:
        return path.is_file()
    except OSError:
        return False


@functools.lru_cache(maxsize=256)
def _resolve_cached(argv: tuple[str, ...], cwd: str) -> Resolved:
    here = Path(cwd)
    prog = argv[0]
    rest = list(argv[1:])
    res = Resolved(argv=[])
    if "/" in prog:  # named by path: the bot's own program, or an interpreter such as a venv's python
        program = here / prog
        if not _is_file(program):
            raise CannotSandbox(f"program {prog!r} not found (looked in {here})")
        if not os.access(program, os.X_OK):
            raise CannotSandbox(f"program {prog!r} is not executable")
        program = Path(os.path.abspath(program))
        line = _shebang(program)
        if line and Path(line[0]).name == "env" and len(line) > 1 and not line[1].startswith("-"):
            interpreter = _find_on_path(line[1], here)  # `#!/usr/bin/env python3`: PATH differs inside
            _add_program(res, interpreter)
            res.own = program.parent
            res.argv = [str(interpreter), *line[2:], str(program), *rest]
            return res
        if line:
            _add_program(res, Path(line[0]))
    else:
        program = _find_on_path(prog, here)
    _add_program(res, program)
    script = next((a for a in rest if not a.startswith("-") and _is_file(here / a)), None)
    if script is not None:
        res.own = Path(os.path.abspath(here / script)).parent
    elif "/" in prog:
        res.own = program.parent
    res.argv = [str(program), *rest]
    return res


def resolve_program(argv: Sequence[str], cwd: str | os.PathLike[str] | None) -> Resolved:
    """Resolve ``argv[0]`` on the referee's side, as the shell would, to a path that
    exists inside the sandbox: pyenv shims to the interpreter they pick,
    ``#!/usr/bin/env NAME`` scripts to NAME's path, and bind each program's
    installation (``X`` for ``X/bin/python``; a virtualenv and the Python it
    was made from).  ``CannotSandbox`` names what is missing."""
    return _resolve_cached(tuple(argv), str(Path(cwd or os.getcwd()).resolve()))


# -- the seccomp filter --------------------------------------------------------------------

# Refused with EPERM: what no bot needs.  Debugging and tracing (``ptrace``, reading another
# process's memory), kernel programs and hooks (``bpf``, ``userfaultfd``, ``perf_event_open``),
# keyrings, every way to mount, new namespaces (a bot's ``unshare`` or ``setns``; ``clone``'s
# namespace flags below), file watches (inotify, fanotify) and opening by handle.
REFUSED_SYSCALLS = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "bpf", "userfaultfd", "perf_event_open",
    "keyctl", "add_key", "request_key", "mount", "umount2", "pivot_root", "move_mount", "open_tree",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "unshare", "setns",
    "fanotify_init", "fanotify_mark", "inotify_init", "inotify_init1", "inotify_add_watch",
    "name_to_handle_at", "open_by_handle_at",
    # The page cache is shared even through a private view (an overlay reads through to the host's
    # pages): what shows whether a page is cached (mincore, cachestat) is refused, and so is what
    # evicts a page others may read (below), so a bot can neither prime nor probe it.
    "mincore", "cachestat",
)
POSIX_FADV_DONTNEED, MADV_COLD, MADV_PAGEOUT = 4, 20, 21
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME: one rule each.
CLONE_NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000,
                         0x00000080)
F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW = 5, 6, 7, 36, 37, 38
F_SETLEASE, F_NOTIFY = 1024, 1026
FCNTL_ALWAYS_REFUSED = (F_SETLEASE, F_NOTIFY)  # leases and directory watches (dnotify)
FCNTL_LOCKS = (F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW)
SECCOMP_FD = 9  # the descriptor bwrap reads the filter from (opened by the start-up wrapper)


@functools.cache
def _private_dir() -> Path:
    """A folder of this referee process for its compiled filters and view mount points
    (removed when it exits)."""
    root = Path(tempfile.mkdtemp(prefix="referee-sandbox-"))
    atexit.register(shutil.rmtree, root, True)
    return root


def _build_filter(path: Path, *, locks: bool) -> None:
    import pyseccomp as sc  # type: ignore[import-untyped]  # ctypes over the system's libseccomp.so.2

    refuse = sc.ERRNO(errno.EPERM)
    f = sc.SyscallFilter(sc.ALLOW)
    for name in REFUSED_SYSCALLS:
        try:
            f.add_rule(refuse, name)
        except (ValueError, RuntimeError, OSError):
            continue  # not a system call of this architecture
    for flag in CLONE_NAMESPACE_FLAGS:
        f.add_rule(refuse, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    f.add_rule(refuse, "fadvise64", sc.Arg(3, sc.EQ, POSIX_FADV_DONTNEED))
    for advice in (MADV_COLD, MADV_PAGEOUT):
        f.add_rule(refuse, "madvise", sc.Arg(2, sc.EQ, advice))
    # clone3 passes its flags in memory, out of a filter's sight: ENOSYS makes libc use clone.
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    for cmd in FCNTL_ALWAYS_REFUSED + (FCNTL_LOCKS if locks else ()):
        f.add_rule(refuse, "fcntl", sc.Arg(1, sc.EQ, cmd))
    if locks:
        f.add_rule(refuse, "flock")
    with open(path, "wb") as out:
        f.export_bpf(out)


@functools.cache
def seccomp_filter(*, locks: bool) -> Path:
    """The compiled filter (made once per process): with ``locks``, file locks are
    refused too (for a sandbox without a private view, whose files other bots share)."""
    path = _private_dir() / ("filter-locks.bpf" if locks else "filter.bpf")
    _build_filter(path, locks=locks)
    return path


@functools.cache
def seccomp_problem() -> str | None:
    """None when the sandbox's seccomp filter can be made here, else why not (one line)."""
    try:
        seccomp_filter(locks=False)
        seccomp_filter(locks=True)
    except ImportError as exc:
        return f"pyseccomp is missing ({exc})"
    except Exception as exc:  # libseccomp.so.2 missing or refusing: ctypes' and libseccomp's own errors
        return f"libseccomp does not work ({type(exc).__name__}: {exc})"
    return None


# -- the private view ----------------------------------------------------------------------

DEV_NODES = ("null", "zero", "full", "random", "urandom", "tty")  # the nodes bwrap's --dev binds from the host
_UNSAFE_IN_FSTAB = set(" \t\n\\,:#")


def _unescape(field_: str) -> str:
    """A path from /proc/self/mountinfo (octal escapes such as ``\\040`` for a space)."""
    if "\\" not in field_:
        return field_
    out, i = [], 0
    while i < len(field_):
        if field_[i] == "\\" and field_[i + 1:i + 4].isdigit() and len(field_[i + 1:i + 4]) == 3:
            out.append(chr(int(field_[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field_[i])
            i += 1
    return "".join(out)


@functools.cache
def _mount_points() -> tuple[str, ...]:
    """The mount points of this mount namespace, longest first."""
    try:
        with open("/proc/self/mountinfo") as f:
            points = {_unescape(line.split()[4]) for line in f if len(line.split()) > 4}
    except OSError:
        points = {"/"}
    return tuple(sorted(points, key=len, reverse=True))


def _mount_of(path: str) -> str:
    for point in _mount_points():
        if path == point or path.startswith(point.rstrip("/") + "/"):
            return point
    return "/"


class _NoView(Exception):
    """This sandbox's folders cannot all be seen through a private view."""


class View:
    """Maps host folders to their place in this process's private view.

    Each file system a bound folder lies on (the longest mount point above it)
    becomes one read-only overlay, ``lowerdir=<mount point>:<empty tmpfs>``,
    mounted by the start-up wrapper in the bot's own mount namespace at a mount
    point of this referee process's; bwrap then binds from there."""

    _targets: dict[str, Path] = {}
    _fstabs: dict[tuple[str, ...], Path] = {}

    def __init__(self) -> None:
        self.lowers: list[str] = []

    @staticmethod
    def _root() -> Path:
        root = _private_dir() / "view"
        if not root.exists():
            (root / "empty").mkdir(parents=True)
        return root

    def source(self, path: str | Path) -> str:
        """Where bwrap finds ``path`` in this view."""
        real = os.path.realpath(path)
        point = _mount_of(real)
        if _UNSAFE_IN_FSTAB & set(point):
            raise _NoView(f"mount point {point!r}")
        target = View._targets.get(point)
        if target is None:
            target = self._root() / f"m{len(View._targets)}"
            target.mkdir()
            View._targets[point] = target
        if point not in self.lowers:
            self.lowers.append(point)
        rel = os.path.relpath(real, point)
        return str(target) if rel == "." else str(target / rel)

    def fstab(self) -> Path:
        """The mounts that make this view (a file ``mount -a -T`` reads; one per set)."""
        key = tuple(sorted(self.lowers))
        path = View._fstabs.get(key)
        if path is None:
            root = self._root()
            empty = root / "empty"
            lines = [f"tmpfs {empty} tmpfs ro,size=4k,mode=0755 0 0"]  # an empty layer on a file system of its own
            lines += [f"overlay {View._targets[p]} overlay ro,lowerdir={p}:{empty} 0 0" for p in key]
            path = root / f"fstab{len(View._fstabs)}"
            path.write_text("\n".join(lines) + "\n")
            View._fstabs[key] = path
        return path


def wrapper(fstab: Path | None, seccomp: Path | None) -> list[str]:
    """The start-up prefix of a sandboxed bot: in a mount namespace of its own, mount its
    private view (``fstab``); open the seccomp filter as fd ``SECCOMP_FD``; exec the rest.
    The mounts end with the namespace: nothing to clean up, whatever kills the referee."""
    if fstab is None and seccomp is None:
        return []
    script = ('if [ -n "$1" ]; then mount -a -T "$1" || { echo "referee: cannot mount the private view" >&2; '
              'exit 125; }; fi; '
              f'if [ -n "$2" ]; then exec {SECCOMP_FD}<"$2" || exit 125; fi; shift 2; exec "$@"')
    sh = ["/bin/sh", "-c", script, "sh", str(fstab or ""), str(seccomp or "")]
    if fstab is None:
        return sh
    return [shutil.which("unshare") or "/usr/bin/unshare", "--mount", "--propagation", "private", "--", *sh]


@functools.cache
def view_problem() -> str | None:
    """None when each bot can have a private view here, else why not (cached)."""
    if os.geteuid() != 0:
        return "the referee is not root (a private view is mounted by the referee)"
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return "unshare or mount (util-linux) is missing"
    view = View()
    try:
        view.source("/usr")
        view.source("/dev/null")
        argv = [*wrapper(view.fstab(), None), "/bin/sh", "-c", 'test -e "$1"', "sh", view.source("/dev/null")]
    except (OSError, _NoView) as exc:
        return f"no place for its mounts ({exc})"
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unshare did not run: {exc}"
    if done.returncode != 0:
        text = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"an overlay mount failed: {text[0] if text else f'exit code {done.returncode}'}"
    return None


# -- the bwrap command line ----------------------------------------------------------------


def _namespace_args(*, network: bool, disable_userns: bool) -> list[str]:
    args = ["--unshare-all", "--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY),
            "--hostname", "bot", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            # The bot itself is pid 1: no bwrap reaper inside whose /proc (environment, command
            # line, memory) the bot could read or trace.  The namespace still ends with it.
            "--as-pid-1"]
    if network:
        args.append("--share-net")
    if disable_userns:
        args.append("--disable-userns")
    return args


def _system_links(src: Callable[[str | Path], str] = str) -> list[str]:
    """Bind the system directories, keeping merged-/usr symlinks as symlinks."""
    out: list[str] = []
    for d in SYSTEM_DIRS:
        if d == "/usr":
            continue
        if os.path.islink(d):
            out += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            out += ["--ro-bind", src(d), d]
    return out


def _within(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)


MAX_BINDS = 512  # past this many mounts for one folder, hidden paths are masked instead of left out


def _bind_except(folder: Path, hidden: list[Path], args: list[str], budget: list[int],
                 src: Callable[[str | Path], str] = str) -> None:
    """Bind ``folder`` read-only, leaving out every hidden path inside it.

    A folder with a hidden path inside is made in the sandbox and its entries
    are bound one by one, all but the hidden one (recursively along the way to
    it): a hidden path is then simply absent, its name included — a mount over
    it (``--tmpfs``, ``/dev/null``) would show its name in
    ``/proc/self/mountinfo``, and names such as ``back-alley-seed7.jsonl``
    say too much.  Past ``MAX_BINDS`` mounts the rest is masked instead."""
    inside = [h for h in hidden if folder in h.parents]
    if not inside:
        args += ["--ro-bind", src(folder), str(folder)]
        budget[0] -= 1
        return
    try:
        children = sorted(folder.iterdir())
    except OSError:
        return
    if budget[0] < len(children):
        args += ["--ro-bind", src(folder), str(folder)]
        for h in inside:
            args += ["--tmpfs", str(h)] if h.is_dir() else ["--ro-bind", src("/dev/null"), str(h)]
        budget[0] -= 1 + len(inside)
        return
    args += ["--dir", str(folder)]
    for child in children:
        if child in hidden:
            continue
        if child.is_symlink():
            args += ["--symlink", os.readlink(child), str(child)]
            budget[0] -= 1
        elif child.is_dir():
            _bind_except(child, hidden, args, budget, src)
        else:
            args += ["--ro-bind", src(child), str(child)]
            budget[0] -= 1


@dataclass(frozen=True, slots=True)
class Jail:
    """How to wrap one bot's command: everything but the per-process parts."""

    network: bool = False
    ro_paths: tuple[str, ...] = ()
    own_dir: str | None = None  # the entrant's declared folder, instead of its script's
    hide: tuple[str, ...] = ()  # records, the tournament folder and file
    scratch_mb: int = 64
    view: bool | None = None  # a private view of its files: None wherever the machine allows one
    seccomp: bool | None = None  # the seccomp filter: None wherever libseccomp works

    def command(self, argv: Sequence[str], cwd: str | None, env: dict[str, str] | None = None) -> list[str]:
        """``[wrapper] bwrap ... -- program args``, runnable as it is; ``CannotSandbox`` if
        the program cannot be found."""
        view = None if self.view is False or (self.view is None and view_problem() is not None) else View()
        use_filter = self.seccomp is True or (self.seccomp is None and seccomp_problem() is None)
        try:
            bwrap = self._bwrap(argv, cwd, env, view, use_filter)
        except _NoView:  # a folder on a mount point the view cannot name: the files are shared
            view = None
            bwrap = self._bwrap(argv, cwd, env, None, use_filter)
        # Without a private view, file locks on the shared files are a channel: refuse them.
        bpf = seccomp_filter(locks=view is None) if use_filter else None
        return [*wrapper(view.fstab() if view is not None else None, bpf), *bwrap]

    def _bwrap(self, argv: Sequence[str], cwd: str | None, env: dict[str, str] | None,
               view: View | None, use_filter: bool) -> list[str]:
        src: Callable[[str | Path], str] = str if view is None else view.source
        here = Path(cwd or os.getcwd()).resolve()
        res = resolve_program(argv, here)
        own = Path(self.own_dir).resolve() if self.own_dir else res.own
        ro: list[Path] = []
        for p in [*res.installs, *([own] if own else []), BOT_HELPER_DIR, *ENGINE_PATHS,
                  *(Path(x) for x in self.ro_paths)]:
            p = Path(os.path.abspath(p))
            if p.exists() and not _is_system(p) and p not in ro and p != Path("/"):
                ro.append(p)
        args = ["bwrap", *_namespace_args(network=self.network, disable_userns=_supports_disable_userns()),
                "--ro-bind", src("/usr"), "/usr", *_system_links(src)]
        args += ["--ro-bind", src(etc_copy(self.network)), "/etc"]
        size = str(self.scratch_mb << 20)
        # The private tmpfs folders first: a bot's own folder may lie under /tmp.
        args += ["--size", size, "--tmpfs", "/tmp", "--size", size, "--tmpfs", SCRATCH, "--dir", str(here)]
        roots: tuple[str | Path, ...] = (*self.hide, *REFEREE_DIRS)
        hidden = [h for h in (Path(os.path.abspath(x)) for x in roots) if os.path.lexists(h)]
        budget = [MAX_BINDS]
        for p in ro:
            if not _within(p, hidden):
                _bind_except(p, hidden, args, budget, src)
        args += ["--proc", "/proc", "--dev", "/dev"]
        if view is not None:  # bwrap's device nodes are the host's inodes: lockable, watchable
            args += [a for n in DEV_NODES if os.path.exists("/dev/" + n)
                     for a in ("--dev-bind", src("/dev/" + n), "/dev/" + n)]
        # The root itself (bwrap's tmpfs, holding the working folder and the folders made for
        # binds) becomes read-only: only /tmp and /scratch, which have size caps, are writable.
        args += ["--remount-ro", "/", "--chdir", str(here), "--clearenv"]
        path = ":".join(dict.fromkeys([*res.path_dirs, "/usr/local/bin", "/usr/bin", "/bin"]))
        inner = {"PATH": path, "HOME": SCRATCH, "TMPDIR": "/tmp"}
        source = os.environ if env is None else env
        inner.update({k: source[k] for k in ("LANG", "LC_ALL", "TZ", BOT_ID_ENV) if k in source})
        for k, v in inner.items():
            args += ["--setenv", k, v]
        if use_filter:
            args += ["--seccomp", str(SECCOMP_FD)]
        return [*args, "--", *res.argv]
