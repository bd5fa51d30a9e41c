"""Encode referee messages once; decode bot lines once, into a value.

``decode_bot_line`` never raises on bad input: it returns either a bot
message model or a ``Violation`` that says what is wrong with the line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import to_json

from .messages import BotMessage, EventMsg, RequestMsg

BOT_MESSAGE: TypeAdapter = TypeAdapter(BotMessage)


@dataclass(frozen=True, slots=True)
class Violation:
    """A line that is not an acceptable bot message.

    ``kind`` is one of "invalid_utf8", "invalid_json", "wrong_message".
    """

    kind: str
    detail: str


def encode(msg: BaseModel) -> bytes:
    """One message as one UTF-8 line, newline included."""
    return msg.model_dump_json().encode() + b"\n"


def encode_request(
    id: int, seat: int, decision: str, state: dict[str, Any], legal: list[str], time_ms: int
) -> bytes:
    """Hot path: the referee built these values itself, so skip building a model.

    Field for field the ``RequestMsg`` wire form (a test checks that the bytes
    validate as ``RequestMsg`` and equal its own encoding).
    """
    return to_json({
        "type": "request", "id": id, "seat": seat, "decision": decision,
        "state": state, "legal": legal, "time_ms": time_ms,
    }) + b"\n"


def encode_event(event: dict[str, Any]) -> bytes:
    """An ``EventMsg`` line (the runner splices already-encoded events the same way)."""
    return b'{"type":"event","event":' + to_json(event) + b"}\n"


def decode_bot_line(line: bytes) -> BaseModel | Violation:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Violation("invalid_utf8", f"byte {exc.start} is not UTF-8")
    try:
        return BOT_MESSAGE.validate_json(line)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        first = errors[0] if errors else {"type": "?", "msg": str(exc)}
        if first["type"] == "json_invalid":
            return Violation("invalid_json", first["msg"])
        where = ".".join(str(p) for p in first.get("loc", ()))
        return Violation("wrong_message", f"{where}: {first['msg']}" if where else first["msg"])
    except Exception as exc:  # pragma: no cover - defensive: never let a line kill the reader
        return Violation("wrong_message", f"undecodable: {type(exc).__name__}")
