"""The JSON-lines protocol between the referee and bots.

Pure: pydantic models, codec, framing and the conversation state machine
(``protocol.machine``); no trio, no logging.  See
docs/protocol.md for the human description and protocol/schema/ for the JSON
Schema generated from these models.

The message models are imported lazily, so that a bot using only
``protocol.bot`` does not pay for importing pydantic at start-up.
"""

from __future__ import annotations

from typing import Any

_MESSAGES = (
    "PROTOCOL_VERSION", "ActionMsg", "BotMessage", "EventMsg", "GameOverMsg",
    "HelloMsg", "ReadyMsg", "RefereeMessage", "RequestMsg",
)

__all__ = list(_MESSAGES)


def __getattr__(name: str) -> Any:
    if name in _MESSAGES:
        from . import messages

        return getattr(messages, name)
    raise AttributeError(f"module 'protocol' has no attribute {name!r}")
