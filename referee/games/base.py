"""The game contract every engine implements (OpenSpiel / pgx shape).

Engines are pure and synchronous: a game is a deterministic function of
(seed, options, actions).  Nothing in ``referee.games`` may import trio,
logging/structlog or the ``protocol`` package (``tests/test_layering.py``).

Shape
-----
* ``GameSpec`` describes a game: its registry name, rules version, seat and
  team layout for some options, its notation (``action_type``, a
  ``ParsedAction``: action text to value and back), and ``new_game(seed,
  options)`` which returns the initial ``GameState`` plus the events that
  creating it produced (the first deal, for instance).
* ``GameSpec.determinize(view, rng)`` draws a full ``GameState`` among the
  hidden states consistent with one seat's ``View`` (what that seat was
  sent), for search bots; ``InconsistentView`` when none fits.
* ``GameState`` is the running game.  ``to_act()`` names the seat that must
  decide (``None`` once the game is over), ``decision()`` says what kind of
  decision it is (``"bid"``, ``"play"``, ...), ``legal_actions()`` lists every
  legal action as canonical text in a deterministic order, ``apply(action)``
  advances the game *in place* and returns the events it produced (it raises
  ``InvalidAction`` for text that does not parse and ``IllegalAction`` for a
  well-formed action that is not legal now, leaving the state untouched),
  ``observe(seat)`` returns the complete information state visible to that
  seat as JSON-able data, and ``outcome()`` is ``None`` until the game ends.

``apply`` mutates: the per-decision path of a 25-deal Back Alley game runs
~800 times per game and copying state each time would dominate it.  Callers
that need an old state keep a ``clone()``.

Events are JSON-able dicts with a ``"type"`` key, wrapped in ``Event`` with
the set of seats allowed to see them (``to=None`` means public).  The match
record stores every event (it is the referee's god view); bots only receive
the events addressed to them.
"""

from __future__ import annotations

import abc
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Self

from referee.errors import UserFault

Action = str
JSON = Any


class GameError(Exception):
    """Base class for errors raised by game engines."""


class InvalidAction(GameError, ValueError):
    """The action text does not parse: the caller's (bot's) fault."""


class IllegalAction(GameError, ValueError):
    """The action parses but is not legal in this state: the caller's fault."""


class InvalidOptions(GameError, UserFault, ValueError):
    """Game options are unknown or out of range: the user's fault."""


class InconsistentView(GameError, ValueError):
    """No hidden state fits this view (a corrupted or hand-made view)."""


class ParsedAction(abc.ABC):
    """An action as a value, with its text both ways (the one notation shape).

    Every game's ``notation`` module has one root class ``Action`` (the
    spec's ``action_type``) under this one: ``Action.from_text(text)`` parses
    canonical action text and raises ``InvalidAction`` for text that is no
    action of the game; ``value.text()`` writes it back.  For every text a
    game offers, ``from_text(text).text() == text``.  On a subclass (a Back
    Alley ``Bid``, say) ``from_text`` also refuses the text of other kinds.
    Whether a well-formed action is legal *now* is the state's business.
    """

    __slots__ = ()

    @classmethod
    def from_text(cls, text: object) -> Self:
        value = cls._parse(text)
        if not isinstance(value, cls):
            raise InvalidAction(f"{text!r} is a {type(value).__name__}, not a {cls.__name__}")
        return value

    @classmethod
    @abc.abstractmethod
    def _parse(cls, text: object) -> ParsedAction:
        """The value of any action text of the game; ``InvalidAction`` for text that is none."""

    @abc.abstractmethod
    def text(self) -> str:
        """The canonical action text of this value."""


def team_of_seat(seat: int, num_teams: int) -> int:
    """The team of ``seat`` in a game of ``num_teams`` teams: ``seat mod num_teams``
    (RULES.md 0.2, every game), so partners never sit side by side."""
    return seat % num_teams


def merge_options(game: str, options: Mapping[str, JSON] | None, defaults: Mapping[str, JSON]) -> dict[str, JSON]:
    """``defaults`` overridden by ``options``; refuses a non-mapping and unknown keys."""
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise InvalidOptions(f"{game} options must be an object, not {type(options).__name__}")
    unknown = sorted(map(str, set(options) - set(defaults)))
    if unknown:
        raise InvalidOptions(f"unknown {game} option(s): {', '.join(unknown)} (known: {', '.join(defaults)})")
    return {**defaults, **options}


def positive_int(name: str, value: JSON) -> int:
    """``value`` if it is an integer ≥ 1 (not a bool), else ``InvalidOptions``."""
    if type(value) is not int or value < 1:
        raise InvalidOptions(f"{name} must be an integer ≥ 1, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened.  ``data`` is a JSON-able dict with ``"type"``.

    ``to`` is ``None`` for a public event, otherwise the tuple of seats that
    may see it (e.g. a player's own hand).
    """

    data: dict[str, JSON]
    to: tuple[int, ...] | None = None

    def visible_to(self, seat: int) -> bool:
        return self.to is None or seat in self.to


OutcomeStatus = Literal["win", "draw", "aborted", "forfeit"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended.

    ``winners`` lists team numbers (empty for a draw or an abort); ``scores``
    holds each team's final score (game-defined units; Pegs and Jokers counts
    pegs home).  ``reason`` is a short code ("target_reached", "max_redeals",
    "timeout", ...); ``detail`` is free-form JSON-able data.  Forfeits are
    produced only by the match runner, never by an engine.
    """

    status: OutcomeStatus
    winners: tuple[int, ...]
    scores: tuple[int, ...]
    reason: str = ""
    detail: dict[str, JSON] = field(default_factory=dict)

    def to_json(self) -> dict[str, JSON]:
        return {
            "status": self.status,
            "winners": list(self.winners),
            "scores": list(self.scores),
            "reason": self.reason,
            "detail": self.detail,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> Outcome:
        return cls(
            status=data["status"],
            winners=tuple(data["winners"]),
            scores=tuple(data["scores"]),
            reason=data.get("reason", ""),
            detail=dict(data.get("detail", {})),
        )


@dataclass(frozen=True, slots=True)
class View:
    """What one seat knows: exactly what that seat was sent.

    ``state`` is the seat's information state, ``GameState.observe(seat)``
    (a decision request's ``state``); ``options`` the game's options as the
    spec normalised them; ``events`` the event dicts this seat was sent so
    far, for a game whose state alone does not say everything the seat saw
    (each game's ``determinize`` module says whether it reads them).
    """

    seat: int
    options: Mapping[str, JSON]
    state: Mapping[str, JSON]
    events: tuple[Mapping[str, JSON], ...] = ()


class GameState(abc.ABC):
    """A running game.  See the module docstring for the contract."""

    num_seats: int
    num_teams: int

    def team_of(self, seat: int) -> int:
        return team_of_seat(seat, self.num_teams)

    @abc.abstractmethod
    def to_act(self) -> int | None: ...

    @abc.abstractmethod
    def decision(self) -> str:
        """Kind of the pending decision, e.g. "bid", "trump", "discard", "play", "move"."""

    @abc.abstractmethod
    def legal_actions(self) -> list[Action]: ...

    @abc.abstractmethod
    def apply(self, action: Action) -> list[Event]: ...

    @abc.abstractmethod
    def observe(self, seat: int) -> dict[str, JSON]: ...

    @abc.abstractmethod
    def outcome(self) -> Outcome | None: ...

    @abc.abstractmethod
    def clone(self) -> GameState: ...

    def is_over(self) -> bool:
        return self.outcome() is not None


class GameSpec(abc.ABC):
    """Static description of a game plus its constructor."""

    name: ClassVar[str]  # registry name, e.g. "back-alley"
    title: ClassVar[str]  # human name, e.g. "Back Alley"
    rules_version: ClassVar[str]  # bumps when RULES.md changes for this game or its events change
    action_type: ClassVar[type[ParsedAction]]  # the notation: action text <-> value

    @abc.abstractmethod
    def normalize_options(self, options: Mapping[str, JSON]) -> dict[str, JSON]:
        """Fill defaults and validate; raise ``InvalidOptions`` on bad input."""

    @abc.abstractmethod
    def num_seats(self, options: Mapping[str, JSON]) -> int: ...

    @abc.abstractmethod
    def num_teams(self, options: Mapping[str, JSON]) -> int: ...

    def team_of(self, seat: int, options: Mapping[str, JSON]) -> int:
        return team_of_seat(seat, self.num_teams(options))

    @abc.abstractmethod
    def new_game(
        self, seed: int, options: Mapping[str, JSON] | None = None
    ) -> tuple[GameState, list[Event]]:
        """Initial state for ``seed`` and the events its creation produced."""

    @abc.abstractmethod
    def determinize(self, view: View, rng: random.Random) -> GameState:
        """A full state drawn (from ``rng`` only) among the hidden states ``view`` allows.

        The sample is the engine's own state class (``legal_actions``,
        ``apply``, ``clone`` and ``outcome`` work on it, for search rollouts)
        and agrees with everything the seat was sent:
        ``sample.observe(view.seat) == view.state``, the same seat to act, and
        on the seat's own turn the same legal actions.  What the seat cannot
        know (other hands, the order of the stock, later shuffles) is random.
        Reads nothing but ``view``: equal views and equal ``rng`` states give
        equal samples.  Raises ``InconsistentView`` (never hangs) when no
        hidden state fits the view.  Each game's ``determinize`` module says
        what it reads, what it infers and what "the future" is in a sample.
        """
