"""Text a bot (or a file handed to the referee) controls, made safe to show.

A bot chooses its ``ready`` name, its stderr, its refused output and — through
what the message parser echoes back (an unknown key, a bad ``type`` tag) — part
of its fault message; a record or a results file can carry any of them again.
Written to a terminal as they are, an OSC 52 sequence sets the clipboard, an
OSC 0 the window title, a CSI (7-bit ``ESC [`` or the 8-bit U+009B) moves the
cursor or clears the screen, BEL rings, and bidi overrides make a line read
other than it is.

``shown`` is the one function every such string passes before it reaches a
terminal or a log line: each character that is not safe to print is written
as a visible escape (``\\x1b``, ``\\x9b``, ``\\u202e``), so nothing is lost
and nothing acts.  What is escaped:

* every control character (Unicode category Cc): C0 (U+0000–U+001F, with
  ``\\t``, ``\\n``, ``\\r`` in their short forms), DEL (U+007F) and C1
  (U+0080–U+009F, among them the 8-bit CSI U+009B, OSC U+009D and ST U+009C) —
  with ESC escaped, no escape sequence can start;
* the bidi controls: embeddings and overrides (U+202A–U+202E), isolates
  (U+2066–U+2069) and the marks U+200E, U+200F, U+061C;
* the line and paragraph separators U+2028, U+2029 (a line stays one line);
* lone surrogates (which a terminal's encoder refuses: they would crash the print).

The stored data (records, ``results.jsonl``) keeps the raw text: escaping is
for display only.  Rich markup is a separate matter: the CLI's consoles are made
with ``markup=False`` (``referee_cli.common.make_console``), so a name such as
``[bold red]x`` is printed as written.
"""

from __future__ import annotations

_SHORT = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029)

#: ``str.translate`` table of everything ``shown`` escapes (surrogates are handled apart).
UNSAFE: dict[int, str] = {c: _SHORT.get(c, f"\\x{c:02x}") for c in (*range(0x20), *range(0x7F, 0xA0))}
UNSAFE |= {c: f"\\u{c:04x}" for c in _BIDI}


def shown(text: object) -> str:
    """``text`` (``str()`` of it if it is not a string) with every character that could
    act on a terminal written as a visible escape (see the module docstring)."""
    s = text if isinstance(text, str) else str(text)
    if s.isascii() and s.isprintable():  # the common case: nothing to do
        return s
    out = s.translate(UNSAFE)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in out):
        out = "".join(f"\\u{ord(c):04x}" if 0xD800 <= ord(c) <= 0xDFFF else c for c in out)
    return out

