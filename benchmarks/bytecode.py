"""The environment for measuring a child Python's start-up: every module's bytecode cached.

An installed referee (and each library it uses) runs from cached bytecode
(``__pycache__``, written at install or on the first run).  This machine's
environment sets ``PYTHONDONTWRITEBYTECODE=1``, under which an editable
checkout's own modules are compiled from source on every run while the
libraries in site-packages are not: a start-up benchmark then charges the
referee for compiling itself and its baseline for nothing.  ``cached_env``
gives both the same footing: bytecode for every module (the referee's, the
libraries', the standard library's) in a private cache folder
(``PYTHONPYCACHEPREFIX``, so the checkout stays clean), which the first run of
each measured command fills (``warm_up``).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path


def cached_env(folder: Path) -> dict[str, str]:
    """``os.environ`` with bytecode written to, and read from, ``folder``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(folder)
    return env


def warm_up(argv: Sequence[str], env: dict[str, str], **kw) -> None:
    """Run ``argv`` once so that the modules it imports are in the cache before it is timed."""
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env,
                   timeout=300, **kw)


NOTE = ("bytecode cached for every module, as an installed program runs "
        "(benchmarks/bytecode.py: PYTHONPYCACHEPREFIX, one warm-up run per command)")
