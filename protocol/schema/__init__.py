"""Generate the committed JSON Schema: ``python -m protocol.schema``."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import TypeAdapter

from ..messages import PROTOCOL_VERSION, BotMessage, RefereeMessage

SCHEMA_PATH = Path(__file__).with_name("protocol.schema.json")


def build_schema() -> dict:
    referee = TypeAdapter(RefereeMessage).json_schema(ref_template="#/$defs/{model}")
    bot = TypeAdapter(BotMessage).json_schema(ref_template="#/$defs/{model}")
    defs = {**referee.pop("$defs", {}), **bot.pop("$defs", {})}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Referee bot protocol, version {PROTOCOL_VERSION}",
        "description": "One JSON object per line. referee_to_bot: messages a bot reads; "
        "bot_to_referee: messages a bot writes. Generated from protocol/messages.py.",
        "$defs": dict(sorted(defs.items())),
        "referee_to_bot": referee,
        "bot_to_referee": bot,
    }


def render() -> str:
    return json.dumps(build_schema(), indent=2, sort_keys=False) + "\n"
