"""bench.scenarios.sme: the MACs of an SME outer product, which kernels it runs, and one real run under the SME
QEMU (a missing SME QEMU fails the run with the line that names its fix, as the SME kernel tests do)."""

from __future__ import annotations

import pytest

from isaforge import builds
from isaforge.bench.measure.mca import macs, objcode
from isaforge.bench.measure.qemu_count import tile_size, useful_macs
from isaforge.bench.scenarios import sme
from isaforge.bench.scenarios.shapes import Shape
from isaforge.catalogue import load, parse_kernel_name
from isaforge.errors import IsaforgeError

SME_KERNEL = "gemm_f32_4x16_sme"
SME2_KERNEL = "gemm_f32_8x8_sme2"


def kernel(name: str):
    return parse_kernel_name(name, load().ops)


def fmopa(source: str = "s") -> objcode.Insn:
    return objcode.Insn(0, "fmopa", ["za0.s", "p1/m", "p0/m", f"z0.{source}", f"z4.{source}"])


def test_an_outer_product_does_a_square_tile_of_macs_at_the_streaming_length():
    assert macs.is_outer_product(fmopa()) and macs.mac_kind(fmopa()) == "fmopa za.s"
    assert macs.macs_of(fmopa(), 128) == 4 * 4 and macs.macs_of(fmopa(), 512) == 16 * 16
    assert macs.macs_of(fmopa("h"), 128) == 4 * 4 * 2  # widening: two products summed per lane
    assert not macs.is_outer_product(objcode.Insn(0, "fmla", ["z0.s", "p0/m", "z1.s", "z2.s"]))


def za_array(mnemonic: str, vgx: int, source: str, indexed: bool = True) -> objcode.Insn:
    vectors = ", ".join(f"z{16 + i}.{source}" for i in range(vgx))
    last = f"z0.{source}[0]" if indexed else f"z0.{source}"
    return objcode.Insn(0, mnemonic, [f"za.s[w8, 0, vgx{vgx}]", f"{{ {vectors} }}", last])


def test_a_za_array_multiply_add_does_one_vector_of_macs_per_source_vector():
    """SME2's row kernels: fmla/bfdot/sdot into ZA vectors, each source vector into one, SVL/32 lanes of .s."""
    fmla = za_array("fmla", 2, "s")
    assert macs.mac_kind(fmla) == "fmla za.s[vgx2][i]" and macs.macs_of(fmla, 512) == 2 * 16
    assert macs.macs_of(za_array("bfdot", 2, "h"), 128) == 2 * 4 * 2
    assert macs.macs_of(za_array("sdot", 4, "b", indexed=False), 256) == 4 * 8 * 4
    ranged = objcode.Insn(0, "fmla", ["za.s[w8, 0, vgx4]", "{ z16.s - z19.s }", "z0.s"])
    assert macs.macs_of(ranged, 128) == 4 * 4
    assert macs.mac_kind(objcode.Insn(0, "mova", ["za.s[w8, 0, vgx2]", "{ z0.s, z1.s }"])) is None


def test_a_streaming_kernels_mr_grows_with_the_svl_so_every_row_of_its_tile_is_useful():
    k = kernel(SME_KERNEL)  # MR 4 at SVL 128 bits: SVL/32, a whole tile's rows
    assert useful_macs(k, fmopa(), 128) == 16
    assert useful_macs(k, fmopa(), 512) == 16 * 16
    assert tile_size(k, 512) == (16, 64) and tile_size(kernel("gemm_f32_1x8_sve"), 512) == (1, 32)


def test_the_streaming_kernels_and_the_baseline_chosen():
    names = [SME_KERNEL, "gemm_f32_8x8_sve", "gemm_f32_8x12_neon", "gemm_f32_1x12_neon", "gemm_f32_4x4_ref"]
    built = [kernel(n) for n in names]
    assert [k.name for k in sme.streaming_kernels(built, None)] == [SME_KERNEL]
    assert sme.streaming_kernels(built, ["gemm_s8"]) == [] and sme.streaming_kernels(built, None, ["neon"]) == []
    assert sme.baseline_kernel(built, "gemm_f32", "aarch64").name == "gemm_f32_8x8_sve"  # SVE over NEON on max
    assert sme.baseline_kernel(built[:1], "gemm_f32", "aarch64") is None  # no non-streaming kernel built


def test_svl_is_bytes_from_the_sweep():
    assert sme.parse_svl("16,32,64") == [16, 32, 64]
    for bad in ("48", "", "16,x"):
        with pytest.raises(IsaforgeError, match="--svl"):
            sme.parse_svl(bad)


def _padded(shape: Shape, mr: int, nr: int) -> int:
    return -(-shape.m // mr) * mr * (-(-shape.n // nr) * nr) * shape.k  # KR 1


def test_a_real_sme_run_at_two_svls():
    """One plan run of the SME2 kernel at SVL 16 and 32 bytes (about 3 s): the outer products' MACs are the padded
    tiles', the SVL reached the kernel (NR and the instructions change), and the baseline ran beside it."""
    build = builds.build_for(load().arch("aarch64").triple, "clang")
    directory = builds.ensure_built(build)
    shape = Shape(16, 32, 8)
    rows = sme.collect(build, directory, ["gemm_f32"], ["sme2"], [shape], [16, 32], jobs=2)
    assert [(r.run.kernel, r.svl) for r in rows] == [(SME2_KERNEL, 16), (SME2_KERNEL, 32)]
    for r in rows:
        assert r.run.wrong == "" and r.run.mac_check_ok
        assert r.run.macs_executed == r.run.padded_macs == _padded(shape, r.nr, r.nr)  # 2VL x 2VL: MR = NR
        assert r.outer_product_share > 0 and r.run.hot_loop_instructions_per_mac > 0
        assert r.baseline is not None and r.baseline.kernel != SME2_KERNEL and r.baseline.instructions_per_mac > 0
    at16, at32 = rows
    assert (at16.nr, at32.nr) == (8, 16)
    assert at32.run.mac_mnemonics["fmopa"] < at16.run.mac_mnemonics["fmopa"]  # twice the columns per outer product
    assert at32.run.hot_loop_instructions_per_mac < at16.run.hot_loop_instructions_per_mac
