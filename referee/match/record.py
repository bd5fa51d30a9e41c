"""The match record: one JSONL file per game, data rather than diagnostics.

Line kinds (the ``"record"`` key):

* ``header``   game, rules version, options, seed, seats (name, command, cwd, team), limits
* ``event``    an engine event and the seats that may see it (``to``: null = public)
* ``decision`` seat, decision kind, the legal actions offered, the action taken, ms taken
* ``fault``    the seat, reason code, message and last stderr lines of a forfeiting bot
* ``result``   the outcome, decision count, duration

Lines are written as the game goes and flushed at least every 0.1 s
(``runner.RECORD_FLUSH_S``), so a killed referee leaves a valid prefix that
``read_record`` accepts as truncated (a torn last line is dropped).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from pydantic_core import to_json

from referee.errors import UserFault

RECORD_FORMAT = "referee-record/1"


class RecordError(UserFault):
    """The file is not a readable match record: the user's input is at fault."""


class RecordWriter:
    """Appends record lines to a file.  Not async: local file writes are short."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._file: BinaryIO = open(self.path, "wb")

    def write(self, entry: dict[str, Any]) -> None:
        self._file.write(to_json(entry) + b"\n")

    def write_raw(self, line: bytes) -> None:
        self._file.write(line)

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        if not self._file.closed:
            self._file.flush()
            self._file.close()


_TO_TAILS: dict[tuple[int, ...] | None, bytes] = {None: b',"to":null}\n'}  # a handful of seat sets per game


def event_entry_bytes(event_json: bytes, to: tuple[int, ...] | None) -> bytes:
    """A record ``event`` line from an event already encoded once."""
    tail = _TO_TAILS.get(to)
    if tail is None:
        tail = _TO_TAILS[to] = b',"to":' + to_json(list(to)) + b"}\n"
    return b'{"record":"event","event":' + event_json + tail


@dataclass
class Record:
    path: Path
    header: dict[str, Any]
    entries: list[dict[str, Any]] = field(default_factory=list)  # everything after the header
    line_numbers: list[int] = field(default_factory=list)  # 1-based file line of each entry
    result: dict[str, Any] | None = None
    truncated: bool = False
    bad_line: int | None = None  # 1-based line number of an unreadable line, if any

    @property
    def seats(self) -> int:
        return len(self.header.get("seats", []))


def read_record(path: Path) -> Record:
    """Read a record; a torn or missing tail marks it truncated rather than failing."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise RecordError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise RecordError(f"{path}: is a directory, not a record") from None
    except OSError as exc:
        raise RecordError(f"{path}: cannot read ({exc.strerror})") from None
    lines = raw.split(b"\n")
    if not lines or not lines[0].strip():
        raise RecordError(f"{path}: empty file, not a match record")
    try:
        header = json.loads(lines[0])
    except (ValueError, UnicodeDecodeError):
        raise RecordError(f"{path}: not a match record (first line is not JSON)") from None
    if not isinstance(header, dict) or header.get("record") != "header":
        raise RecordError(f"{path}: not a match record (no header line)")
    if header.get("format") != RECORD_FORMAT:
        raise RecordError(f"{path}: unsupported record format {header.get('format')!r} (expected {RECORD_FORMAT})")
    for key in ("game", "seed", "options", "seats"):
        if key not in header:
            raise RecordError(f"{path}: header lacks {key!r}")
    rec = Record(path=path, header=header)
    for i, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            if not isinstance(entry, dict) or not isinstance(entry.get("record"), str):
                raise ValueError
        except (ValueError, UnicodeDecodeError, RecursionError):
            rec.truncated = True
            if i != len(lines):  # not merely a torn last line: a corrupt one
                rec.bad_line = i
            break
        if entry["record"] == "result":
            rec.result = entry
            break
        rec.entries.append(entry)
        rec.line_numbers.append(i)
    if rec.result is None:
        rec.truncated = True
    return rec
