"""The JSON-lines protocol between the referee and bots.

Pure: pydantic models, codec and framing; no trio, no logging.  See
docs/protocol.md for the human description and protocol/schema/ for the JSON
Schema generated from these models.
"""

from .messages import (
    PROTOCOL_VERSION,
    ActionMsg,
    BotMessage,
    EventMsg,
    GameOverMsg,
    HelloMsg,
    ReadyMsg,
    RefereeMessage,
    RequestMsg,
)

__all__ = [
    "PROTOCOL_VERSION", "ActionMsg", "BotMessage", "EventMsg", "GameOverMsg",
    "HelloMsg", "ReadyMsg", "RefereeMessage", "RequestMsg",
]
