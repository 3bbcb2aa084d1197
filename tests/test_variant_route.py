"""variant_route: what each real compiler builds of the SME variants, and gcc 12 building SME2 assembly through the
assembler wrapper to the same words clang-19 makes."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from isaforge import variant_route
from isaforge.catalogue import load
from isaforge.variant_route import Route

CAT = load()
GCC = ["aarch64-linux-gnu-gcc"]
CLANG = ["clang-19", "--target=aarch64-linux-gnu"]
pytestmark = pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("aarch64-linux-gnu-gcc", "clang-19", "llvm-objdump-19")),
    reason="cross toolchains missing (ci/install-toolchains.sh)",
)

# SME1 and SME2 in one kernel body; GNU as 2.40 knows the first two lines' instructions only.
KERNEL = """
    .text
    .globl k
k:
    smstart
    fmopa za0.s, p0/m, p1/m, z0.s, z1.s
    ld1w {z0.s}, p0/z, [x0]
    zero {zt0}
    fmla za.s[w8, 0, vgx4], {z0.s-z3.s}, z4.s
    ld1w {z4.s-z7.s}, pn8/z, [x1]
    smstop
    ret
"""


def route(cc: list[str], compiler: str, label: str, **sources: bool) -> Route | str:
    return variant_route.choose(CAT, "aarch64", compiler, label, cc, **sources)


def test_clang_builds_both_with_the_catalogue_flags():
    for label in ("sme", "sme2", "sme2+sme_f16f16"):
        got = route(CLANG, "clang", label, c_sources=True, asm_sources=True)
        assert got == Route(tuple(CAT.variant_flags("aarch64", "clang", label)))


def test_gcc_cannot_build_sme_c():
    got = route(GCC, "gcc", "sme2", c_sources=True, asm_sources=True)
    assert isinstance(got, str) and "cannot compile sme2 code with -march=armv8.2-a+bf16+fp16+sme+sme2" in got


def test_gcc_hands_sme_to_the_assembler_and_encodes_sme2():
    sme = route(GCC, "gcc", "sme", c_sources=False, asm_sources=True)
    assert sme == Route(("-march=armv8-a", "-Wa,-march=armv8.2-a+bf16+fp16+sme"), False, sme.note)
    sme2 = route(GCC, "gcc", "sme2", c_sources=False, asm_sources=True)
    assert sme2.flags == ("-march=armv8-a", "-Wa,-march=armv8.2-a+bf16+fp16+sme") and sme2.encode
    assert "the rest through the .inst encoder" in sme2.note


def words(obj: Path) -> list[str]:
    text = subprocess.run(["llvm-objdump-19", "-d", str(obj)], capture_output=True, text=True, check=True).stdout
    return re.findall(r"(?m)^\s*[0-9a-f]+:\s+([0-9a-f]{8})\s", text)


def test_gcc_through_the_wrapper_makes_clangs_words(tmp_path):
    src = tmp_path / "k.S"
    src.write_text(KERNEL)
    sme2 = route(GCC, "gcc", "sme2", c_sources=False, asm_sources=True)
    wrapper = variant_route.assembler_wrapper(tmp_path / "as", "aarch64", GCC)
    subprocess.run([*GCC, *sme2.flags, *wrapper, "-c", str(src), "-o", str(tmp_path / "gcc.o")], check=True)
    clang_flags = CAT.variant_flags("aarch64", "clang", "sme2")
    subprocess.run([*CLANG, *clang_flags, "-c", str(src), "-o", str(tmp_path / "clang.o")], check=True)
    assert words(tmp_path / "gcc.o") == words(tmp_path / "clang.o") and len(words(tmp_path / "clang.o")) == 8
    plain = subprocess.run(
        [*GCC, *sme2.flags, "-c", str(src), "-o", str(tmp_path / "x.o")], capture_output=True, check=False
    )
    assert plain.returncode != 0  # without the wrapper GNU as 2.40 stops at zero {zt0}


def test_the_wrapper_names_the_line_it_cannot_encode(tmp_path):
    src = tmp_path / "bad.S"
    src.write_text(".text\nfmopa za4.s, p0/m, p1/m, z0.s, z1.s\n")
    wrapper = variant_route.assembler_wrapper(tmp_path / "as", "aarch64", GCC)
    sme2 = route(GCC, "gcc", "sme2", c_sources=False, asm_sources=True)
    proc = subprocess.run([*GCC, *sme2.flags, *wrapper, "-c", str(src), "-o", str(tmp_path / "b.o")],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert proc.returncode != 0 and "isaforge .inst encoder:" in proc.stderr and "za4" in proc.stderr
