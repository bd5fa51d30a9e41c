"""Encode referee messages once; decode bot lines once, into a value.

One encoder per referee message kind: ``encode_hello``, ``encode_event``,
``encode_request``, ``encode_game_over`` (each one line, newline included;
``encode`` is the general form for any model).  ``decode_bot_line`` never
raises on bad input: it returns either a bot message model or a
``Violation`` that says what is wrong with the line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import to_json

from .messages import ActionMsg, BotMessage, ByeMsg, GameOverMsg, HelloMsg, ReadyMsg

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


def encode_hello(hello: HelloMsg) -> bytes:
    """The ``hello`` line that opens a game."""
    return encode(hello)


def encode_request(
    id: int, seat: int, decision: str, state: dict[str, Any], legal: list[str], time_ms: int,
    legal_json: bytes | None = None,
) -> bytes:
    """Hot path: the referee built these values itself, so skip building a model.

    Field for field the ``RequestMsg`` wire form (a test checks that the bytes
    validate as ``RequestMsg`` and equal its own encoding).  ``legal_json``:
    ``legal`` already encoded (``to_json``): the runner encodes it once, for
    the request and for the record's decision line.
    """
    if legal_json is None:
        legal_json = to_json(legal)
    # JSON is compositional: these are the bytes to_json gives for the whole dict.
    return b'{"type":"request","id":%d,"seat":%d,"decision":%b,"state":%b,"legal":%b,"time_ms":%d}\n' % (
        id, seat, to_json(decision), to_json(state), legal_json, time_ms)


def encode_event(event: dict[str, Any] | bytes) -> bytes:
    """An ``EventMsg`` line, from the event's dict or from its JSON already encoded
    (the runner encodes each event once, for the bots and for the record)."""
    if type(event) is not bytes:
        event = to_json(event)
    return b'{"type":"event","event":' + event + b"}\n"


def encode_game_over(outcome: dict[str, Any], result: str) -> bytes:
    """The ``game_over`` line that ends a game: the outcome, and what it means for the bot's team."""
    return encode(GameOverMsg(outcome=outcome, result=result))


def _no_number(text: str) -> None:
    return None


_KEY_TOKENS = {model: [f'"{name}"'.encode() for name in model.model_fields] for model in (ActionMsg, ReadyMsg, ByeMsg)}


def _surely_no_duplicate_keys(line: bytes, msg: Any) -> bool:
    """Fast path for a decoded line: each field's name occurs no more often in the
    line than in the message re-encoded (where every key is once).  A repeated key
    adds an occurrence; escapes could hide one, so a backslash means "not sure"."""
    if b"\\" in line:
        return False
    canonical = msg.model_dump_json(exclude_none=True).encode()
    return all(line.count(token) == canonical.count(token) for token in _KEY_TOKENS[type(msg)])


def duplicate_key(line: bytes) -> str | None:
    """The first key repeated within one JSON object of ``line``, if any.

    The decoder keeps the last of duplicate keys, as most JSON parsers do; a bot
    whose parser keeps the first would mean another action than the one the
    referee read, so a message with a duplicate key is refused.  Called only
    on lines that already decoded, so it is never the first to see bad JSON.
    """
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> None:
        keys = [k for k, _ in items]
        if len(set(keys)) != len(keys):
            found.append(next(k for i, k in enumerate(keys) if k in keys[:i]))

    try:
        json.loads(line, object_pairs_hook=pairs, parse_int=_no_number, parse_float=_no_number,
                   parse_constant=_no_number)
    except (ValueError, RecursionError):
        return None
    return found[0] if found else None


# The form nearly every bot writes for an action, byte for byte: keys in the
# documented order, no spaces, an id without sign or leading zero, an action of
# printable ASCII with nothing to unescape, within ActionMsg's 1000 characters.
# Any line of this form is a valid ActionMsg with exactly these values, so the
# per-decision path can skip the general decoder; every other line takes it.
_PLAIN_ACTION = re.compile(rb'\{"type":"action","id":(0|[1-9][0-9]{0,17}),"action":"([ !#-\[\]-~]{0,1000})"\}')


def decode_plain_action(line: bytes) -> tuple[int, str] | None:
    """``(id, action)`` of a line in the plain action form, else None (use ``decode_bot_line``)."""
    m = _PLAIN_ACTION.fullmatch(line)
    if m is None:
        return None
    return int(m[1]), m[2].decode("ascii")


def decode_bot_line(line: bytes) -> BaseModel | Violation:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Violation("invalid_utf8", f"byte {exc.start} is not UTF-8")
    try:
        msg = BOT_MESSAGE.validate_json(line)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        first = errors[0] if errors else {"type": "?", "msg": str(exc)}
        if first["type"] == "json_invalid":
            return Violation("invalid_json", first["msg"])
        where = ".".join(str(p) for p in first.get("loc", ()))
        return Violation("wrong_message", f"{where}: {first['msg']}" if where else first["msg"])
    except Exception as exc:  # pragma: no cover - defensive: never let a line kill the reader
        return Violation("wrong_message", f"undecodable: {type(exc).__name__}")
    if not _surely_no_duplicate_keys(line, msg) and (key := duplicate_key(line)) is not None:
        return Violation("wrong_message", f"duplicate key {key!r}")
    return msg
