"""Documentation that must stay true.

The rule book: docs/rules.md is a copy of the shared rule book, which lives
beside the checkout (``../shared/RULES.md``).  Two tests keep the copy honest:

* where the shared book is found, the copy must equal it; where it is not,
  the test skips on a developer's machine but FAILS under CI (``CI`` set, as
  CI services do), so a CI layout without the book cannot pass silently;
* everywhere, the copy must hash to ``RULE_BOOK["sha256"]`` with the games at
  ``RULE_BOOK["rules_versions"]``: whoever copies in a new rule book meets
  this test and must decide which games' ``rules_version`` to bump.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from referee.games import GAMES

ROOT = Path(__file__).resolve().parent.parent
COPY = ROOT / "docs" / "rules.md"
#: Where the shared rule book is documented to be: beside the checkout.
SHARED_RULES = ROOT.parent / "shared" / "RULES.md"
#: The rule book the engines implement, and each game's rules version for it.
RULE_BOOK = {
    "sha256": "56dc8f4607852328635a4e7676d2a96d91d27dd53b4bdba3d4c4d6bb61da45b6",
    "rules_versions": {"back-alley": "2", "schmier": "2", "pegs-and-jokers": "2"},
}


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def test_the_rule_book_copy_in_docs_is_current():
    if not SHARED_RULES.is_file():
        message = (f"the shared rule book is not at {SHARED_RULES} (beside the checkout), so "
                   "docs/rules.md cannot be compared with it")
        if in_ci():
            pytest.fail(message + "; CI must check shared/ out beside the repository")
        pytest.skip(message)
    assert COPY.read_bytes() == SHARED_RULES.read_bytes(), (
        f"docs/rules.md differs from {SHARED_RULES}: copy it again (and see RULE_BOOK in this file)"
    )


def test_the_rule_book_copy_is_the_one_the_engines_implement():
    digest = hashlib.sha256(COPY.read_bytes()).hexdigest()
    versions = {name: spec.rules_version for name, spec in GAMES.items()}
    assert (digest, versions) == (RULE_BOOK["sha256"], RULE_BOOK["rules_versions"]), (
        "docs/rules.md or a game's rules_version changed: bump the rules_version of every game "
        f"whose rules changed, then set RULE_BOOK in tests/test_docs.py to sha256 {digest} "
        f"and rules_versions {versions}"
    )


def test_every_relative_link_in_the_docs_points_at_a_file():
    import re

    missing = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", doc.read_text()):
            if "://" in target:
                continue
            if not (doc.parent / target).exists():
                missing.append(f"{doc.relative_to(ROOT)} -> {target}")
    assert not missing, missing


def test_the_ci_script_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python -m pytest -q"
    assert command in readme and command in ci
