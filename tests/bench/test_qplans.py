"""bench's quantized section: the bytes each load spelling reads, the requantization overhead and decoding goals on
fabricated counts with known answers (PASS, FAIL, wrong C, a path that did not run), the oracle's comparison, and
real plan runs of qplan.c under QEMU (small shapes: a few seconds) whose C must equal isaforge.quant's bytes."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge import builds
from isaforge.bench import qplans, qreport
from isaforge.bench.loadbytes import load_bytes
from isaforge.bench.mca.objcode import Insn, split_operands
from isaforge.bench.qemu_count import PLAN, RunCount, Shape
from isaforge.bench.qplans import QuantResult, QuantRun
from isaforge.catalogue import load


def insn(text: str) -> Insn:
    mnemonic, _, rest = text.partition(" ")
    return Insn(0, mnemonic, split_operands(rest))


@pytest.mark.parametrize(
    ("text", "sve_bits", "want"),
    [
        ("ldr q0, [x1], #16", 128, 16),
        ("ldr d3, [x0]", 128, 8),
        ("ldr s3, [x0, #4]", 128, 4),
        ("ldp q0, q1, [x1], #32", 128, 32),
        ("ldr x8, [sp, #8]", 128, 8),
        ("ldrb w9, [x2]", 128, 1),
        ("ldrsw x9, [x2]", 128, 4),
        ("ld1 {v0.16b, v1.16b}, [x1], #32", 128, 32),
        ("ld1 {v0.8b}, [x1]", 128, 8),
        ("ld1r {v0.4s}, [x0]", 128, 4),
        ("ld1 {v0.s}[1], [x0]", 128, 4),
        ("ld1b {z0.b}, p0/z, [x1]", 256, 32),
        ("ld1b {z0.b}, p0/z, [x1]", 128, 16),
        ("ld1sb {z0.h}, p0/z, [x1]", 256, 16),
        ("ld1w {z0.s}, p0/z, [x1]", 256, 32),
        ("ld1rqb {z0.b}, p0/z, [x0]", 256, 16),
        ("ld1rw {z0.s}, p0/z, [x0]", 256, 4),
        ("ldr z1, [x1, #1, mul vl]", 256, 32),
        ("add x0, x0, #1", 128, 0),
        ("sdot v0.4s, v1.16b, v2.4b[0]", 128, 0),
    ],
)
def test_load_bytes(text: str, sve_bits: int, want: int) -> None:
    assert load_bytes(insn(text), sve_bits) == want


def count(op: str, kernel: str, instructions: int, status: int = 0, wrong: str = "") -> RunCount:
    return RunCount(op, "dotprod", kernel, "256x256x64", 128, 1, 1, "clang", PLAN, status, wrong=wrong,
                    instructions=instructions)  # fmt: skip


def fabricated(qs8: int, s8: int, i8: tuple[int, float], i4: tuple[int, float], wrong: str = "") -> QuantResult:
    k = "gemm_s8_8x12x4_dotprod"
    q = QuantResult("clang", 128)
    q.runs = [QuantRun(count("gemm_qs8", k, qs8, wrong=wrong), "max")]
    q.baseline = [QuantRun(count("gemm_s8", k, s8), "max")]
    q.decode = {
        qplans.INT8_PATH: QuantRun(count(qplans.INT8_PATH, "a", 10), "neoverse-v1", i8[0], i8[0], i8[1]),
        qplans.INT4_PATH: QuantRun(count(qplans.INT4_PATH, "b", 10), "neoverse-v1", i4[0], i4[0], i4[1]),
    }
    return q


def test_goals_pass_at_the_targets_and_fail_past_them() -> None:
    passing = qreport.goals(fabricated(1029, 1000, (1000, 100.0), (550, 75.0)))
    assert [met for _t, met, _d in passing] == [True, True, True]
    assert "+2.90%" in passing[0][2] and "0.550×" in passing[1][2] and "0.750×" in passing[2][2]
    failing = qreport.goals(fabricated(1031, 1000, (1000, 100.0), (551, 76.0)))
    assert [met for _t, met, _d in failing] == [False, False, False]


def test_a_wrong_c_fails_the_overhead_goal_whatever_the_count() -> None:
    (title, met, detail), *_ = qreport.goals(fabricated(1000, 1000, (1, 1.0), (1, 1.0), wrong="C[0][0] differs"))
    assert "≤ 3%" in title and met is False and "wrong C" in detail


def test_a_decoding_path_that_did_not_run_is_not_evaluated_and_says_why() -> None:
    q = fabricated(1000, 1000, (1000, 100.0), (500, 50.0))
    del q.decode[qplans.INT4_PATH]
    q.decode_missing[qplans.INT4_PATH] = "this build has no gemm_s4 kernel but the reference"
    _overhead, bytes_goal, cycles_goal = qreport.goals(q)
    assert bytes_goal[1] is None and cycles_goal[1] is None and "no gemm_s4 kernel" in bytes_goal[2]
    text = "\n".join(qreport.markdown(q, [], []))
    assert "no gemm_s4 kernel but the reference" in text and "| —" in text
    assert "XNNPACK's qs8 fully-connected" in text  # item 4: the report says where the peer stands


def test_the_markdown_prints_each_figure_with_its_target() -> None:
    text = "\n".join(qreport.markdown(fabricated(1031, 1000, (1000, 100.0), (500, 50.0)), [], []))
    assert "+3.10% | ≤ 3% | **FAIL**" in text
    assert "0.500× | ≤ 0.55× | PASS" in text and "0.500× | ≤ 0.75× | PASS" in text
    peers_note = text.split("### Peers, ")[1]
    assert "side by side's qs8 tables" in peers_note and "not done" not in peers_note


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


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> qplans.StaticRunner:
    build = builds.build_for(load().arch("aarch64").triple, "clang")
    directory = builds.ensure_built(build)
    return qplans.prepare(build, directory, tmp_path_factory.mktemp("qplan"), 128)


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
    # the weights are read at least once: W is k × n bytes
    assert qr.kernel_load_bytes >= shape.k * shape.n


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
