"""Shared pieces of the determinizer tests (one file per game uses them)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from referee.games import View

#: A script that feeds the views on stdin (one JSON object a line: seat,
#: options, state) to a game's determinizer and prints one line per view:
#: ``InconsistentView`` or ``sampled``.  Run in a subprocess with a time
#: bound, so a sampler that hangs fails the test instead of hanging the suite.
_SCRIPT = textwrap.dedent(
    """
    import json, random, sys
    from referee.games import GAMES, InconsistentView, View
    spec = GAMES[sys.argv[1]]
    for line in sys.stdin:
        v = json.loads(line)
        try:
            spec.determinize(View(v["seat"], v["options"], v["state"], tuple(v.get("events", ()))),
                             random.Random(1))
        except InconsistentView as exc:
            print("InconsistentView", str(exc).replace("\\n", " "))
        else:
            print("sampled")
    """
)


def determinize_in_subprocess(game: str, views: list[View], timeout: float = 120) -> list[str]:
    """Each view's result line from a fresh interpreter (``subprocess.TimeoutExpired`` on a hang)."""
    lines = "".join(
        json.dumps({"seat": v.seat, "options": dict(v.options), "state": v.state, "events": list(v.events)}) + "\n"
        for v in views
    )
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, game], input=lines, capture_output=True, text=True, timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()
