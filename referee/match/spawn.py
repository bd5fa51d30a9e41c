"""Start a bot's process from the event loop's own thread.

Why not ``trio.lowlevel.open_process``: it calls ``subprocess.Popen`` in a
worker thread, so the new process's parent *thread* is that worker. Linux
delivers a ``PR_SET_PDEATHSIG`` signal when the parent thread exits, not the
parent process, and bubblewrap's ``--die-with-parent`` is exactly that
(SIGKILL). Trio retires an idle worker thread after ten seconds, so every
sandboxed bot still running ten-odd seconds after that thread last worked was
killed with SIGKILL in the middle of its game (a long Schmier game, or any
bot that lives for many games). Spawning here, on the thread that runs
``trio.run`` and lives as long as the referee, keeps ``--die-with-parent``
meaning "dies with the referee".

``Popen`` without a ``preexec_fn`` uses ``vfork``: it blocks the loop for
about a millisecond, which is what spawning a bot costs anyway.

This uses two of Trio's internals (its pipe helpers and ``Process._create``),
pinned by the ``trio`` range in ``pyproject.toml`` and exercised by every test
that starts a bot; ``tests/match/test_spawn.py`` holds the reason itself.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any

import trio
from trio._subprocess_platform import create_pipe_from_child_output, create_pipe_to_child_stdin


def open_process(argv: Sequence[str], **options: Any) -> trio.Process:
    """Like ``trio.lowlevel.open_process(argv, stdin=PIPE, stdout=PIPE, stderr=PIPE, **options)``,
    but the child is forked by the calling (event-loop) thread."""
    with ExitStack() as always, ExitStack() as on_fail:
        trio_stdin, child_stdin = create_pipe_to_child_stdin()
        always.callback(os.close, child_stdin)
        on_fail.callback(trio_stdin.close)
        trio_stdout, child_stdout = create_pipe_from_child_output()
        always.callback(os.close, child_stdout)
        on_fail.callback(trio_stdout.close)
        trio_stderr, child_stderr = create_pipe_from_child_output()
        always.callback(os.close, child_stderr)
        on_fail.callback(trio_stderr.close)
        popen = subprocess.Popen(list(argv), stdin=child_stdin, stdout=child_stdout, stderr=child_stderr, **options)
        on_fail.pop_all()
    return trio.Process._create(popen, trio_stdin, trio_stdout, trio_stderr)
