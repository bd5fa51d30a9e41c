"""The sandbox's plumbing: finding programs, the bwrap command line, the modes.

The escape attempts themselves are in tests/test_sandbox.py (a hostile bot);
these tests pin how a command is made runnable inside and what is hidden."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from referee.match import bubblewrap
from referee.match.bubblewrap import CannotSandbox, Jail, SandboxUnavailable, resolve_program

from ..conftest import PATIENT_FLAGS

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"


@pytest.fixture
def no_bwrap(monkeypatch, tmp_path):
    """A PATH on which bwrap cannot be found (the probe's cache is reset around it)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("python3", "prlimit", "sh"):
        real = subprocess.run(["which", tool], capture_output=True, text=True).stdout.strip()
        if real:
            (bin_dir / tool).symlink_to(real)
    monkeypatch.setenv("PATH", str(bin_dir))
    bubblewrap.probe.cache_clear()
    yield bin_dir
    monkeypatch.undo()
    bubblewrap.probe.cache_clear()


def test_bubblewrap_works_where_ci_runs():
    """.ci/run installs bubblewrap: in CI the sandbox tests must run, never fall back."""
    why = bubblewrap.probe()
    if os.environ.get("CI"):
        assert why is None, f"bubblewrap does not work in CI: {why}"
    elif why is not None:
        pytest.skip(f"bubblewrap does not work here: {why}")


def test_modes_resolve_to_bwrap_or_off():
    assert bubblewrap.effective_mode("off") == "off"
    if bubblewrap.probe() is None:
        assert bubblewrap.effective_mode("auto") == "bwrap"
        assert bubblewrap.effective_mode("required") == "bwrap"
    with pytest.raises(ValueError):
        bubblewrap.effective_mode("sometimes")


def test_without_bubblewrap_auto_falls_back_with_a_warning_and_required_refuses(no_bwrap):
    assert bubblewrap.probe() == "bwrap is not installed"
    assert bubblewrap.effective_mode("auto") == "off"
    assert "NOT isolated" in bubblewrap.unisolated_warning()
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        bubblewrap.effective_mode("required")


def _referee(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "referee", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120)


def test_play_says_in_one_line_when_bots_are_not_isolated_and_refuses_under_required(no_bwrap, tmp_path):
    env = {**os.environ, "PATH": str(no_bwrap)}
    bot = f"{sys.executable} {RANDOM_BOT}"
    base = ["play", "back-alley", "--bot", bot, "--bot", bot, "--seed", "3", *PATIENT_FLAGS]
    refused = _referee(*base, "--record", str(tmp_path / "r.jsonl"), "--sandbox", "required", env=env)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.strip().count("\n") == 0 and "bubblewrap does not work here" in refused.stderr
    assert "Traceback" not in refused.stderr
    played = _referee(*base, "--record", str(tmp_path / "a.jsonl"), env=env)
    assert played.returncode == 0, played.stderr
    warnings = [line for line in played.stderr.splitlines() if "NOT isolated" in line]
    assert len(warnings) == 1 and "apt-get install bubblewrap" in warnings[0]
    assert "Sandbox: off" in played.stdout
    assert '"sandbox":"off"' in (tmp_path / "a.jsonl").read_text().splitlines()[0]


def test_a_program_is_resolved_on_the_referees_side_with_its_installation_bound():
    res = resolve_program([sys.executable, str(RANDOM_BOT), "7"], ROOT)
    assert res.argv == [sys.executable, str(RANDOM_BOT), "7"]
    assert res.own == RANDOM_BOT.parent
    real = Path(os.path.realpath(sys.executable))
    if not bubblewrap._is_system(real):  # a venv or pyenv Python: its installation is bound
        assert bubblewrap._prefix(real) in res.installs


def test_a_relative_script_and_an_env_shebang_resolve_like_the_shell(tmp_path):
    script = tmp_path / "bot.py"
    script.write_text("#!/usr/bin/env python3\nprint('hi')\n")
    script.chmod(0o755)
    res = resolve_program(["./bot.py", "x"], tmp_path)
    assert Path(res.argv[0]).name.startswith("python3") and res.argv[1:] == [str(script), "x"]
    assert res.own == tmp_path


def test_a_missing_program_or_unexecutable_file_is_named(tmp_path):
    with pytest.raises(CannotSandbox, match="'no-such-interpreter' not found on PATH"):
        resolve_program(["no-such-interpreter", "bot.py"], tmp_path)
    with pytest.raises(CannotSandbox, match="'./missing' not found"):
        resolve_program(["./missing"], tmp_path)
    (tmp_path / "plain").write_text("data")
    with pytest.raises(CannotSandbox, match="not executable"):
        resolve_program(["./plain"], tmp_path)


def test_records_and_tournament_files_inside_a_bots_folder_are_left_out(tmp_path):
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "bot.py").write_text("print()\n")
    out = bots / "runs"
    out.mkdir()
    toml = bots / "t.toml"
    toml.write_text("")
    elsewhere = tmp_path / "records"
    elsewhere.mkdir()
    (bots / "lib").mkdir()
    (bots / "lib" / "helper.py").write_text("")
    # Without the private view, each bind's source is its destination (the view's are below).
    argv = Jail(hide=(str(out), str(toml), str(elsewhere)), view=False).command([sys.executable, "bot.py"], str(bots))
    pairs = list(zip(argv, argv[1:], strict=False))
    # The bot's folder is made inside and its entries bound one by one, the hidden ones left
    # out: not even their names show (a mount over them would, in /proc/self/mountinfo).
    assert ("--dir", str(bots)) in pairs
    assert ("--ro-bind", str(bots / "bot.py")) in pairs and ("--ro-bind", str(bots / "lib")) in pairs
    assert str(out) not in argv and str(toml) not in argv
    assert str(elsewhere) not in argv  # not inside anything bound: nothing to leave out
    assert "--unshare-all" in argv and "--die-with-parent" in argv and ("--uid", "65534") in pairs
    assert "--share-net" not in argv
    assert "--share-net" in Jail(network=True).command([sys.executable, "bot.py"], str(bots))
    assert not any(a.startswith("/etc/shadow") for a in argv)


def test_past_the_mount_budget_hidden_paths_are_masked_instead(tmp_path, monkeypatch):
    monkeypatch.setattr(bubblewrap, "MAX_BINDS", 2)
    bots = tmp_path / "bots"
    bots.mkdir()
    for i in range(5):
        (bots / f"f{i}.py").write_text("")
    secret = bots / "runs"
    secret.mkdir()
    argv = Jail(hide=(str(secret),), view=False).command([sys.executable, "f0.py"], str(bots))
    pairs = list(zip(argv, argv[1:], strict=False))
    assert ("--ro-bind", str(bots)) in pairs and ("--tmpfs", str(secret)) in pairs


def binds(argv: list[str]) -> dict[str, str]:
    """Destination: source of every --ro-bind / --dev-bind of a bwrap command line."""
    return {argv[i + 2]: argv[i + 1] for i, a in enumerate(argv) if a in ("--ro-bind", "--dev-bind")}


@pytest.mark.skipif(bubblewrap.view_problem() is not None, reason="no private view here (needs root)")
def test_with_the_private_view_every_host_file_is_bound_from_this_process_s_own_overlay(tmp_path):
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "bot.py").write_text("print()\n")
    (bots / "runs").mkdir()
    shared = binds(Jail(hide=(str(bots / "runs"),), view=False).command([sys.executable, "bot.py"], str(bots)))
    argv = Jail(hide=(str(bots / "runs"),)).command([sys.executable, "bot.py"], str(bots))
    private = binds(argv)
    # The same places inside, plus bwrap's device nodes, each from the view's mounts, none from the host.
    assert set(private) == set(shared) | {f"/dev/{n}" for n in bubblewrap.DEV_NODES if os.path.exists(f"/dev/{n}")}
    view_root = str(bubblewrap._private_dir() / "view") + "/"
    assert all(source.startswith(view_root) for source in private.values()), private
    assert argv[:4] == [shutil.which("unshare"), "--mount", "--propagation", "private"]  # mounts of its own
    assert ("--seccomp", str(bubblewrap.SECCOMP_FD)) in list(zip(argv, argv[1:], strict=False))


@pytest.mark.skipif(bubblewrap.probe() is not None and not os.environ.get("CI"), reason="needs bubblewrap")
def test_inside_the_sandbox_a_hidden_record_is_absent_name_and_all(tmp_path):
    bots = tmp_path / "bots"
    (bots / "records").mkdir(parents=True)
    record = bots / "records" / "back-alley-seed424242.jsonl"
    record.write_text('{"seed": 424242}\n')
    (bots / "bot.py").write_text(
        "import os, sys\n"
        "print(os.path.exists(sys.argv[1]), os.listdir(os.path.dirname(sys.argv[1])),\n"
        "      '424242' in open('/proc/self/mountinfo').read(), os.path.exists('bot.py'))\n")
    argv = Jail(hide=(str(record),)).command([sys.executable, "bot.py", str(record)], str(bots))
    out = subprocess.run(argv, cwd=bots, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "[]", "False", "True"]


def test_the_sandboxs_etc_is_a_copy_of_the_allow_list_without_secrets():
    etc = bubblewrap.etc_copy(False)
    names = set(os.listdir(etc))
    assert "passwd" in names and "ld.so.cache" in names
    assert not names & {"shadow", "gshadow", "sudoers", "ssh", "resolv.conf"}
    if os.path.isdir("/etc/ssl/private"):
        assert not (etc / "ssl" / "private").exists()  # not readable by everyone: not copied
    assert "resolv.conf" in os.listdir(bubblewrap.etc_copy(True)) or not os.path.exists("/etc/resolv.conf")
    argv = Jail(view=False).command([sys.executable, str(RANDOM_BOT)], str(ROOT))
    assert [a for a in argv if a.startswith("/etc")] == ["/etc"]  # one mount


def _etc_copy_in_a_new_process(tmp: Path) -> Path:
    code = "from referee.match import bubblewrap; print(bubblewrap.etc_copy(False))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT,
                         env={**os.environ, "TMPDIR": str(tmp)})
    assert out.returncode == 0, out.stderr
    return Path(out.stdout.strip())


def test_referee_processes_share_one_etc_copy_until_etc_changes(tmp_path):
    first = _etc_copy_in_a_new_process(tmp_path)
    assert first.parent == tmp_path and first.name.startswith(f"referee-etc-{os.geteuid()}-")
    assert "passwd" in os.listdir(first) and not [p for p in tmp_path.iterdir() if "-new-" in p.name]
    again = _etc_copy_in_a_new_process(tmp_path)
    assert again == first and again.stat().st_ino == first.stat().st_ino  # used, not rebuilt
    assert first.exists(), "a shared copy outlives the process that made it"
    # What it holds names it: a copy of another /etc (here: another allow-list) is another folder.
    plan = bubblewrap._etc_plan(bubblewrap.ETC_ALLOWED)
    assert plan != bubblewrap._etc_plan(bubblewrap.ETC_ALLOWED[:-1])
    assert ("passwd", "f") in [(rel, kind) for rel, kind, _ in plan]
    assert not [rel for rel, _, _ in plan if rel.startswith("ssl/private")]


def test_a_shared_etc_copy_that_others_may_change_is_not_used(tmp_path):
    shared = _etc_copy_in_a_new_process(tmp_path)
    planted = shared / "passwd"
    planted.write_text("evil:x:0:0::/:/bin/sh\n")
    shared.chmod(0o777)  # anyone could have put that there
    private = _etc_copy_in_a_new_process(tmp_path)
    assert private != shared and private.parent == tmp_path
    assert not private.exists(), "a private copy is removed when its process exits"


def test_the_cli_says_when_a_sandbox_has_no_cgroup_caps(monkeypatch):
    from referee.match import cgroups
    from referee_cli.common import describe_isolation

    assert describe_isolation("off") == "off"
    monkeypatch.setattr(cgroups, "available", lambda: "cgroups are not writable here (Read-only file system)")
    assert describe_isolation("bwrap") == "bwrap, no cgroup caps: cgroups are not writable here (Read-only file system)"
    monkeypatch.setattr(cgroups, "available", lambda: None)
    assert describe_isolation("bwrap") == "bwrap"
