"""bench.scenarios.gemms: which kernel each op and variant runs its counted GEMMs with."""

from __future__ import annotations

from isaforge.bench.scenarios import gemms
from isaforge.catalogue import load, parse_kernel_name


def kernel(name: str):
    return parse_kernel_name(name, load().ops)


def test_only_the_kernel_the_variant_runs_a_gemm_with_is_benchmarked():
    names = ["gemm_s8_1x8x8_i8mm", "gemm_s8_8x8x8_i8mm", "gemm_s8_4x4x16_neon", "gemm_s8_1x4x16_neon"]
    chosen = gemms.select([kernel(n) for n in names], None, None)
    assert [k.name for k in chosen] == ["gemm_s8_8x8x8_i8mm", "gemm_s8_4x4x16_neon"]
