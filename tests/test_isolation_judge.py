"""The judge of check-isolation with the real tools: objdump's listing read back as assembler source, and the
assembler's verdict on a batch of instructions, one index per rejected line."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from isaforge.catalogue import load
from isaforge.isolation_judge import disassemble, disassemble_all, rejected

CAT = load()
AARCH64, ARM = CAT.arch("aarch64"), CAT.arch("arm")
TOOLS = ["clang-19", "llvm-objdump-19", f"{ARM.triple}-as", f"{ARM.triple}-objdump"]
pytestmark = pytest.mark.skipif(
    any(shutil.which(t) is None for t in TOOLS), reason="cross toolchains missing (ci/install-toolchains.sh)"
)

A64_SOURCE = """
    .text
    .globl f
f:
    add x0, x1, x2
    sdot v0.4s, v1.16b, v2.16b
    bl g
    ret
    .word 0xffffffff
"""

# A32 and T32 in one object: a dotprod instruction, an IT block and a VFP immediate objdump shows by its encoding.
ARM_SOURCE = """
    .syntax unified
    .text
    .arm
    .globl f
f:
    add r0, r1, r2
    vsdot.s8 q0, q1, q2
    .thumb
    .globl g
    .thumb_func
g:
    adds r0, r1
    it eq
    moveq r0, #1
    vmov.f64 d16, #1.5
    bx lr
"""


def assemble(tmp_path: Path, name: str, source: str, cmd: list[str]) -> Path:
    (tmp_path / f"{name}.s").write_text(source)
    subprocess.run([*cmd, "-o", f"{name}.o", f"{name}.s"], cwd=tmp_path, check=True, capture_output=True)
    return tmp_path / f"{name}.o"


def a64_object(tmp_path: Path) -> Path:
    clang = CAT.compiler("clang").command(AARCH64)
    return assemble(tmp_path, "a64", A64_SOURCE, [*clang, "-x", "assembler", "-c", "-march=armv8.2-a+dotprod"])


def arm_object(tmp_path: Path) -> Path:
    flags = ["-march=armv8.2-a+dotprod", "-mfpu=neon-fp-armv8", "-mfloat-abi=hard"]
    return assemble(tmp_path, "arm", ARM_SOURCE, [f"{ARM.triple}-as", *flags])


def test_a64_listing_keeps_instructions_and_counts_data(tmp_path):
    insns, data = disassemble(a64_object(tmp_path), AARCH64)
    assert [(i.function, i.address, i.text.split()[0]) for i in insns] == [
        ("f", 0, "add"),
        ("f", 4, "sdot"),
        ("f", 8, "bl"),
        ("f", 12, "ret"),
    ]
    assert data == 1  # the .word
    assert insns[2].source.split() == ["bl", ".+4"]  # a symbolic target, re-assemblable anywhere


def test_arm_listing_knows_thumb_drops_it_and_writes_vfp_immediates_back(tmp_path):
    insns, data = disassemble(arm_object(tmp_path), ARM)
    assert [(i.function, i.text.split()[0], i.thumb) for i in insns] == [
        ("f", "add", False),
        ("f", "vsdot.s8", False),
        ("g", "adds", True),
        ("g", "moveq", True),
        ("g", "vmov.f64", True),
        ("g", "bx", True),
    ]
    assert data == 0
    assert insns[4].source.split() == ["vmov.f64", "d16,", "#1.5"]


def test_one_objdump_run_lists_several_objects_apart(tmp_path):
    obj = a64_object(tmp_path)
    copy = tmp_path / "copy.o"
    copy.write_bytes(obj.read_bytes())
    listings = disassemble_all([obj, copy], AARCH64)
    assert listings == [disassemble(obj, AARCH64)] * 2


@pytest.mark.parametrize(
    ("arch", "make", "baseline", "dotprod"),
    [
        (AARCH64, a64_object, ["-march=armv8-a"], ["-march=armv8.2-a+dotprod"]),
        (ARM, arm_object, ["-march=armv7-a", "-mfpu=neon-vfpv4"], ["-march=armv8.2-a+dotprod", "-mfpu=neon-fp-armv8"]),
    ],
)
def test_the_assembler_rejects_exactly_the_instructions_beyond_the_flags(tmp_path, arch, make, baseline, dotprod):
    insns, _ = disassemble(make(tmp_path), arch)
    dot = [i for i, insn in enumerate(insns) if "dot" in insn.text]
    assert len(dot) == 1
    assert rejected(arch, insns, baseline, tmp_path) == set(dot)
    assert rejected(arch, insns, dotprod, tmp_path) == set()
    assert rejected(arch, [], baseline, tmp_path) == set()
