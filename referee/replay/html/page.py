"""A tiny toolkit for self-contained HTML pages (no network, no CDN).

Used by the HTML replay (``referee replay RECORD --html FILE``) and meant for
any other page the referee writes as one file (a tournament report, say).
Everything a page needs travels inside it: CSS and JavaScript are package data
inlined into ``<style>``/``<script>``, the data is JSON in a
``<script type="application/json">`` block the page's script parses.

API
---
``escape(text) -> str``
    ``text`` safe inside HTML text and double- or single-quoted attributes
    (``& < > " '`` escaped).

``json_for_script(data) -> str``
    ``data`` as compact JSON that is safe inside a ``<script>`` element: ``<``,
    ``>`` and ``&`` are written as ``\\u003c`` … so no ``</script>`` or ``<!--``
    can end or confuse the element, and U+2028/U+2029 are escaped too.  The
    text parses back to ``data`` with ``JSON.parse`` (or ``json.loads``).

``asset(package, name) -> str``
    The text of package-data file ``name`` of ``package`` (e.g.
    ``asset("referee.replay.html", "assets/replay.js")``); the file must be
    listed in ``pyproject.toml``'s ``package-data``.

``fill(template, **parts) -> str``
    ``template`` with each ``{{name}}`` marker replaced by ``parts[name]``
    (inserted verbatim: escape text yourself).  Every marker must have a part
    and every part a marker, else ``ValueError``: a misspelt name fails loudly
    instead of shipping a page with a hole in it.

``self_contained_page(title, body, *, css, js, data, lang="en") -> str``
    A whole HTML5 document: ``title`` (escaped), ``css`` inlined in ``<style>``,
    ``body`` (HTML, verbatim), ``data`` as ``<script type="application/json"
    id="page-data">`` (read it with
    ``JSON.parse(document.getElementById("page-data").textContent)``), then
    ``js`` inlined in ``<script>`` at the end of the body.  ``css`` and ``js``
    must not contain ``</style`` / ``</script`` (``ValueError``).  The page
    also carries a Content-Security-Policy that forbids any network fetch
    (``default-src 'none'``; inline style and script, ``data:`` images).
"""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_JSON_UNSAFE = re.compile("[<>&\u2028\u2029]")
_MARKER = re.compile(r"\{\{([a-z_][a-z0-9_]*)\}\}")

#: No fetch of any kind leaves the page: everything it shows is inline.
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


def escape(text: object) -> str:
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


def json_for_script(data: Any) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _JSON_UNSAFE.sub(lambda m: _JSON_ESCAPES[m.group(0)], text)


def asset(package: str, name: str) -> str:
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


def fill(template: str, **parts: str) -> str:
    names = set(_MARKER.findall(template))
    missing = sorted(names - set(parts))
    unused = sorted(set(parts) - names)
    if missing or unused:
        raise ValueError(f"template markers without a part: {missing}; parts without a marker: {unused}")
    return _MARKER.sub(lambda m: parts[m.group(1)], template)


def _inline(kind: str, text: str) -> str:
    if re.search(rf"</{kind}", text, re.IGNORECASE):
        raise ValueError(f"inline {kind} must not contain '</{kind}'")
    return text


_DOCUMENT = """<!DOCTYPE html>
<html lang="{{lang}}">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{csp}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}}</title>
<style>
{{css}}
</style>
</head>
<body>
{{body}}
<script type="application/json" id="page-data">{{data}}</script>
<script>
{{js}}
</script>
</body>
</html>
"""


def self_contained_page(title: str, body: str, *, css: str, js: str, data: Any, lang: str = "en") -> str:
    return fill(_DOCUMENT, lang=escape(lang), csp=escape(CSP), title=escape(title), css=_inline("style", css),
                body=body, data=json_for_script(data), js=_inline("script", js))
