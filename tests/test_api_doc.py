"""docs/api.md names every function the public headers declare (and no function they do not)."""

from __future__ import annotations

import re

from tests.conftest import ROOT

HEADERS = ("include/isaforge/isaforge.h", "include/isaforge/isaforge_ops.h")


def declared() -> set[str]:
    names: set[str] = set()
    for header in HEADERS:
        text = (ROOT / header).read_text()
        names |= set(re.findall(r"^[a-z_][\w ]*[ *](isf_\w+)\(", text, re.M))
    return names


def test_every_public_function_is_documented() -> None:
    doc = (ROOT / "docs/api.md").read_text()
    functions = declared()
    assert len(functions) > 25
    missing = sorted(f for f in functions if not re.search(rf"\b{f}\b", doc))
    assert not missing, f"not in docs/api.md: {missing}"


def test_the_doc_names_no_function_the_headers_lack() -> None:
    doc = (ROOT / "docs/api.md").read_text()
    named = set(re.findall(r"`(?:[\w *]+ )?\**(isf_\w+)\(", doc))
    assert named, "no function found in docs/api.md"
    assert named <= declared(), f"not declared: {sorted(named - declared())}"
