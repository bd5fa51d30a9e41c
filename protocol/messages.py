"""Every protocol message, defined once.  The JSON Schema is generated from here.

Referee → bot: ``hello``, ``event``, ``request``, ``game_over``.
Bot → referee: ``ready``, ``action``, ``bye``.

Version 2 adds long-lived bots (docs/protocol.md, "Version 2"): in ``ready`` a
bot may say it plays many games (``games``) and serves several tables at once
(``tables``); a bot that says neither is a version-1 bot and is treated as one.
With ``tables`` > 1 every line both ways carries the ``table`` it belongs to.

One JSON object per line, UTF-8, ``\\n``-terminated.  Unknown fields in a
bot's message are refused (``extra="forbid"``), so a typo is caught early.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

PROTOCOL_VERSION = 2
MAX_TABLES = 64  # the most tables one process may serve at once

_STRICT = ConfigDict(extra="forbid", frozen=True)
# Bot input is checked strictly: no "3" for 3, no 3.0 for 3.
_FROM_BOT = ConfigDict(extra="forbid", frozen=True, strict=True)


class TimeLimits(BaseModel):
    model_config = _STRICT
    handshake_ms: int = Field(description="Time allowed between `hello` and `ready`.")
    decision_ms: int = Field(description="Time allowed per decision (request to action).")
    time_bank_ms: int = Field(
        0, description="Extra time for the whole game, drawn on when a decision overruns decision_ms."
    )


class HelloMsg(BaseModel):
    """First message of a game: who you are and what you play."""

    model_config = _STRICT
    type: Literal["hello"] = "hello"
    protocol: int = Field(PROTOCOL_VERSION, description="Protocol version; this document is version 2.")
    game: str = Field(description='"back-alley", "schmier" or "pegs-and-jokers".')
    rules_version: str
    options: dict[str, Any] = Field(description="Game options after defaults, e.g. {\"players\": 4}.")
    seat: int = Field(description="Your seat, 0 … seats-1.")
    team: int = Field(description="Your team number.")
    seats: int = Field(description="Number of seats in the game.")
    teams: list[list[int]] = Field(description="The seats of each team, by team number.")
    limits: TimeLimits
    table: int = Field(
        0, description="This game's table at your process: 0, unless it serves several tables (you said "
        "`tables` > 1): then an id never reused within the process, which every line of this game carries.",
    )


class ReadyMsg(BaseModel):
    """The bot's answer to ``hello``."""

    model_config = _FROM_BOT
    type: Literal["ready"]
    name: str = Field(max_length=200, description="Your bot's name, for logs and records.")
    events: bool = Field(
        True,
        description="Whether to send you `event` messages. A bot that plays from the state in each "
        "request alone may say false to save work.",
    )
    games: Annotated[int, Field(ge=1)] | Literal["many"] = Field(
        1, description='How many games this process plays, one after another: 1 (version 1: the referee '
        'closes your stdin after `game_over`), a number, or "many". Read from the first `ready` only.',
    )
    tables: int = Field(
        1, ge=1, le=MAX_TABLES,
        description="How many games this process plays at once (each at its own `table`); more than 1 "
        "implies many games unless `games` says otherwise. Read from the first `ready` only.",
    )
    table: int | None = Field(None, description="The table of the `hello` this answers (with `tables` > 1).")


class ByeMsg(BaseModel):
    """Instead of ``ready``, to a later ``hello``: this process plays no more games."""

    model_config = _FROM_BOT
    type: Literal["bye"]
    table: int | None = Field(None, description="The table of the `hello` this declines (with `tables` > 1).")


class EventMsg(BaseModel):
    """Something you may see has happened (a deal, a bid, a card played, a score)."""

    model_config = _STRICT
    type: Literal["event"] = "event"
    event: dict[str, Any] = Field(description='Game-specific, always with a "type" key.')


class RequestMsg(BaseModel):
    """Your turn: everything you may know, and every legal action."""

    model_config = _STRICT
    type: Literal["request"] = "request"
    id: int = Field(description="Echo this in your action.")
    seat: int
    decision: str = Field(description='Kind of decision, e.g. "bid", "play", "move".')
    state: dict[str, Any] = Field(description="The complete information state visible to your seat.")
    legal: list[str] = Field(description="Every legal action; reply with exactly one of them.")
    time_ms: int = Field(description="Time you have for this decision, time bank included.")


class ActionMsg(BaseModel):
    """The bot's reply to a ``request``."""

    model_config = _FROM_BOT
    type: Literal["action"]
    id: int = Field(description="The id of the request this answers.")
    table: int | None = Field(None, description="The request's table (required with `tables` > 1).")
    action: str = Field(max_length=1000, description="One of the request's legal actions.")


class GameOverMsg(BaseModel):
    """Last message of a game.  Then your stdin is closed, or (if you play many games) a new ``hello`` may follow."""

    model_config = _STRICT
    type: Literal["game_over"] = "game_over"
    outcome: dict[str, Any] = Field(
        description="status (win/draw/aborted/forfeit), winners (teams), scores (per team), reason, detail."
    )
    result: Literal["win", "loss", "draw", "aborted"] = Field(description="The outcome for your team.")


RefereeMessage = Annotated[
    HelloMsg | EventMsg | RequestMsg | GameOverMsg, Field(discriminator="type")
]
BotMessage = Annotated[ReadyMsg | ActionMsg | ByeMsg, Field(discriminator="type")]
