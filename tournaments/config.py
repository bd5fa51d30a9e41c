"""The tournament file: pydantic models, TOML loading and resolution.

``load_file(path)`` reads the TOML into a plain dict, ``parse(data)``
validates it into a ``TournamentConfig`` and ``resolve(config, base_dir)``
checks it against the game registry and the file system and returns the
``Tournament`` the runner plays.  Every problem is a ``ConfigError`` whose
message is one line fit to show the user.

Relative paths in a file (``output``, an entrant's ``cwd``) are relative to
the file's folder, so a tournament file works from any current directory; an
entrant's commands run in its ``cwd``, by default that folder.

Placeholders in an entrant's ``command`` and ``args``, replaced per seat:
``{seed}`` a seed for the bot's own randomness (from the deal seed, the
seat and the entrant's name, see ``schedule.bot_seed``), ``{seat}`` the seat number, ``{game}`` the
game id.  Nothing else in braces is touched.

``format = "gauntlet"`` with ``challengers`` plays only the pairings holding
a challenger; ``rounds`` multiplies the deals per pairing; ``deals`` names a
deals file (``read_deals``) whose seeds replace the secret-derived ones; an
entrant's ``[entrants.limits]`` and ``sandbox`` replace the tournament's for
its bots (``Entrant.limits``, carried to the match runner by its ``BotSpec``).
See docs/tournaments.md and ``schedule``.

``secret_file`` names a file holding a tournament secret (``SECRET_BYTES``
bytes as hex, see ``schedule``), relative to the file's folder like other
paths; without it the runner makes a new secret for a new output directory
and keeps it there.  The secret itself never goes into the tournament file,
``Tournament.identity`` or ``tournament.json``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import secrets
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from referee.errors import UserFault
from referee.games import GAMES, GameError, GameSpec, get_game
from referee.inputs import parse_toml, read_input
from referee.match.bubblewrap import SandboxMode
from referee.match.commands import CommandError, check_command, fill_placeholders
from referee.match.types import MAX_TIME_S, BotSpec, Limits

from .schedule import SECRET_BYTES, SEED_BITS, PlannedGame, ScheduledGame, Shape, bot_seed, plan, schedule

_DEFAULT_LIMITS = Limits()


class ConfigError(UserFault, ValueError):
    """The tournament settings are wrong: the user's fault, one line of text."""


def parse_secret(text: str, source: str) -> bytes:
    """A tournament secret from its hex text (surrounding whitespace ignored)."""
    text = text.strip()
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) != SECRET_BYTES or len(text) != 2 * SECRET_BYTES:
        raise ConfigError(f"{source}: a tournament secret is {2 * SECRET_BYTES} hex digits ({SECRET_BYTES} bytes)")
    return secret


def new_secret() -> bytes:
    return secrets.token_bytes(SECRET_BYTES)


def available_cores() -> list[int]:
    """The cores this process may run on."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return list(range(os.cpu_count() or 1))


def default_jobs() -> int:
    return max(1, len(available_cores()))


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)


#: The largest value each limit accepts.  Past these a setting is a typo (or
#: ``inf``), and the calls that apply it would overflow (``prlimit`` takes
#: bytes in 64 bits, deadlines become milliseconds).  docs/misbehaving.md lists them.
MAX_MEMORY_MB = 1 << 20  # 1 TiB
MAX_CPU_S = 86_400  # one day of CPU time
MAX_PROCESSES = 65_536
MAX_OPEN_FILES = 1 << 20  # Linux's default fs.nr_open, the most a process may be given
MAX_BYTES = 1 << 30  # max_line_bytes, stderr_keep_bytes: 1 GiB
MAX_DEALS = 1_000_000  # games_per_pairing, rounds, and their product: deals per pairing


class LimitsConfig(_Model):
    """Per-bot limits (docs/misbehaving.md); 0 for ``memory_mb``, ``cpu_s``,
    ``max_processes`` or ``max_open_files`` means no cap.  Finite numbers only
    (strict: ``true`` is no number, ``1.5`` no count), within the maxima above;
    ``referee play`` checks its flags with this model too."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)

    handshake_s: float = Field(_DEFAULT_LIMITS.handshake_s, gt=0, le=MAX_TIME_S)
    decision_s: float = Field(_DEFAULT_LIMITS.decision_s, gt=0, le=MAX_TIME_S)
    time_bank_s: float = Field(_DEFAULT_LIMITS.time_bank_s, ge=0, le=MAX_TIME_S)
    memory_mb: int = Field(_DEFAULT_LIMITS.memory_mb or 0, ge=0, le=MAX_MEMORY_MB)
    cpu_s: int = Field(_DEFAULT_LIMITS.cpu_s or 0, ge=0, le=MAX_CPU_S)
    max_line_bytes: int = Field(_DEFAULT_LIMITS.max_line_bytes, ge=1024, le=MAX_BYTES)
    max_processes: int = Field(_DEFAULT_LIMITS.max_processes or 0, ge=0, le=MAX_PROCESSES)
    max_open_files: int = Field(_DEFAULT_LIMITS.max_open_files or 0, ge=0, le=MAX_OPEN_FILES)
    stderr_keep_bytes: int = Field(_DEFAULT_LIMITS.stderr_keep_bytes, ge=0, le=MAX_BYTES)
    scratch_mb: int = Field(_DEFAULT_LIMITS.scratch_mb, ge=1, le=1 << 20)

    @model_validator(mode="before")
    @classmethod
    def _milliseconds(cls, data: Any) -> Any:
        """``decision_ms``, ``handshake_ms`` and ``time_bank_ms`` (whole milliseconds, as
        ``referee play``'s flags) are the same settings as ``decision_s`` and so on."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for ms_key in ("handshake_ms", "decision_ms", "time_bank_ms"):
            if ms_key not in out:
                continue
            s_key = ms_key[:-3] + "_s"
            value = out.pop(ms_key)
            if s_key in out:
                raise ValueError(f"give {ms_key} or {s_key}, not both")
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{ms_key} must be a whole number of milliseconds, got {value!r}")
            out[s_key] = value / 1000
        return out

    def to_limits(self) -> Limits:
        return Limits(
            handshake_s=self.handshake_s,
            decision_s=self.decision_s,
            time_bank_s=self.time_bank_s,
            memory_mb=self.memory_mb or None,
            cpu_s=self.cpu_s or None,
            max_line_bytes=self.max_line_bytes,
            max_processes=self.max_processes or None,
            max_open_files=self.max_open_files or None,
            stderr_keep_bytes=self.stderr_keep_bytes,
            scratch_mb=self.scratch_mb,
        )


EntrantName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]


class EntrantConfig(_Model):
    """One bot program.  ``command`` is a command line (split like a shell
    would, without running one) or a list of arguments; ``args`` are appended."""

    name: EntrantName
    command: str | list[str]
    args: list[str] = Field(default_factory=list)
    cwd: str | None = None
    dir: str | None = Field(None, description="the bot's own files, read-only in its sandbox "
                            "(default: the folder of its program or script)")
    ro_paths: list[str] = Field(default_factory=list, description="more read-only paths in its sandbox")
    network: bool = Field(False, description="let it use the network (marked in the standings)")
    sandbox: SandboxMode | None = Field(None, description="this entrant's sandbox mode (default: the tournament's)")
    limits: LimitsConfig | None = Field(
        None, description="this entrant's limits: the settings given replace the tournament's [limits]")

    @field_validator("command")
    @classmethod
    def _not_empty(cls, value: str | list[str]) -> str | list[str]:
        argv = shlex.split(value) if isinstance(value, str) else value
        if not argv or not argv[0]:
            raise ValueError("the command is empty")
        return value

    def argv(self) -> tuple[str, ...]:
        base = shlex.split(self.command) if isinstance(self.command, str) else list(self.command)
        return (*base, *self.args)


class TournamentConfig(_Model):
    """The tournament file as written.  ``games_per_pairing`` counts deal
    seeds: each is played once per arrangement of the pairing's entrants over
    the teams (2 for two-team games, 6 for Schmier)."""

    game: str
    players: int | None = Field(None, description="shortcut for options.players")
    options: dict[str, Any] = Field(default_factory=dict)
    seed: int = Field(0, ge=0, lt=2**SEED_BITS, description="the tournament seed: 0 to 2**63-1, as a deal seed")
    games_per_pairing: int = Field(1, ge=1, le=MAX_DEALS)
    rounds: int = Field(
        1, ge=1, le=MAX_DEALS, description="times the round robin (or gauntlet) is played, new deals each time")
    format: Literal["round-robin", "gauntlet"] = "round-robin"
    challengers: list[EntrantName] = Field(
        default_factory=list, description="gauntlet: the entrants that play every other entrant")
    deals: str | None = Field(None, description="file of deal seeds, one per line (see read_deals)")
    jobs: int | None = Field(None, ge=1)
    pin_cores: bool = Field(
        True, description="run each game's referee worker and bots on one core (see tournaments/workers.py)")
    output: str | None = None
    sandbox: SandboxMode = Field(
        SandboxMode.AUTO, description="auto | required | off: run each bot in a bubblewrap sandbox (docs/security.md)")
    secret_file: str | None = Field(
        None, description="file holding the tournament secret as hex; default: the output directory's own")
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    entrants: list[EntrantConfig] = Field(min_length=1)
    dask: str | None = Field(None, description="play on a Dask cluster: its scheduler's address "
                             "(tcp://HOST:8786, tls://...) or local:N (docs/distributed.md)")

    batch: int | None = Field(
        None, ge=1, description="Dask only: games per task (a chunk), rounded up to whole duplicate deals; "
        "default: sized from the measured game time so a chunk lasts about 20 s (docs/distributed.md)")
    audit: float = Field(
        0.0, ge=0.0, le=1.0, description="Dask only: share of chunks replayed on another worker and compared "
        "(0 to 1, e.g. 0.02)")
    shared_output: bool = Field(
        False, description="Dask only: the workers see the output folder at the same path; they write records "
        "and stderr logs there themselves (checked with a token file)")

    @field_validator("dask")
    @classmethod
    def _dask_address(cls, value: str | None) -> str | None:
        return None if value is None else check_dask_address(value)

    @field_validator("batch", "audit", "shared_output")
    @classmethod
    def _dask_only(cls, value: Any, info: ValidationInfo) -> Any:
        if value and info.data.get("dask") is None:
            raise ValueError("a setting of Dask runs only (give dask = ADDRESS or --dask ADDRESS)")
        return value


#: Dask settings for the processes of a run's cluster. Both are monitoring, nothing a run needs,
#: and by default they wake a scheduler about 50 times a second: measured, an idle scheduler with
#: two workers burns 19 ms of CPU per second by default and 4 ms with these (docs/distributed.md,
#: "Overhead").  The event loop's health check every second, not every 20 ms; the system monitor
#: (CPU and memory figures for the dashboard) every 5 s, not every 0.5 s.  ``local:N`` clusters and
#: ``referee worker`` use them unless the environment sets them; the docs start ``dask scheduler``
#: with them (``dask_quiet_env``).
DASK_QUIET = {
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
}


def dask_env_name(key: str) -> str:
    """The environment variable ``dask.config`` reads for ``key``."""
    return "DASK_" + key.upper().replace(".", "__").replace("-", "_")


def dask_quiet() -> dict[str, str]:
    """``DASK_QUIET`` less the settings the environment gives already (they stand)."""
    return {k: v for k, v in DASK_QUIET.items() if dask_env_name(k) not in os.environ}


def dask_quiet_env() -> dict[str, str]:
    """``dask_quiet()`` as environment variables, for a ``dask`` process to read."""
    return {dask_env_name(k): v for k, v in dask_quiet().items()}


#: ``jobs`` of a Dask run that does not set it: as many as the cluster can play (``dask_executor``).
CLUSTER_JOBS = 0


def check_dask_address(text: str) -> str:
    """``local:N`` (N >= 1) or a scheduler address, ``[tcp|tls]://HOST:PORT``; else ``ValueError``."""
    text = text.strip()
    if text.startswith("local:"):
        count = text.removeprefix("local:")
        if not count.isdigit() or int(count) < 1:
            raise ValueError(f"{text!r}: local:N needs a number of workers N >= 1")
        return text
    scheme, sep, rest = text.rpartition("://")
    host, colon, port = rest.rpartition(":")
    if (sep and scheme not in ("tcp", "tls")) or not colon or not host or not port.isdigit() \
            or not 0 < int(port) < 65536:
        raise ValueError(f"{text!r}: expected a scheduler address tcp://HOST:PORT (or tls://HOST:PORT) or local:N")
    return text


@dataclass(frozen=True, slots=True)
class Entrant:
    name: str
    argv: tuple[str, ...]
    cwd: Path
    own_dir: Path | None = None
    ro_paths: tuple[str, ...] = ()
    network: bool = False
    # The settings of its own (``[entrants.limits]``, ``sandbox``) as written, and
    # the match limits they make with the tournament's; None: the tournament's.
    overrides: Mapping[str, Any] = field(default_factory=dict)
    limits: Limits | None = None

    def bot_spec(self, *, seat: int, game_seed: int, game_id: int) -> BotSpec:
        values = {"seed": bot_seed(game_seed, seat, self.name), "seat": seat, "game": game_id}
        # named: the entrant's name is what the standings, results and fault lines call it, so the
        # record and its replay do too (not the name the program gives in its ready).
        return BotSpec(name=self.name, named=True, command=fill_placeholders(self.argv, values), cwd=str(self.cwd),
                       network=self.network, ro_paths=self.ro_paths,
                       own_dir=str(self.own_dir) if self.own_dir is not None else None, limits=self.limits)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "argv": list(self.argv), "cwd": str(self.cwd)}
        if self.own_dir is not None:
            out["dir"] = str(self.own_dir)
        if self.ro_paths:
            out["ro_paths"] = list(self.ro_paths)
        if self.network:
            out["network"] = True
        if self.overrides:
            out["limits"] = dict(self.overrides)
        return out


@dataclass(frozen=True, slots=True)
class Tournament:
    """A resolved, checked tournament: everything the runner needs."""

    game: str
    options: dict[str, Any]
    rules_version: str
    num_seats: int
    num_teams: int
    seed: int
    games_per_pairing: int
    limits: Limits
    entrants: tuple[Entrant, ...]
    output: Path
    jobs: int
    pin_cores: bool = True
    dask: str | None = field(default=None, compare=False)  # a scheduler's address or local:N; None: local workers
    batch: int | None = field(default=None, compare=False)  # Dask: games per chunk; None: sized from game time
    audit: float = field(default=0.0, compare=False)  # Dask: share of chunks replayed on another worker
    shared_output: bool = field(default=False, compare=False)  # Dask: workers write to the output folder
    rounds: int = 1
    challengers: tuple[str, ...] = ()  # a gauntlet's; empty: a round robin
    deal_seeds: tuple[int, ...] | None = None  # from the deals file; None: from the seed and the secret
    deals_path: Path | None = field(default=None, compare=False)  # the deals file, hidden from bots
    # The shapes this run grew through, the last one this tournament's own
    # (``output.open_output`` sets it from tournament.json); empty: just its own.
    history: tuple[Shape, ...] = ()
    source: Path | None = field(default=None, compare=False)  # the tournament file, hidden from bots
    secret_path: Path | None = field(default=None, compare=False, repr=False)  # secret_file, hidden too
    # Given explicitly (``secret_file``, ``--secret``) or, once the output
    # directory is open, its own (``output.open_output`` binds it).
    secret: bytes | None = field(default=None, repr=False)
    _schedule: list[ScheduledGame] = field(default_factory=list, compare=False, repr=False)
    _plan: list[PlannedGame] = field(default_factory=list, compare=False, repr=False)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.entrants)

    def hidden_paths(self) -> tuple[Path, ...]:
        """What no sandboxed bot may see, even inside a folder it can read."""
        return (self.output, *(p for p in (self.source, self.secret_path, self.deals_path) if p is not None))

    @property
    def network_entrants(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.entrants if e.network)

    def entrant(self, name: str) -> Entrant:
        return next(e for e in self.entrants if e.name == name)

    def with_secret(self, secret: bytes) -> Tournament:
        return dataclasses.replace(self, secret=secret, _schedule=[])

    def with_history(self, history: tuple[Shape, ...]) -> Tournament:
        return dataclasses.replace(self, history=history, _schedule=[], _plan=[])

    @property
    def format(self) -> str:
        return "gauntlet" if self.challengers else "round-robin"

    @property
    def deals_per_pairing(self) -> int:
        return self.rounds * self.games_per_pairing

    def shape(self) -> Shape:
        """What this tournament's settings alone would play."""
        return Shape(self.names, self.deals_per_pairing, self.challengers)

    def shapes(self) -> tuple[Shape, ...]:
        return self.history or (self.shape(),)

    def plan(self) -> list[PlannedGame]:
        """Every game without its seed (needs no secret)."""
        if not self._plan:
            self._plan.extend(plan(self.shapes(), self.num_teams))
        return self._plan

    def schedule(self) -> list[ScheduledGame]:
        """Every game with its deal seed; needs the secret (``with_secret``)."""
        if self.secret is None:
            raise ValueError("the tournament secret is not known yet: open the output directory first")
        if not self._schedule:
            self._schedule.extend(schedule(self.shapes(), self.num_teams, self.seed, self.secret, self.deal_seeds))
        return self._schedule

    def total_games(self) -> int:
        if not self.history and not self._plan:  # never grew: count without listing every game
            return len(self.shape().pairings(self.num_teams)) * self.deals_per_pairing * math.factorial(self.num_teams)
        return len(self.plan())

    def limits_of(self, name: str) -> Limits:
        """The limits entrant ``name``'s bots play under."""
        return self.entrant(name).limits or self.limits

    @property
    def overrides(self) -> dict[str, dict[str, Any]]:
        """Each entrant's own settings, for those that have some."""
        return {e.name: dict(e.overrides) for e in self.entrants if e.overrides}

    def bots(self, game: ScheduledGame) -> list[BotSpec]:
        return [
            self.entrant(name).bot_spec(seat=seat, game_seed=game.seed, game_id=game.id)
            for seat, name in enumerate(game.seat_entrants(self.num_seats))
        ]

    def identity(self) -> dict[str, Any]:
        """Everything that decides the results; must match to resume a run."""
        return {
            "game": self.game,
            "rules_version": self.rules_version,
            "options": self.options,
            "seed": self.seed,
            "games_per_pairing": self.games_per_pairing,
            "limits": self.limits.to_json(),
            "entrants": [e.to_json() for e in self.entrants],
            **({"rounds": self.rounds} if self.rounds != 1 else {}),
            **({"format": "gauntlet", "challengers": list(self.challengers)} if self.challengers else {}),
            **({"deal_seeds": list(self.deal_seeds)} if self.deal_seeds is not None else {}),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            **self.identity(),
            "num_seats": self.num_seats,
            "num_teams": self.num_teams,
            "total_games": self.total_games(),
            "jobs": self.jobs,
            "pin_cores": self.pin_cores,
            "output": str(self.output),
        }


# ---------------------------------------------------------------------------


def load_file(path: Path) -> dict[str, Any]:
    """The tournament file's TOML: a regular file of at most 1 MB, nested at most ``MAX_DEPTH`` deep."""
    try:
        data = read_input(path, "tournament file", ConfigError)
    except ConfigError as exc:
        if str(exc) == f"{path}: no such file":
            raise ConfigError(f"{path}: no such tournament file") from None
        raise
    return parse_toml(data, str(path), ConfigError)


def parse(data: Mapping[str, Any], source: str = "tournament") -> TournamentConfig:
    try:
        return TournamentConfig.model_validate(dict(data))
    except ValidationError as exc:
        raise ConfigError(f"{source}: {format_validation_error(exc)}") from None


def format_validation_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "(top level)"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown setting"
        elif err["type"] == "string_pattern_mismatch" and "name" in loc:
            msg = "names use letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)"
        parts.append(f"{loc}: {msg}")
    return "; ".join(parts)


def resolve(
    config: TournamentConfig,
    base_dir: Path,
    *,
    games: Mapping[str, GameSpec] | None = None,
    check_commands: bool = True,
) -> Tournament:
    """Check ``config`` against the game registry (and the file system) and
    resolve relative paths against ``base_dir``."""
    registry = GAMES if games is None else games
    spec = _game_spec(config.game, registry)
    options = dict(config.options)
    if config.players is not None:
        if "players" in options and options["players"] != config.players:
            raise ConfigError(f"players = {config.players} contradicts options.players = {options['players']}")
        options["players"] = config.players
    try:
        options = spec.normalize_options(options)
        num_seats, num_teams = spec.num_seats(options), spec.num_teams(options)
    except GameError as exc:
        raise ConfigError(f"{config.game} options: {exc}") from None

    names = [e.name for e in config.entrants]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"entrant names must be distinct: {', '.join(dupes)} appears more than once")
    if len(names) < num_teams:
        raise ConfigError(
            f"{spec.name} has {num_teams} teams, so a {config.format.replace('-', ' ')} needs at least "
            f"{num_teams} entrants (got {len(names)})"
        )
    challengers = _challengers(config, names)

    if config.rounds * config.games_per_pairing > MAX_DEALS:
        raise ConfigError(f"rounds x games_per_pairing is {config.rounds * config.games_per_pairing} deals per "
                          f"pairing; at most {MAX_DEALS}")
    base_dir = base_dir.resolve()
    entrants = []
    for ec in config.entrants:
        cwd = (base_dir / ec.cwd).resolve() if ec.cwd else base_dir
        own_dir = (base_dir / ec.dir).resolve() if ec.dir else None
        ro_paths = tuple(str((base_dir / p).resolve()) for p in ec.ro_paths)
        for path in (*([own_dir] if own_dir else []), *map(Path, ro_paths)):
            if not path.exists():
                raise ConfigError(f"entrant {ec.name!r}: {path} does not exist")
        overrides, limits = _entrant_limits(ec, config)
        entrant = Entrant(ec.name, ec.argv(), cwd, own_dir, ro_paths, ec.network, overrides, limits)
        if check_commands:
            check_entrant(entrant)
        entrants.append(entrant)

    output = Path(config.output) if config.output else Path("runs") / f"{spec.name}-seed{config.seed}"
    secret = _read_secret_file(base_dir / config.secret_file) if config.secret_file else None
    deals_path = (base_dir / config.deals).resolve() if config.deals else None
    deal_seeds = None
    if deals_path is not None:
        deal_seeds = read_deals(deals_path)
        need = config.rounds * config.games_per_pairing
        if len(deal_seeds) < need:
            raise ConfigError(f"deals file {deals_path} has {len(deal_seeds)} deal seeds; the tournament needs "
                              f"{need} (rounds x games_per_pairing)")
        deal_seeds = deal_seeds[:need]
    tournament = Tournament(
        game=spec.name,
        options=options,
        rules_version=str(getattr(spec, "rules_version", "")),
        num_seats=num_seats,
        num_teams=num_teams,
        seed=config.seed,
        games_per_pairing=config.games_per_pairing,
        limits=dataclasses.replace(config.limits.to_limits(), sandbox=config.sandbox.value),
        entrants=tuple(entrants),
        output=(base_dir / output).resolve() if not output.is_absolute() else output,
        jobs=config.jobs or (CLUSTER_JOBS if config.dask else default_jobs()),
        pin_cores=config.pin_cores,
        dask=config.dask,
        batch=config.batch,
        audit=config.audit,
        shared_output=config.shared_output,
        rounds=config.rounds,
        challengers=challengers,
        deal_seeds=deal_seeds,
        deals_path=deals_path,
        secret=secret,
        secret_path=(base_dir / config.secret_file).resolve() if config.secret_file else None,
    )
    if config.batch is not None and config.batch > tournament.total_games():
        raise ConfigError(f"batch = {config.batch} games is more than the whole run ({tournament.total_games()} "
                          "games): give at most that many, or leave it out to size chunks from the game time")
    return tournament


def _challengers(config: TournamentConfig, names: list[str]) -> tuple[str, ...]:
    """A gauntlet's challengers, checked; () for a round robin."""
    if config.format == "round-robin":
        if config.challengers:
            raise ConfigError('challengers are for format = "gauntlet" (this is a round robin)')
        return ()
    if not config.challengers:
        raise ConfigError('format = "gauntlet" needs challengers = ["NAME", ...] (or --gauntlet NAME)')
    unknown = [c for c in config.challengers if c not in names]
    if unknown:
        raise ConfigError(f"challenger {unknown[0]!r} is not an entrant (entrants: {', '.join(names)})")
    return tuple(dict.fromkeys(config.challengers))


def _entrant_limits(ec: EntrantConfig, config: TournamentConfig) -> tuple[dict[str, Any], Limits | None]:
    """An entrant's own settings as written, and the limits they make with the
    tournament's (``None`` when it has none)."""
    overrides: dict[str, Any] = {}
    if ec.limits is not None:
        overrides = ec.limits.model_dump(include=set(ec.limits.model_fields_set))
    if ec.sandbox is not None:
        overrides["sandbox"] = ec.sandbox.value
    if not overrides:
        return {}, None
    own = {k: v for k, v in overrides.items() if k != "sandbox"}
    merged = LimitsConfig.model_validate({**config.limits.model_dump(), **own})
    sandbox = (ec.sandbox or config.sandbox).value
    return overrides, dataclasses.replace(merged.to_limits(), sandbox=sandbox)


def read_deals(path: Path) -> tuple[int, ...]:
    """The deal seeds of a deals file: one integer (0 to 2**63-1) per line;
    blank lines and ``#`` comments (whole line or after a seed) are skipped."""
    label = f"deals file {path}"
    try:
        text = read_input(path, "deals file", ConfigError, label).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{label}: cannot read: {exc}") from None
    seeds: list[int] = []
    for number, line in enumerate(text.splitlines(), 1):
        item = line.split("#", 1)[0].strip()
        if not item:
            continue
        if not (item.isascii() and item.isdigit()) or (seed := int(item)) >> SEED_BITS:
            raise ConfigError(f"deals file {path} line {number}: {_short(item)} is not a deal seed "
                              f"(an integer from 0 to {2**SEED_BITS - 1})")
        seeds.append(seed)
    if not seeds:
        raise ConfigError(f"deals file {path}: holds no deal seeds")
    return tuple(seeds)


def format_deals(game: str, seeds: Sequence[int], comment: str) -> str:
    """A deals file's text: a comment saying what made it, then a seed a line."""
    return f"# {game} deal seeds: {comment}\n" + "".join(f"{seed}\n" for seed in seeds)


def describe_overrides(overrides: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per entrant with settings of its own (``Tournament.overrides``),
    e.g. ``v2: decision_s 2.0, memory_mb 2048``: the plan and the standings say it."""
    return [f"{name}: {', '.join(f'{key} {value}' for key, value in own.items())}"
            for name, own in overrides.items()]


def _read_secret_file(path: Path) -> bytes:
    label = f"secret_file {path}"
    try:
        text = read_input(path, "secret file", ConfigError, label).decode("ascii")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{label}: cannot read: {exc}") from None
    return parse_secret(text, label)


def _game_spec(name: str, registry: Mapping[str, GameSpec]) -> GameSpec:
    if registry is GAMES:
        try:
            return get_game(name)
        except GameError as exc:
            raise ConfigError(str(exc)) from None
    if name not in registry:
        known = ", ".join(sorted(registry)) or "none"
        raise ConfigError(f"unknown game {name!r} (known: {known})")
    return registry[name]


def check_entrant(entrant: Entrant) -> None:
    """Refuse, before any game starts, a command that cannot possibly run:
    a missing working directory, program, or script file (placeholders are
    filled in per game and not checked)."""
    try:
        check_command(entrant.argv, entrant.cwd, placeholders=True)
    except CommandError as exc:
        raise ConfigError(f"entrant {entrant.name!r}: {exc}") from None


def describe_differences(old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Human-readable list of what differs between two JSON-like values."""
    out: list[str] = []
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new), key=str):
            name = f"{prefix}.{key}" if prefix else str(key)
            if key not in old:
                out.append(f"{name} added ({_short(new[key])})")
            elif key not in new:
                out.append(f"{name} removed (was {_short(old[key])})")
            else:
                out.extend(describe_differences(old[key], new[key], name))
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            out.extend(describe_differences(a, b, f"{prefix}[{i}]"))
        return out
    if isinstance(old, list) and isinstance(new, list):
        names = [[x.get("name") if isinstance(x, Mapping) else None for x in v] for v in (old, new)]
        if None not in names[0] + names[1]:
            out.append(f"{prefix} were {', '.join(names[0])}, now {', '.join(names[1])}")
        else:
            out.append(f"{prefix} had {len(old)} items, now {len(new)}")
        return out
    if old != new:
        out.append(f"{prefix or 'value'} was {_short(old)}, now {_short(new)}")
    return out


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
