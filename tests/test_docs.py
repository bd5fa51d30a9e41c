"""Documentation that must stay true."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_RULES = ROOT.parent / "shared" / "RULES.md"


@pytest.mark.skipif(not SHARED_RULES.exists(), reason="the shared rule book is not beside this checkout")
def test_the_rule_book_copy_in_docs_is_current():
    assert (ROOT / "docs" / "rules.md").read_text() == SHARED_RULES.read_text(), (
        "docs/rules.md differs from ../shared/RULES.md: copy it again"
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
