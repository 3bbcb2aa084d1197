"""Every kernel file follows docs/kernel_names.md, sits in its variant's folder and defines its one entry point."""

from __future__ import annotations

import re

import pytest

from isaforge.catalogue import KERNEL_SUFFIXES, load, parse_kernel_name
from tests.conftest import ROOT

KERNELS = ROOT / "kernels"
NOT_KERNELS = {"runtime"}


def kernel_files() -> list:
    return sorted(p for p in KERNELS.rglob("*") if p.suffix in KERNEL_SUFFIXES and p.parts[-2] not in NOT_KERNELS)


def test_there_are_kernels_for_both_arches_and_the_reference() -> None:
    dirs = {p.relative_to(KERNELS).parts[0] for p in kernel_files()}
    assert dirs == {"reference", "aarch64", "aarch32"}


@pytest.mark.parametrize("path", kernel_files(), ids=lambda p: str(p.relative_to(KERNELS)))
def test_kernel_file_follows_the_grammar(path) -> None:
    cat = load()
    kernel = parse_kernel_name(path.stem, cat.ops)
    rel = path.relative_to(KERNELS).parts
    if rel[0] == "reference":
        assert kernel.variant == "ref" and len(rel) == 2
    else:
        arch = next(a for a in cat.arches.values() if a.kernel_dir == rel[0])
        assert len(rel) == 3 and rel[1] == kernel.variant
        assert arch.name in cat.variant(kernel.variant).arches
    text = path.read_text()
    if path.suffix == ".S":
        entry_points = re.findall(r"^\s*\.globl\s+isf_ukernel_(\w+)", text, re.MULTILINE)
        assert re.search(rf"^isf_ukernel_{kernel.name}:", text, re.MULTILINE), "the entry label is missing"
    else:
        entry_points = re.findall(r"^(?:\w+ )*ISF_UKERNEL\((\w+)\)\s*\{", text, re.MULTILINE)
    assert entry_points == [kernel.name], "one kernel per file: ISF_UKERNEL(<file stem>) or .globl isf_ukernel_<stem>"


def test_one_file_per_kernel_name() -> None:
    """Per arch (its own tree and the reference kernels): the two arches may each have a kernel of one name."""
    for arch_dir in ("aarch64", "aarch32"):
        stems = [p.stem for p in kernel_files() if p.parts[-3] == arch_dir or "reference" in p.parts]
        assert len(stems) > 10 and sorted(stems) == sorted(set(stems)), f"{arch_dir}: a kernel both as .c and .S"


def test_no_stray_files_in_kernel_folders() -> None:
    allowed = {*KERNEL_SUFFIXES, ".h"}
    stray = [p for p in KERNELS.rglob("*") if p.is_file() and p.suffix not in allowed]
    assert stray == []
