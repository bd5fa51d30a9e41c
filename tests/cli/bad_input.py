"""Helpers for the bad-input property tests: run the CLI in-process, and check the answer."""

from __future__ import annotations

import contextlib
import io
import signal
from collections.abc import Iterator

from referee_cli.main import run

HANG_S = 30  # one example (every mode it runs) taking longer than this is a hang


@contextlib.contextmanager
def no_hang(seconds: int = HANG_S) -> Iterator[None]:
    """Fail (``TimeoutError``) instead of hanging when the body takes longer than ``seconds``."""

    def fire(signum, frame):
        raise TimeoutError(f"hung for more than {seconds} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def referee_in_process(*args) -> tuple[int, str, str]:
    """``referee ARGS`` in this process: (exit status, stdout, stderr)."""
    # stdout with a byte buffer under it, as a real one has (``replay --request`` writes bytes).
    raw, err = io.BytesIO(), io.StringIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", write_through=True)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run([str(a) for a in args])
    out.flush()
    return code, raw.getvalue().decode("utf-8", "backslashreplace"), err.getvalue()


def assert_clear_answer(code: int, stderr: str, allowed: set[int], context: object = "") -> None:
    """An allowed exit status, no traceback, never an internal error; a refusal is one line."""
    assert "Traceback" not in stderr and "internal error" not in stderr, (context, stderr)
    assert code in allowed, (context, code, stderr)
    if code == 2:
        lines = [line for line in stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("referee: error: "), (context, stderr)


def json_paths(value, prefix=(), limit=None):
    """Every path (a tuple of keys and indices) inside a JSON value, the value itself first;
    of a list, its first ``limit`` items (all when None)."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from json_paths(v, prefix + (k,), limit)
    elif isinstance(value, list):
        for i, v in enumerate(value if limit is None else value[:limit]):
            yield from json_paths(v, prefix + (i,), limit)


def json_set(value, path, new):
    """A copy of ``value`` with ``new`` at ``path`` (``json_paths``)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: json_set(value[head], rest, new)}
    copy = list(value)
    copy[head] = json_set(copy[head], rest, new)
    return copy


def json_delete(value, path):
    """A copy of ``value`` without what is at ``path`` (not empty)."""
    head, rest = path[0], path[1:]
    if rest:
        return json_set(value, (head,), json_delete(value[head], rest))
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k != head}
    return [v for i, v in enumerate(value) if i != head]
