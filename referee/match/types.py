"""Plain values shared by the match runner, the CLI and tournaments."""

from __future__ import annotations

import enum
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from referee.text import shown

if TYPE_CHECKING:
    from collections.abc import Sequence

    from referee.games import Outcome

MAX_TIME_S = 86_400.0  # the longest handshake, decision or time bank a setting may ask for: one day


class FaultReason(str, enum.Enum):
    """Why a bot forfeited its game.  Documented in docs/misbehaving.md."""

    SPAWN_FAILED = "spawn_failed"  # the command could not be started
    HANDSHAKE_TIMEOUT = "handshake_timeout"  # no `ready` within the handshake limit
    TIMEOUT = "timeout"  # no reply within the decision limit (plus time bank)
    EXITED = "exited"  # the process ended (exit code or signal) during the game
    CLOSED_STDOUT = "closed_stdout"  # stdout closed while the process kept running
    NOT_READING = "not_reading"  # its stdin stayed full: it stopped reading
    INVALID_UTF8 = "invalid_utf8"  # bytes that are not UTF-8
    INVALID_JSON = "invalid_json"  # a line that is not JSON
    WRONG_MESSAGE = "wrong_message"  # JSON of the wrong type or shape
    WRONG_REQUEST = "wrong_request"  # a reply naming another request id
    UNEXPECTED_MESSAGE = "unexpected_message"  # a line when no request was pending
    INVALID_ACTION = "invalid_action"  # action text that is no action of this game at all
    ILLEGAL_ACTION = "illegal_action"  # a well-formed action that is not in the legal list
    LINE_TOO_LONG = "line_too_long"  # a line over the length cap
    PARTIAL_LINE = "partial_line"  # its output ended in the middle of a line (no newline)
    MEMORY_LIMIT = "memory_limit"  # killed for exceeding its memory cap
    CPU_LIMIT = "cpu_limit"  # killed for exceeding its CPU-time cap
    PROCESS_LIMIT = "process_limit"  # killed for running more processes than allowed


_INTERPRETERS = {"python", "python3", "node", "nodejs", "ruby", "perl", "java", "bash", "sh", "pypy3", "uv", "deno"}


#: ``env`` options that take the next argument as their value.
_ENV_OPTIONS_WITH_VALUE = {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}
#: Longest display name kept from a bot's ``ready`` (the rest is cut).
NAME_MAX = 40


def default_bot_name(argv: tuple[str, ...]) -> str:
    """A readable name for a command: the script it runs, else the program.

    An ``env [OPTION]... [NAME=VALUE]...`` prefix is skipped, so
    ``env X=1 ./bot`` is named ``bot``, not ``env``."""
    if Path(argv[0]).name == "env":
        rest = list(argv[1:])
        while rest and (rest[0].startswith("-") or "=" in rest[0]):
            if rest.pop(0) in _ENV_OPTIONS_WITH_VALUE and rest:
                rest.pop(0)
        if rest:
            return default_bot_name(tuple(rest))
    prog = Path(argv[0]).name
    if prog.split(".")[0] in _INTERPRETERS or prog.startswith("python"):
        for arg in argv[1:]:
            if not arg.startswith("-"):
                return Path(arg).stem or prog
    return Path(argv[0]).stem or prog


def display_name(ready_name: object, fallback: str) -> str:
    """The name shown and logged for a bot: the ``name`` of its ``ready``, made safe to
    print (control and other unprintable characters count as spaces, a run of spaces
    becomes one, at most ``NAME_MAX`` characters), or ``fallback`` (its command's
    name) if that leaves nothing."""
    text = ready_name if isinstance(ready_name, str) else ""
    text = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return text[:NAME_MAX].rstrip() or fallback


@dataclass(frozen=True, slots=True)
class BotSpec:
    """How to start one bot process, and what its sandbox lets it reach (docs/security.md)."""

    name: str
    command: tuple[str, ...]
    cwd: str | None = None
    network: bool = False  # opt in to the network (sandboxed bots have none by default)
    ro_paths: tuple[str, ...] = ()  # extra read-only paths in its sandbox (model weights, libraries)
    own_dir: str | None = None  # its own files, instead of the folder of its program or script
    named: bool = False  # ``name`` was given (``--name``): shown as is instead of the bot's ready name
    limits: Limits | None = None  # its own limits, instead of the match's (a tournament entrant's)

    @classmethod
    def from_command_line(cls, text: str, name: str | None = None, cwd: str | None = None) -> BotSpec:
        argv = tuple(shlex.split(text))
        if not argv:
            raise ValueError("empty bot command")
        return cls(name=name or default_bot_name(argv), command=argv, cwd=cwd)

    def to_json(self) -> dict:
        out: dict = {"name": self.name, "command": list(self.command), "cwd": self.cwd}
        if self.network:
            out["network"] = True
        if self.ro_paths:
            out["ro_paths"] = list(self.ro_paths)
        if self.own_dir is not None:
            out["dir"] = self.own_dir
        if self.limits is not None:
            out["limits"] = self.limits.to_json()
        if self.named:
            out["named"] = True
        return out

    @classmethod
    def from_json(cls, data: dict) -> BotSpec:
        return cls(name=data["name"], command=tuple(data["command"]), cwd=data.get("cwd"),
                   network=bool(data.get("network", False)), ro_paths=tuple(data.get("ro_paths", ())),
                   own_dir=data.get("dir"), named=bool(data.get("named", False)),
                   limits=Limits.from_json(data["limits"]) if data.get("limits") is not None else None)


@dataclass(frozen=True, slots=True)
class Limits:
    """Time and resource limits of the bots of a match (docs/misbehaving.md); a bot may carry
    its own (``BotSpec.limits``)."""

    handshake_s: float = 10.0
    decision_s: float = 1.0
    time_bank_s: float = 0.0  # extra time per game drawn on when a decision overruns
    max_line_bytes: int = 1 << 20
    stderr_keep_bytes: int = 1 << 20  # stderr kept per bot; the rest is dropped
    # Address space of each process (RLIMIT_AS) and resident memory of the bot and all
    # its descendants together (watchdog); None = no cap.
    memory_mb: int | None = 1024
    cpu_s: int | None = None  # CPU-time cap per bot process (RLIMIT_CPU); None = no cap
    # Live processes of the bot and its descendants together (watchdog, works for root;
    # not RLIMIT_NPROC, which is per user and counts threads); None = no cap.
    max_processes: int | None = 32
    max_open_files: int | None = 256  # RLIMIT_NOFILE, per process
    grace_s: float = 0.5  # close stdin -> wait this long -> SIGTERM
    term_s: float = 0.5  # SIGTERM -> wait this long -> SIGKILL
    sandbox: str = "auto"  # auto | required | off: bubblewrap isolation (referee.match.bubblewrap)
    scratch_mb: int = 64  # size of each of a sandboxed bot's private tmpfs folders (/tmp, /scratch)

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, data: dict) -> Limits:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


OUTPUT_CAP = 2048  # bytes of a faulting bot's offending output kept in the record


def escape_output(raw: bytes, cap: int = OUTPUT_CAP) -> str:
    """A bot's raw output as printable text: its first ``cap`` bytes, bytes that
    are not UTF-8 written as ``\\xNN``, and what ``referee.text.shown`` escapes (C0,
    DEL, C1, bidi controls) as visible escapes."""
    return shown(raw[:cap].decode("utf-8", "backslashreplace"))


@dataclass(frozen=True, slots=True)
class Fault:
    """A forfeiting bot.  When the fault came while a request of its was pending,
    ``request`` is that request's id and ``legal`` its legal list; ``output`` is the
    offending output (the line, or what arrived of it), escaped and capped
    (``escape_output``), and ``output_bytes`` its full length; ``deal`` or ``turn``
    says where in the game it happened (card games count deals, Pegs and Jokers turns)."""

    seat: int
    reason: FaultReason
    message: str
    stderr_tail: tuple[str, ...] = ()
    request: int | None = None
    legal: tuple[str, ...] | None = None
    output: str | None = None
    output_bytes: int | None = None
    deal: int | None = None
    turn: int | None = None

    def to_json(self) -> dict:
        out: dict = {
            "seat": self.seat,
            "reason": self.reason.value,
            "message": self.message,
            "stderr_tail": list(self.stderr_tail),
        }
        for key in ("request", "output", "output_bytes", "deal", "turn"):
            if (value := getattr(self, key)) is not None:
                out[key] = value
        if self.legal is not None:
            out["legal"] = list(self.legal)
        return out

    @classmethod
    def from_json(cls, data: dict) -> Fault:
        legal = data.get("legal")
        return cls(data["seat"], FaultReason(data["reason"]), data["message"], tuple(data.get("stderr_tail", ())),
                   request=data.get("request"), legal=tuple(legal) if legal is not None else None,
                   output=data.get("output"), output_bytes=data.get("output_bytes"),
                   deal=data.get("deal"), turn=data.get("turn"))


def replay_command(record: Path | str, request: int | None = None) -> str:
    """The command that shows a recorded decision (or, without one, the game)."""
    argv = ["referee", "replay", str(record)]
    if request is not None:
        argv += ["--request", str(request)]
    return shlex.join(argv)


def fault_line(*, game: str, seat: int, who: str, reason: str, message: str, record: Path | str | None,
               request: int | None = None, deal: int | None = None, turn: int | None = None,
               game_id: int | None = None) -> str:
    """The one line that reports a forfeit (``referee play``, ``referee run`` live and
    in its summary): game, seat and bot, deal or turn, request, reason, the record and
    the command that shows the refused request."""
    where = [f"deal {deal}"] if deal is not None else [f"turn {turn}"] if turn is not None else []
    where.append(f"request {request}" if request is not None else "no request pending")
    game_text = f"{game} game {game_id}" if game_id is not None else game
    # The bot's name and the message (which can echo its words) are the bot's: shown escaped.
    text = f"fault: {game_text}, seat {seat} ({shown(who)}), {', '.join(where)}: {shown(reason)}: {shown(message)}"
    if record is not None:
        text += f"; record {record}; replay: {replay_command(record, request)}"
    return text


@dataclass(slots=True)
class MatchResult:
    game: str
    seed: int
    options: dict
    seats: list[BotSpec]
    outcome: Outcome
    fault: Fault | None = None
    decisions: int = 0
    duration_s: float = 0.0
    record_path: Path | None = None
    entries: Sequence[dict] = field(default_factory=list)  # public record entries, for tables
    names: list[str] = field(default_factory=list)  # per seat: what to call the bot (``display_name``)
    sandbox: str = "off"  # how the bots ran: "bwrap" (isolated) or "off"
    # Per seat: how long its replies took, as (decisions, total ms, longest ms). A
    # measurement, not a result: standings.json never depends on it (tournaments.results).
    decision_ms: list[tuple[int, float, float]] = field(default_factory=list)

    @property
    def forfeit(self) -> bool:
        return self.outcome.status == "forfeit"

    def to_json(self) -> dict:
        """Everything but ``entries`` (those are in the record file)."""
        return {
            "game": self.game, "seed": self.seed, "options": self.options,
            "seats": [b.to_json() for b in self.seats], "outcome": self.outcome.to_json(),
            "fault": self.fault.to_json() if self.fault is not None else None,
            "decisions": self.decisions, "duration_s": self.duration_s,
            "record_path": str(self.record_path) if self.record_path is not None else None,
            "sandbox": self.sandbox,
            "decision_ms": [list(t) for t in self.decision_ms],
        }

    @classmethod
    def from_json(cls, data: dict) -> MatchResult:
        from referee.games import Outcome  # here, not above: the CLI's --help imports this module

        return cls(
            game=data["game"], seed=data["seed"], options=dict(data["options"]),
            seats=[BotSpec.from_json(b) for b in data["seats"]], outcome=Outcome.from_json(data["outcome"]),
            fault=Fault.from_json(data["fault"]) if data["fault"] is not None else None,
            decisions=data["decisions"], duration_s=data["duration_s"],
            record_path=Path(data["record_path"]) if data["record_path"] is not None else None,
            sandbox=data.get("sandbox", "off"),
            decision_ms=[(int(c), float(t), float(m)) for c, t, m in data.get("decision_ms", ())],
        )
