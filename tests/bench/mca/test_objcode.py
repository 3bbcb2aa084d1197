"""llvm-objdump output parsed: functions, branch targets, and the hot loop as llvm-mca input."""

from __future__ import annotations

from isaforge.bench.mca import objcode
from tests.bench.mca.common import F32, function, kernel_loop


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
