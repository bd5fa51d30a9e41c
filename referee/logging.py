"""structlog configured for diagnostics on stderr (or a file) — never stdout.

stdout belongs to the user's pipes and bots' stdin/stdout to the protocol;
the match record is data and is written separately.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

#: What ``import structlog`` would load for its development console (``structlog.dev``'s rich
#: tracebacks, ``structlog.tracebacks``' pretty-printer): optional there, unused here (lines
#: are key=value text), and 0.1-0.15 s of CPU in every process that logs: each referee, each
#: game worker. Importing structlog through this module leaves them out: while structlog is
#: imported they read as absent (rich itself, if the process has not loaded it), then the
#: entries are dropped, so rich imports normally afterwards. The rest of the referee imports
#: ``structlog`` from here.
_NOT_FOR_STRUCTLOG = ("rich", "rich.traceback", "rich.pretty")
_blocked = [name for name in _NOT_FOR_STRUCTLOG if "structlog" not in sys.modules and name not in sys.modules]
for _name in _blocked:
    sys.modules[_name] = None  # type: ignore[assignment]  # the import system's mark for "absent"
try:
    import structlog
finally:
    for _name in _blocked:
        if _name in sys.modules and sys.modules[_name] is None:
            del sys.modules[_name]

from referee.text import shown  # noqa: E402  (after structlog, which the lines above prepare)

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
_level = "warning"


def configure_logging(level: str = "warning", stream: TextIO | None = None) -> None:
    """Send structlog output to ``stream`` (default stderr) at ``level``."""
    global _level
    _level = level if level in _LEVELS else "warning"
    stream = stream or sys.stderr
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _SafeRenderer(structlog.processors.KeyValueRenderer(key_order=["timestamp", "level", "event"],
                                                                sort_keys=True)),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS.get(level, logging.WARNING)),
        # One write per line (WriteLogger), not print's two: with PYTHONUNBUFFERED the text and
        # its newline would be two system calls, and lines of workers sharing stderr could merge.
        logger_factory=structlog.WriteLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )


class _SafeRenderer:
    """The line ``renderer`` makes, passed through ``referee.text.shown``: a log line can carry
    a bot's words (a fault message, a name, a line a worker could not read), and the
    renderer's ``repr`` of values leaves keys and the bidi marks of some objects alone."""

    def __init__(self, renderer: structlog.processors.KeyValueRenderer) -> None:
        self.renderer = renderer

    def __call__(self, logger: object, name: str, event_dict: structlog.typing.EventDict) -> str:
        return shown(self.renderer(logger, name, event_dict))


def current_level() -> str:
    """The level last given to ``configure_logging`` (for child processes to match)."""
    return _level


def ensure_configured() -> None:
    """Apply the stderr default unless the application configured structlog itself."""
    if not structlog.is_configured():
        configure_logging()
