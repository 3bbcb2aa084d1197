"""llvm-objdump output parsed: functions, branch targets, and the hot loop as llvm-mca input."""

from __future__ import annotations

from isaforge.bench.measure.mca import objcode, provenance
from tests.bench.measure.mca.common import F32, function, kernel_loop


def test_objdump_parsing_keeps_branch_targets():
    body = function("clang_gemm_f32_8x12_neon.objdump", F32)
    assert body[0].addr == 0 and body[0].mnemonic == "str"
    backward = [i for i in body if i.target is not None and i.target <= i.addr]
    assert ("b.ne", 0xE4, 0x70) in [(i.mnemonic, i.addr, i.target) for i in backward]
    assert body[4].operands == ("v31.2d", "#0000000000000000")  # movi; the `// =…` comments are dropped


def test_hot_loop_of_the_fp32_kernel():
    kl = kernel_loop("clang_gemm_f32_8x12_neon.objdump", F32)
    assert kl.kind == "fmla v.4s[i]"
    assert kl.loop is not None
    assert (kl.loop.start, kl.loop.end, len(kl.loop.body)) == (0x70, 0xE4, 30)
    assert kl.loop_mac_instructions == 24
    assert kl.loop_macs(0) == 96  # 8x12 tile, one k step
    src = objcode.mca_source(kl.loop)
    assert src.startswith(".Lloop:\n") and "\tb.ne\t.Lloop\n.Lexit:\n" in src
    assert "<" not in src


def test_a_static_name_two_objects_define_keeps_every_instruction_by_address():
    # two kernels' own `static quant_tile`: per name the first wins, by address both are there (what QEMU executes)
    text = """
0000000000001000 <quant_tile>:
    1000: 6f00e407     \tmovi\tv7.2d, #0000000000000000
    1004: d65f03c0     \tret

0000000000002000 <isf_ukernel_gemm_s8_4x4x16_neon>:
    2000: 14000001     \tb\t0x2004 <quant_tile>

0000000000002004 <quant_tile>:
    2004: b9400008     \tldr\tw8, [x0]
    2008: d65f03c0     \tret
"""
    functions = objcode.parse_objdump(text)
    assert [i.addr for i in functions["quant_tile"]] == [0x1000, 0x1004]
    assert functions["isf_ukernel_gemm_s8_4x4x16_neon"][0].target == 0x2004
    by_address = objcode.instructions_by_address(text)
    assert sorted(by_address) == [0x1000, 0x1004, 0x2000, 0x2004, 0x2008]
    assert by_address[0x2004].mnemonic == "ldr" and by_address[0x2004].raw == "b9400008"


# -- provenance: what each load reads, from the micro-kernel ABI's pointers ----------------------------------------
def labels(text: str) -> dict[int, str]:
    """Every load's label in `text`'s functions, the first of them entered as a micro-kernel."""
    insns = objcode.instructions_by_address(text)
    starts = [int(m[1], 16) for m in map(objcode.SYMBOL_LINE.match, text.splitlines()) if m]
    names = [m[2] for m in map(objcode.SYMBOL_LINE.match, text.splitlines()) if m]
    ends = [*starts[1:], max(insns) + 4]
    functions = [provenance.Function(s, e, n) for s, e, n in zip(starts, ends, names, strict=True)]
    return provenance.classify_loads(insns, functions, [starts[0]])


def test_a_post_indexed_load_through_x2_reads_the_weights_every_iteration():
    got = labels("""
0000000000001000 <isf_ukernel_gemm_s8_1x4x16_neon>:
    1000: \tld1\t{v0.16b, v1.16b}, [x2], #32
    1004: \tldr\tq2, [x1], #16
    1008: \tsubs\tx0, x0, #0x1
    100c: \tb.ne\t0x1000 <isf_ukernel_gemm_s8_1x4x16_neon>
    1010: \tldr\tq3, [x2]
    1014: \tldr\tq4, [x3]
    1018: \tret
""")
    assert got == {0x1000: provenance.B, 0x1004: provenance.A, 0x1010: provenance.B, 0x1014: provenance.C}


def test_a_weights_pointer_copied_and_offset_keeps_its_label():
    got = labels("""
0000000000001000 <isf_ukernel_gemm_s8_1x4x8_svei8mm>:
    1000: \tmov\tx8, x2
    1004: \tadd\tx9, x8, #0x40
    1008: \tldr\tq0, [x9]
    100c: \tlsl\tx11, x0, #4
    1010: \tadd\tx10, x2, x11, lsl #2
    1014: \tld1b\t{ z0.b }, p0/z, [x10, #0x1, mul vl]
    1018: \taddvl\tx12, x8, #2
    101c: \trdvl\tx13, #0x8
    1020: \tld1b\t{ z1.b }, p0/z, [x12, x13]
    1024: \tincb\tx12
    1028: \tld1b\t{ z2.b }, p0/z, [x12]
    102c: \tret
""")
    assert set(got.values()) == {provenance.B} and len(got) == 4


def test_a_broadcast_of_a_and_the_epilogue_pointers():
    got = labels("""
0000000000001000 <isf_ukernel_gemm_s8_1x8x4_sve>:
    1000: \tld1rw\t{ z1.s }, p0/z, [x1, #0x4]
    1004: \tld1r\t{v1.4s}, [x1]
    1008: \tldr\tw9, [x6]
    100c: \tldr\tx8, [x6, #0x10]
    1010: \tldr\tq3, [x8, #0x10]
    1014: \tret
""")
    e = provenance.EPILOGUE
    assert got == {0x1000: provenance.A, 0x1004: provenance.A, 0x1008: e, 0x100C: e, 0x1010: e}


def test_what_the_pass_cannot_follow_is_unknown():
    # two pointers meeting (a csel of A and B; x8 = A on one path, B on the other), a pointer reloaded from the
    # stack, a W register written over a pointer (a number from then on: x9 indexes C)
    got = labels("""
0000000000001000 <isf_ukernel_gemm_s8_4x4x16_neon>:
    1000: \tcsel\tx7, x1, x2, ne
    1004: \tldr\tq0, [x7]
    1008: \tmov\tx8, x1
    100c: \tcbz\tx0, 0x1014 <isf_ukernel_gemm_s8_4x4x16_neon+0x14>
    1010: \tmov\tx8, x2
    1014: \tldr\tq1, [x8]
    1018: \tstr\tx2, [sp, #0x8]
    101c: \tldr\tx10, [sp, #0x8]
    1020: \tldr\tq2, [x10]
    1024: \tmov\tx9, x2
    1028: \tmov\tw9, #0xc
    102c: \tldr\tq3, [x3, x9]
    1030: \tret
""")
    u = provenance.UNKNOWN
    assert got == {0x1004: u, 0x1014: u, 0x101C: provenance.STACK, 0x1020: u, 0x102C: provenance.C}


def test_a_null_or_pointer_is_the_pointer_and_a_helper_gets_its_callers_registers():
    # `bias = steps & BIAS ? ep->bias : NULL`, then a call to a static helper with (ep, c): its loads are the
    # epilogue's and C's; after the call, x0-x18 are the callee's
    got = labels("""
0000000000001000 <isf_ukernel_gemm_s4_8x8x8_i8mm>:
    1000: \tmov\tx8, xzr
    1004: \tcbz\tw5, 0x100c <isf_ukernel_gemm_s4_8x8x8_i8mm+0xc>
    1008: \tldr\tx8, [x6, #0x18]
    100c: \tldr\tq0, [x8]
    1010: \tmov\tx0, x6
    1014: \tmov\tx1, x3
    1018: \tbl\t0x1028 <store_quantized>
    101c: \tldr\tq1, [x1]
    1020: \tret

0000000000001028 <store_quantized>:
    1028: \tldr\tx9, [x0, #0x20]
    102c: \tldr\tq2, [x9]
    1030: \tldr\tq3, [x1]
    1034: \tret
""")
    e = provenance.EPILOGUE
    assert got == {0x1008: e, 0x100C: e, 0x101C: provenance.UNKNOWN, 0x1028: e, 0x102C: e, 0x1030: provenance.C}
