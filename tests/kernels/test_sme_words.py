"""The SME kernels are the same machine code from both assembly routes: LLVM's assembler (the clang builds) and the
.inst encoder in front of GNU as 2.40, which knows no SME2 (the gcc builds). So the SME tests' sweep of streaming
vector lengths runs GCC's build at the shortest SVL only (tests/conftest.py): the other lengths would run the same
words again."""

from __future__ import annotations

import subprocess

import pytest

from isaforge import builds
from isaforge.bench.measure.mca import objcode
from isaforge.catalogue import load
from tests.conftest import ROOT

ARCH = "aarch64"


def streaming_kernels() -> list[str]:
    cat = load()
    every = cat.kernels(ROOT, ARCH, [v.name for v in cat.arch_variants(ARCH)])
    return sorted({k.name for k in every if cat.variant(k.variant).scalable == "streaming" and not k.runs})


def kernel_code(compiler: str) -> dict[str, list[tuple[str, str]]]:
    """Each function's instructions (word, as LLVM's disassembler reads it) in that compiler's build of
    libisaforge.a."""
    build = builds.build_for(load().arch(ARCH).triple, compiler)
    library = builds.ensure_built(build) / "libisaforge.a"
    text = subprocess.run([objcode.LLVM_OBJDUMP, "-d", str(library)], capture_output=True, text=True, check=True).stdout
    return {name: [(i.raw, i.text) for i in body] for name, body in objcode.parse_objdump(text).items()}


@pytest.mark.e2e
def test_every_sme_kernel_is_the_same_code_from_both_assembly_routes() -> None:
    names = streaming_kernels()
    assert len(names) >= 10, names
    clang, gcc = kernel_code("clang"), kernel_code("gcc")
    for name in names:
        symbol = objcode.KERNEL_PREFIX + name
        assert clang.get(symbol) and all("unknown" not in text for _, text in clang[symbol]), name
        assert clang[symbol] == gcc.get(symbol), f"{name}: the gcc build's code differs from the clang build's"
