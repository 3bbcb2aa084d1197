"""The front page and docs/ hold together: the README stays a front page, the index lists every page, and every
relative link of the README and of docs/ leads to a file that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from isaforge.catalogue import load
from isaforge.cli import SUBCOMMANDS
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


def commands(page: Path) -> str:
    """The shell blocks of `page`, comments left out."""
    blocks = "\n".join(re.findall(r"```sh\n(.*?)```", page.read_text(), re.S))
    return re.sub(r"(^|\s)#.*", "", blocks, flags=re.M)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_make_target_a_page_runs_is_in_the_makefile(page: Path) -> None:
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.M))
    named = set(re.findall(r"^make ([\w-]+)", commands(page), re.M))
    assert named <= targets, f"{page.name}: {sorted(named - targets)}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_subcommand_a_page_runs_exists(page: Path) -> None:
    named = set(re.findall(r"(?:^|[\s/])isaforge +([a-z][\w-]*)", commands(page), re.M))
    assert named <= set(SUBCOMMANDS), f"{page.name}: {sorted(named - set(SUBCOMMANDS))}"


def test_the_api_names_the_element_types_of_every_op() -> None:
    table = (ROOT / "docs/api.md").read_text()
    missing = [op.enum for op in load().ops.values() if f"| `{op.enum}`" not in table]
    assert not missing, f"not in docs/api.md's element types: {missing}"


def test_the_kernel_grammar_names_every_kernel_dtype() -> None:
    grammar = (ROOT / "docs/kernel_names.md").read_text()
    dtypes = {name.split("_", 1)[1] for name, op in load().ops.items() if not op.kernels_of}
    missing = sorted(d for d in dtypes if f"`{d}`" not in grammar)
    assert not missing, f"dtypes not in docs/kernel_names.md: {missing}"
