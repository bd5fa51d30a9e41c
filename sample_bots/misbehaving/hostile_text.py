#!/usr/bin/env python3
"""(hostile text) A bot whose every word is aimed at the operator's terminal and pages.

Its ``ready`` name, its stderr lines and (with ``--fault``) its refused reply carry:
an OSC 52 clipboard write, an OSC 0 window title, CSI colour and screen-clearing
sequences, an 8-bit CSI (U+009B), BEL, bidi overrides and isolates, rich markup and
HTML/JS.  It plays legally for the first ``--after N`` requests (default 2), then:

* ``--fault key``: a reply with an unknown JSON key (the message parser names the key);
* ``--fault type``: a reply whose ``type`` tag is the payload (the parser echoes the tag);
* ``--fault output``: a reply that is not JSON (the refused output itself is the payload);
* ``--fault none`` (default): plays legally to the end.

Every text a test looks for on the screen starts with ``HOSTILE``.
"""
import json
import sys

from _base import option, play, write

OSC52 = "\x1b]52;c;SE9TVElMRS1DTElQ\x07"          # clipboard := "HOSTILE-CLIP"
TITLE = "\x1b]0;HOSTILE-TITLE\x07"                 # window title
CSI = "\x1b[31mHOSTILE-RED\x1b[0m\x1b[2J\x1b[H"   # colour, clear screen, cursor home
CSI8 = "\u009b31mHOSTILE-C1\u009b0m"              # the 8-bit CSI, as UTF-8 (C2 9B)
BEL = "\x07"
BIDI = "\u202eHOSTILE-RLO\u202c\u2066HOSTILE-LRI\u2069"
MARKUP = "[bold red]HOSTILE-MARKUP[/bold red][link=https://example.invalid]x[/link]"
HTML = "<script>window.__hostile=1</script><img src=x onerror=\"window.__hostile=2\">"
PAYLOAD = "HOSTILE " + OSC52 + TITLE + CSI + CSI8 + BEL + BIDI + MARKUP + HTML

# The protocol caps a name at 200 characters: the name carries one of each kind.
NAME_PAYLOAD = ("[bold red]HOSTILE-NAME[/] " + TITLE + "\x1b[31m" + "\u009b2J" + BEL + "\u202eEMAN\u202c"
                + "<script>window.__hostile=3</script>")

FAULT = option("--fault", "none", str)


def say_hostile():
    sys.stderr.write("HOSTILE-STDERR " + PAYLOAD + "\n")
    sys.stderr.flush()


def on_hello(msg):
    say_hostile()


def misbehave(request, hello):
    say_hostile()
    if FAULT == "key":
        write(json.dumps({"type": "action", "id": request["id"], "action": request["legal"][0],
                          "HOSTILE-KEY" + PAYLOAD: 1}).encode() + b"\n")
    elif FAULT == "type":
        write(json.dumps({"type": "HOSTILE-TYPE" + PAYLOAD, "id": request["id"],
                          "action": request["legal"][0]}).encode() + b"\n")
    elif FAULT == "output":
        write(("HOSTILE-OUTPUT " + PAYLOAD + "\n").encode())
    else:
        write(json.dumps({"type": "action", "id": request["id"], "action": request["legal"][0]}).encode() + b"\n")


play(misbehave, on_hello=on_hello, ready_name=NAME_PAYLOAD)
