"""MAC counting per instruction and per kernel kind, hot loops and reference streams, on saved disassembly."""

from __future__ import annotations

import pytest

from isaforge.bench.measure.mca import macs
from isaforge.bench.measure.mca.objcode import Insn
from tests.bench.measure.mca.common import insn, kernel_loop


@pytest.mark.parametrize(
    ("text", "sve_bits", "expected"),
    [
        ("fmla v31.4s, v8.4s, v10.s[0]", 0, 4),
        ("fmla v0.8h, v1.8h, v2.h[7]", 0, 8),
        ("sdot v3.4s, v8.16b, v10.4b[1]", 0, 16),
        ("smmla v3.4s, v8.16b, v10.16b", 0, 32),
        ("bfmmla v3.4s, v8.8h, v10.8h", 0, 16),
        ("smull v8.8h, v6.8b, v3.8b", 0, 8),
        ("smull2 v8.8h, v6.16b, v3.16b", 0, 8),
        ("sadalp v20.4s, v8.8h", 0, 0),
        ("ldp q8, q9, [x2]", 0, 0),
        ("fmla z2.s, z0.s, z1.s[3]", 128, 4),
        ("fmla z2.s, z0.s, z1.s[3]", 256, 8),
        ("fmla z2.h, z0.h, z1.h[3]", 128, 8),
        ("sdot z2.s, z0.b, z1.b[1]", 256, 32),
        ("smmla z2.s, z0.b, z1.b", 128, 32),
        ("smmla z2.s, z0.b, z1.b", 256, 64),
        ("bfmmla z2.s, z0.h, z1.h", 256, 32),
    ],
)
def test_macs_per_instruction(text, sve_bits, expected):
    assert macs.macs_of(insn(text), sve_bits) == expected


def test_kinds_tell_forms_apart():
    assert macs.mac_kind(insn("fmla v31.4s, v8.4s, v10.s[0]")) == "fmla v.4s[i]"
    assert macs.mac_kind(insn("fmla v31.4s, v8.4s, v10.4s")) == "fmla v.4s"
    assert macs.mac_kind(insn("smull2 v8.8h, v6.16b, v3.16b")) == macs.mac_kind(insn("smull v8.8h, v6.8b, v3.8b"))
    assert macs.mac_kind(insn("smmla z2.s, z0.b, z1.b")) == "smmla z.s"
    assert macs.mac_kind(insn("sadalp v20.4s, v8.8h")) is None


def test_hot_loop_of_the_neon_int8_kernel_and_its_own_mix():
    kl = kernel_loop("gcc_gemm_s8_4x4x16_neon.objdump", "isf_ukernel_gemm_s8_4x4x16_neon")
    assert kl.kind == "smull v.8h"
    assert kl.loop is not None and kl.loop_macs(0) == 4 * 4 * 16
    stream = macs.reference_stream(kl.loop.body, kl.kind)
    assert "smull + smull2 + 2×sadalp" in stream.description
    mnemonics = [i.mnemonic for i in stream.insns]
    assert mnemonics[:4] == ["smull", "smull2", "sadalp", "sadalp"]
    groups = len(stream.insns) // 4
    assert groups >= 16 and stream.macs(0) == 16 * groups and stream.mac_instructions == 2 * groups
    # each sadalp adds a product of its own group into its own accumulator, never one of another group
    accumulators = [i.operands[0] for i in stream.insns if i.mnemonic == "sadalp"]
    assert len(set(accumulators)) == groups
    for g in range(groups):
        smull, smull2, add1, add2 = stream.insns[4 * g : 4 * g + 4]
        assert add1.operands[1] == smull.operands[0] and add2.operands[1] == smull2.operands[0]


def test_sve_loop_scales_with_the_vector_length():
    kl = kernel_loop("clang_gemm_s8_8x4x8_svei8mm.objdump", "isf_ukernel_gemm_s8_8x4x8_svei8mm")
    assert kl.kind == "smmla z.s"
    assert kl.loop is not None and kl.loop_mac_instructions == 16  # two k blocks of 8 smmla
    assert kl.loop_macs(128) == 8 * 4 * 8 * 2
    assert kl.loop_macs(256) == 2 * kl.loop_macs(128)
    stream = macs.reference_stream(kl.loop.body, kl.kind)
    assert len(stream.insns) >= 16 and len({i.operands[0] for i in stream.insns}) == len(stream.insns)
    assert all(i.operands[1:] == ("z0.b", "z1.b") for i in stream.insns)


def test_the_hot_loop_is_an_innermost_loop():
    """A jump back from out-of-line code to before the loop closes a range around it with more MACs: not a loop
    the kernel spends its time in."""
    fmla = [Insn(a, "fmla", ("v16.4s", "v0.4s", "v4.s[0]")) for a in (0x10, 0x14, 0x20, 0x24, 0x28)]
    code = [Insn(0x8, "cbz", ("x0", "0x30"), target=0x30), *fmla[:2], Insn(0x18, "b.ne", ("0x10",), target=0x10),
            Insn(0x1C, "ret", ()), *fmla[2:], Insn(0x2C, "b", ("0x8",), target=0x8)]  # fmt: skip
    code.sort(key=lambda i: i.addr)
    loop = macs.hot_loop(code, "fmla v.4s[i]")
    assert loop is not None and (loop.start, loop.end) == (0x10, 0x18)
