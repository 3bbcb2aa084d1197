"""bench's quantized section: the requantization overhead and decoding goals on fabricated counts with known answers
(PASS, FAIL, wrong C, a path that did not run), and the markdown that prints them."""

from __future__ import annotations

from isaforge.bench.measure.mca import provenance
from isaforge.bench.measure.qemu_count import PLAN, RunCount
from isaforge.bench.report import quantized as qreport
from isaforge.bench.scenarios import qplans
from isaforge.bench.scenarios.qplans import QuantResult, QuantRun


def count(op: str, kernel: str, instructions: int, status: int = 0, wrong: str = "") -> RunCount:
    return RunCount(op, "dotprod", kernel, "256x256x64", 128, 1, 1, "clang", PLAN, status, wrong=wrong,
                    instructions=instructions)  # fmt: skip


def decoding(op: str, kernel: str, weights: int, cycles: float) -> QuantRun:
    """A decoding run that loaded its packed weights (`weights` bytes) once, and as much A and epilogue again."""
    loads = {provenance.B: weights, provenance.A: weights // 2, provenance.EPILOGUE: weights // 2}
    rc = count(op, kernel, 10)
    return QuantRun(rc, "neoverse-v1", kernel_load_bytes=2 * weights, load_bytes=3 * weights, weight_bytes=weights,
                    weights_once=weights, kernel_loads_by_source=loads, cycles=cycles)  # fmt: skip


def fabricated(qs8: int, s8: int, i8: tuple[int, float], i4: tuple[int, float], wrong: str = "") -> QuantResult:
    """i8, i4: each decoding path's (weight bytes, modeled cycles)."""
    k = "gemm_s8_8x12x4_dotprod"
    q = QuantResult("clang", 128)
    q.runs = [QuantRun(count("gemm_qs8", k, qs8, wrong=wrong), "max")]
    q.baseline = [QuantRun(count("gemm_s8", k, s8), "max")]
    q.decode = {
        qplans.INT8_PATH: decoding(qplans.INT8_PATH, "a", *i8),
        qplans.INT4_PATH: decoding(qplans.INT4_PATH, "b", *i4),
    }
    return q


def test_goals_pass_at_the_targets_and_fail_past_them() -> None:
    passing = qreport.goals(fabricated(1029, 1000, (1000, 100.0), (550, 75.0)))
    assert [met for _t, met, _d in passing] == [True, True, True]
    assert "+2.90%" in passing[0][2] and "0.550×" in passing[1][2] and "0.750×" in passing[2][2]
    failing = qreport.goals(fabricated(1031, 1000, (1000, 100.0), (551, 76.0)))
    assert [met for _t, met, _d in failing] == [False, False, False]


def test_the_bytes_goal_judges_the_weight_bytes_not_every_kernel_load() -> None:
    # int4 reads 0.55× the int8 weights but the same A and epilogue bytes again (0.6× all its kernel loads)
    q = fabricated(1000, 1000, (1000, 100.0), (550, 50.0))
    q.decode[qplans.INT4_PATH].kernel_load_bytes = 1200
    _overhead, weights, _cycles = qreport.goals(q)
    assert "packed weights" in weights[0] and weights[1] is True and "550 / 1,000 bytes" in weights[2]
    text = "\n".join(qreport.markdown(q, [], []))
    assert "| weight bytes the micro-kernels load | 0.550× | ≤ 0.55× | PASS |" in text
    assert "| all the micro-kernels' loads (information) | 0.600× |" in text
    assert qreport.to_json(q)["decode_weight_bytes_ratio"] == 0.55
    assert "loaded exactly their packed weights' bytes" in qreport.sanity(q)


def test_weight_bytes_not_the_packed_weights_or_an_unlabelled_load_leave_the_goal_unproven() -> None:
    q = fabricated(1000, 1000, (1000, 100.0), (500, 50.0))
    q.decode[qplans.INT8_PATH].weights_once = 2000  # the int8 kernel missed half its weights
    i4 = q.decode[qplans.INT4_PATH]
    i4.unknown_loads, i4.unknown_sites = 7, ["isf_ukernel_gemm_s4_8x4x8_svei8mm+0x2d0: ld1b\t{ z5.b }, p0/z, [x3, x9]"]
    i4.kernel_loads_by_source[provenance.UNKNOWN] = 112
    _overhead, weights, cycles = qreport.goals(q)
    assert weights[1] is False and cycles[1] is True
    assert "not its packed weights' 2,000" in weights[2] and "7 executed kernel loads of unknown" in weights[2]
    text = "\n".join(qreport.markdown(q, [], []))
    assert "**The weight bytes are not proven**" in text and "+0x2d0: ld1b" in text
    assert "| weight bytes the micro-kernels load | 0.500× | ≤ 0.55× | **FAIL** |" in text
    assert "not proven" in qreport.sanity(q) and qreport.to_json(q)["decode_weights_proven"] is False


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
