"""bench.scenarios.qplans: the oracle's comparison, and real plan runs of the tests' quant_runner under QEMU (small
shapes: a few seconds) whose C must equal isaforge.quant's bytes."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge import builds
from isaforge.bench.measure.qemu_count import tile_size
from isaforge.bench.report import quantized as qreport
from isaforge.bench.scenarios import qplans, sme
from isaforge.bench.scenarios.shapes import Shape
from isaforge.catalogue import load


def test_compare_names_the_first_wrong_element() -> None:
    p = qplans.problem("gemm_qs8", Shape(3, 5, 7))
    want = qplans.expected(p)
    assert want.dtype == np.int8 and qplans.compare(p, want.tobytes()) == ""
    bad = want.copy()
    bad[1, 2] ^= 1
    assert "1 elements differ" in qplans.compare(p, bad.tobytes()) and "C[1][2]" in qplans.compare(p, bad.tobytes())


def test_every_plan_only_op_has_a_kernel_op() -> None:
    ops = qplans.quantized_ops()
    assert {"gemm_qs8", "gemm_qs8_f32", "gemm_qd8_f32"} <= set(ops)
    assert {qplans.kernel_op(o) for o in ("gemm_qs8", "gemm_qs8_f32", "gemm_qd8_f32")} == {"gemm_s8"}
    assert all(not load().ops[o].plain for o in ops)


# The tests running the static quant_runner: one worker links and disassembles it for them all (pytest-xdist). They
# run in make ci (and make bench runs the same code at scale): the slice's real bench run is test_qemu_count's.
RUNNER = pytest.mark.xdist_group("qplans-runner")


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> qplans.StaticRunner:
    build = builds.build_for(load().arch("aarch64").triple, "clang")
    directory = builds.ensure_built(build)
    return qplans.prepare(build, directory, tmp_path_factory.mktemp("quant_runner"), 128)


@RUNNER
@pytest.mark.slow
@pytest.mark.parametrize("op", ["gemm_qs8", "gemm_qs8_f32", "gemm_qd8_f32"])
def test_real_quantized_plan_runs_give_the_reference_bytes(runner, tmp_path, op: str) -> None:
    """Each op on the dotprod kernel under QEMU: C equals isaforge.quant's bytes, every tile's MACs ran once, the
    run alone was counted (no create, no packing), and its kernel loads are part of all its loads."""
    shape = Shape(9, 24, 40)
    qr = qplans.run(runner, qplans.problem(op, shape), "gemm_s8_8x12x4_dotprod", shape, tmp_path, "max")
    rc = qr.count
    assert rc.op == op and rc.counted and rc.wrong == "", rc.wrong
    # gemm_qd8_f32's kernels run about one k step more than k's tiles (its quantized A panels' extra column):
    # seen at 9x24x40 as 1.025×, past MAC_CHECK_TOLERANCE; the report shows the figure, here it only has to cover
    assert rc.macs_executed >= shape.macs and (rc.mac_check_ok or op == "gemm_qd8_f32")
    assert "isf_gemm_run" in rc.by_function and "isf_gemm_create" not in rc.by_function
    assert 0 < qr.kernel_load_bytes < qr.load_bytes
    # two row tiles (8 rows, then the row kernel's 1) read the packed weights twice; every load has a provenance
    assert qr.weight_bytes == 2 * qr.weights_once == 2 * shape.k * shape.n
    assert qr.unknown_loads == 0 and sum(qr.kernel_loads_by_source.values()) == qr.kernel_load_bytes


@RUNNER
@pytest.mark.slow
def test_real_requantization_costs_more_than_the_int32_output(runner, tmp_path) -> None:
    """gemm_qs8 and its gemm_s8 baseline on the same kernel and operands: the same MACs, more instructions for
    the requantized store, both C exact."""
    shape = Shape(16, 24, 32)
    p = qplans.problem("gemm_qs8", shape)
    kernel = "gemm_s8_8x12x4_dotprod"
    qs8 = qplans.run(runner, p, kernel, shape, tmp_path, "max")
    s8 = qplans.run(runner, qplans.baseline_of(p), kernel, shape, tmp_path, "max")
    assert qs8.count.wrong == s8.count.wrong == ""
    assert qs8.count.macs_executed == s8.count.macs_executed
    assert qreport.overhead(qs8, s8) > 0


@RUNNER
@pytest.mark.slow
# int8's kernels here, int4's (the same provenance through nibble panels) in make ci
@pytest.mark.parametrize("op", [qplans.INT8_PATH, pytest.param(qplans.INT4_PATH, marks=pytest.mark.slow)])
def test_real_runs_of_every_kernel_load_each_weight_once_at_one_row_tile(runner, tmp_path, op: str) -> None:
    """The weight-bytes measurement proven on every kernel of the decoding paths' kernel op the build has: with one
    row tile (m = 1 for the row kernels, m = MR for the others) each packed weight is read once, so the loads
    provenance labels weights must read n_padded · k bytes for int8 and half that for int4, no kernel load may be
    unlabelled, and C is exact. (gemm_s4's portable reference reads each packed byte once per nibble: twice.)"""
    kernels = [k for k in runner.kernels() if k.op == qplans.kernel_op(op)]
    assert len({k.variant for k in kernels}) > 2, [k.name for k in kernels]
    streaming = sme.StreamingRunner.at(runner, 32)  # the SME kernels under the SME QEMU, at SVL 32 bytes
    for kernel in kernels:
        here = streaming if load().variant(kernel.variant).scalable == "streaming" else runner
        mr, nr = tile_size(kernel, here.sve_bits)
        shape = Shape(mr, 64, 256)
        qr = qplans.run(here, qplans.problem(op, shape), kernel.name, shape, tmp_path, here.cpu)
        assert qr.count.wrong == "" and kernel.name in qr.count.macs_by_kernel, (kernel.name, qr.count.wrong)
        packed = -(-shape.n // nr) * nr * shape.k * load().ops[op].b.element_bits // 8
        assert qr.weights_once == packed, kernel.name
        twice = kernel.variant == "ref" and kernel.op == "gemm_s4"
        assert qr.weight_bytes == packed * (2 if twice else 1), (kernel.name, qr.kernel_loads_by_source)
        assert qr.unknown_loads == 0, qr.unknown_sites
