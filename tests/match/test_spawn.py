"""A sandboxed bot lives as long as its game, however long that is.

bubblewrap's ``--die-with-parent`` is a parent-death signal, which Linux sends
when the parent *thread* exits. Trio's ``open_process`` forks from a worker
thread that Trio retires after ten idle seconds, and so every sandboxed bot
was killed with SIGKILL ten-odd seconds into a quiet stretch (found as long
Schmier games forfeited by "killed by SIGKILL"). ``referee.match.bot._Child``
forks from the event loop's thread instead.
"""

from __future__ import annotations

import pytest

from referee.match.bubblewrap import probe
from referee.match.runner import run_match
from referee.match.types import Limits

from .conftest import listener, random_bot

pytestmark = pytest.mark.slow


@pytest.mark.skipif(probe() is not None, reason="bubblewrap cannot run here")
async def test_a_sandboxed_bot_outlives_the_thread_that_spawned_it(tmp_path):
    # The first decision takes 13 s: Trio's spawning thread has been idle more
    # than 10 s by then, and the bots must still be alive to finish the game.
    slow = listener(slow_n=1, slow_s=13.0)
    others = [random_bot(seed=s) for s in range(3)]
    limits = Limits(decision_s=20.0, sandbox="required")
    result = await run_match("back-alley", {}, [slow, *others], seed=1, limits=limits,
                             stderr_dir=tmp_path / "stderr")
    assert result.fault is None, result.fault
    assert result.outcome.status != "forfeit"
