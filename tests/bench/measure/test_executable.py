"""bench.measure.executable: the static runner's symbol table read."""

from __future__ import annotations

from isaforge.bench.measure import executable


def test_parse_nm():
    text = "000000000023cf44 00000000000002e8 T isf_ukernel_gemm_f32_8x12_neon\n0000000000000020 b .LANCHOR0\n"
    assert executable.parse_nm(text) == [(0x23CF44, 0x2E8, "T", "isf_ukernel_gemm_f32_8x12_neon")]
