"""referee.text.shown: the one function bot-controlled text passes before a terminal."""

from __future__ import annotations

import io

import pytest
import structlog

from referee.logging import configure_logging
from referee.match.types import escape_output
from referee.text import shown


@pytest.mark.parametrize(("raw", "seen"), [
    ("\x1b]52;c;SE9U\x07", "\\x1b]52;c;SE9U\\x07"),          # OSC 52 clipboard write
    ("\x1b]0;title\x1b\\", "\\x1b]0;title\\x1b\\"),          # OSC 0 window title ended by ST
    ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),                    # CSI
    ("\x9b31m", "\\x9b31m"),                                 # the 8-bit CSI
    ("\x9d0;t\x9c", "\\x9d0;t\\x9c"),                        # 8-bit OSC and ST
    ("\x00\x08\x7f", "\\x00\\x08\\x7f"),                     # NUL, backspace, DEL
    ("a\tb\nc\rd", "a\\tb\\nc\\rd"),                          # one line stays one line
    ("\u202eevil\u202c", "\\u202eevil\\u202c"),              # bidi override
    ("\u2066\u2067\u2068\u2069", "\\u2066\\u2067\\u2068\\u2069"),  # bidi isolates
    ("\u200e\u200f\u061c", "\\u200e\\u200f\\u061c"),          # bidi marks
    ("x\u2028y\u2029", "x\\u2028y\\u2029"),                  # line and paragraph separators
    ("\ud800", "\\ud800"),                                   # a lone surrogate would crash the print
])
def test_every_control_is_a_visible_escape(raw, seen):
    assert shown(raw) == seen


@pytest.mark.parametrize("text", ["plain", "Schmier — Pegs … ♠♥", "[bold red]x[/]", "<b>&amp;</b>", "名前 😀", ""])
def test_printable_text_is_unchanged(text):
    assert shown(text) == text


def test_escape_output_escapes_c1_and_bidi_too():
    raw = "\u009b2J \u202e".encode() + b"\x9b\xff"
    assert escape_output(raw) == "\\x9b2J \\u202e\\x9b\\xff"


def test_log_lines_escape_the_bots_words_in_keys_and_values():
    stream = io.StringIO()
    configure_logging("info", stream)
    try:
        structlog.get_logger().warning("bot said", name="\x1b]0;T\x07\u009b\u202e", **{"k\x1b]52;c;x\x07": 1})
    finally:
        configure_logging("warning")
    line = stream.getvalue()
    assert line.endswith("\n") and line.count("\n") == 1
    assert not any(c in line[:-1] for c in "\x1b\x07\x9b\u202e"), repr(line)
    assert "k\\x1b]52;c;x\\x07=1" in line
