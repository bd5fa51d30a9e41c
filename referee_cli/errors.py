"""Bad command-line input: a ``UserFault`` (one line on stderr, exit 2).

Mapped to its exit status with every other error in ``referee_cli.main.run``.
"""

from __future__ import annotations

from referee.errors import UserFault


class UserError(UserFault):
    """Bad input from the person at the keyboard (argument, file, config)."""
