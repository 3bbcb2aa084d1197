"""The front page and docs/ hold together: the README stays a front page, the index lists every page, and every
relative link of the README and of docs/ leads to a file that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_readme_is_a_front_page() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 90


def test_the_index_lists_every_page() -> None:
    index = (ROOT / "docs/index.md").read_text()
    missing = [p.name for p in (ROOT / "docs").glob("*.md") if p.name != "index.md" and f"]({p.name})" not in index]
    assert not missing, f"not in docs/index.md: {missing}"


def relative_links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # code blocks hold no links
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    return [link.split("#")[0] for link in links if not re.match(r"[a-z]+:", link) and not link.startswith("#")]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_leads_to_a_file(page: Path) -> None:
    broken = [link for link in relative_links(page) if not (page.parent / link).exists()]
    assert not broken, f"{page.name}: {broken}"
