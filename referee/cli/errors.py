"""Errors for the user: one line on stderr, a non-zero exit, no traceback."""

from __future__ import annotations


class UserError(Exception):
    """Bad input from the person at the keyboard (argument, file, config)."""

    exit_code = 2
