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
* **Files:** an empty root with, read-only: the system directories
  (``/usr``, ``/bin``, ``/lib*``, ``/sbin``), an allow-list of ``/etc`` (no
  ``shadow``, no keys), the installation the bot's interpreter comes from
  (a virtualenv, a pyenv version: see ``resolve_program``), the bot's own
  folder (the folder of its program or script, or the entrant's ``dir``),
  the project's bot helper (``protocol/``) and the entrant's extra
  ``ro_paths``.  Writable: a fresh, size-capped tmpfs at ``/tmp`` and one at
  ``/scratch`` (``HOME``), new for every bot process and so for every game.
  Records, the tournament folder and file, and the referee's own packages
  are masked even where they lie inside a bound folder.
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
import enum
import functools
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
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
REFEREE_DIRS = (_PACKAGE_ROOT / "referee", _PACKAGE_ROOT / "tournaments")
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"


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
        return "bwrap"
    if mode is SandboxMode.REQUIRED:
        raise SandboxUnavailable(f"--sandbox required, but bubblewrap does not work here: {why}; {INSTALL_HINT}")
    return "off"


def unisolated_warning() -> str | None:
    """The one line ``auto`` prints when it falls back to running bots unisolated."""
    why = probe()
    if why is None:
        return None
    return (f"warning: bots are NOT isolated ({why}): they can read the referee's files and each other's; "
            f"{INSTALL_HINT}, or pass --sandbox off to run unisolated on purpose")


# -- /etc ---------------------------------------------------------------------------------


def _world_readable(path: str) -> bool:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    if stat.S_ISLNK(mode):
        return True
    need = 0o005 if stat.S_ISDIR(mode) else 0o004
    return mode & need == need


@functools.cache
def etc_copy(network: bool) -> Path:
    """A private copy of the allowed ``/etc`` entries, made once per process, bound
    read-only as the sandbox's ``/etc`` in one mount (one bind per entry cost ~5 ms
    of CPU per bot).  Only what every user may read is copied (so not
    ``/etc/ssl/private``): inside, the bot's uid maps to the referee's, which may
    own files it should not see.  Removed when the process exits."""
    root = Path(tempfile.mkdtemp(prefix="referee-etc-"))
    atexit.register(shutil.rmtree, root, True)

    def skip(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if not _world_readable(os.path.join(folder, n))]

    for name in ETC_ALLOWED + (ETC_NETWORK if network else ()):
        src, dst = "/etc/" + name, root / name
        if not (os.path.lexists(src) and _world_readable(src)):
            continue
        try:
            if os.path.islink(src):
                os.symlink(os.readlink(src), dst)
            elif os.path.isdir(src):
                shutil.copytree(src, dst, symlinks=True, ignore=skip)
            else:
                shutil.copy2(src, dst)
        except OSError:
            continue  # unreadable or vanished: the bot simply does not get it
    root.chmod(0o755)
    return root


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


@functools.lru_cache(maxsize=256)
def _resolve_cached(argv: tuple[str, ...], cwd: str) -> Resolved:
    here = Path(cwd)
    prog = argv[0]
    rest = list(argv[1:])
    res = Resolved(argv=[])
    if "/" in prog:  # named by path: the bot's own program, or an interpreter such as a venv's python
        program = here / prog
        if not program.is_file():
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
    script = next((a for a in rest if not a.startswith("-") and (here / a).is_file()), None)
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


def _system_links() -> list[str]:
    """Bind the system directories, keeping merged-/usr symlinks as symlinks."""
    out: list[str] = []
    for d in SYSTEM_DIRS:
        if d == "/usr":
            continue
        if os.path.islink(d):
            out += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            out += ["--ro-bind", d, d]
    return out


def _within(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)


MAX_BINDS = 512  # past this many mounts for one folder, hidden paths are masked instead of left out


def _bind_except(folder: Path, hidden: list[Path], args: list[str], budget: list[int]) -> None:
    """Bind ``folder`` read-only, leaving out every hidden path inside it.

    A folder with a hidden path inside is made in the sandbox and its entries
    are bound one by one, all but the hidden one (recursively along the way to
    it): a hidden path is then simply absent, its name included — a mount over
    it (``--tmpfs``, ``/dev/null``) would show its name in
    ``/proc/self/mountinfo``, and names such as ``back-alley-seed7.jsonl``
    say too much.  Past ``MAX_BINDS`` mounts the rest is masked instead."""
    inside = [h for h in hidden if folder in h.parents]
    if not inside:
        args += ["--ro-bind", str(folder), str(folder)]
        budget[0] -= 1
        return
    try:
        children = sorted(folder.iterdir())
    except OSError:
        return
    if budget[0] < len(children):
        args += ["--ro-bind", str(folder), str(folder)]
        for h in inside:
            args += ["--tmpfs", str(h)] if h.is_dir() else ["--ro-bind", "/dev/null", str(h)]
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
            _bind_except(child, hidden, args, budget)
        else:
            args += ["--ro-bind", str(child), str(child)]
            budget[0] -= 1


@dataclass(frozen=True, slots=True)
class Jail:
    """How to wrap one bot's command: everything but the per-process parts."""

    network: bool = False
    ro_paths: tuple[str, ...] = ()
    own_dir: str | None = None  # the entrant's declared folder, instead of its script's
    hide: tuple[str, ...] = ()  # records, the tournament folder and file
    scratch_mb: int = 64

    def command(self, argv: Sequence[str], cwd: str | None, env: dict[str, str] | None = None) -> list[str]:
        """``bwrap ... -- program args``; ``CannotSandbox`` if the program cannot be found."""
        here = Path(cwd or os.getcwd()).resolve()
        res = resolve_program(argv, here)
        own = Path(self.own_dir).resolve() if self.own_dir else res.own
        ro: list[Path] = []
        for p in [*res.installs, *([own] if own else []), BOT_HELPER_DIR, *(Path(x) for x in self.ro_paths)]:
            p = Path(os.path.abspath(p))
            if p.exists() and not _is_system(p) and p not in ro and p != Path("/"):
                ro.append(p)
        args = ["bwrap", *_namespace_args(network=self.network, disable_userns=_supports_disable_userns()),
                "--ro-bind", "/usr", "/usr", *_system_links()]
        args += ["--ro-bind", str(etc_copy(self.network)), "/etc"]
        size = str(self.scratch_mb << 20)
        # The private tmpfs folders first: a bot's own folder may lie under /tmp.
        args += ["--size", size, "--tmpfs", "/tmp", "--size", size, "--tmpfs", SCRATCH, "--dir", str(here)]
        roots: tuple[str | Path, ...] = (*self.hide, *REFEREE_DIRS)
        hidden = [h for h in (Path(os.path.abspath(x)) for x in roots) if os.path.lexists(h)]
        budget = [MAX_BINDS]
        for p in ro:
            if not _within(p, hidden):
                _bind_except(p, hidden, args, budget)
        # The root itself (bwrap's tmpfs, holding the working folder and the folders made for
        # binds) becomes read-only: only /tmp and /scratch, which have size caps, are writable.
        args += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/", "--chdir", str(here), "--clearenv"]
        path = ":".join(dict.fromkeys([*res.path_dirs, "/usr/local/bin", "/usr/bin", "/bin"]))
        inner = {"PATH": path, "HOME": SCRATCH, "TMPDIR": "/tmp"}
        source = os.environ if env is None else env
        inner.update({k: source[k] for k in ("LANG", "LC_ALL", "TZ", BOT_ID_ENV) if k in source})
        for k, v in inner.items():
            args += ["--setenv", k, v]
        return [*args, "--", *res.argv]
