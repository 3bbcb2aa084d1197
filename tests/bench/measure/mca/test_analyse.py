"""A kernel's figures from its hot loop and its peak, and a kernel without a hot loop in the report."""

from __future__ import annotations

import pytest

from isaforge.bench.measure.mca import analyse, macs
from isaforge.bench.report import results
from isaforge.bench.report.goals import evaluate_goals
from isaforge.bench.report.libisaforge import markdown
from isaforge.catalogue import load, parse_kernel_name
from tests.bench.measure.mca.common import F32, function, kernel_loop, saved_mca


def test_a_kernel_without_a_hot_loop_is_reported_not_dropped():
    body = function("clang_gemm_f32_8x12_neon.objdump", F32)
    straight = [i for i in body if i.addr < 0x70]  # the code before the k loop: MAC-free, no backward branch
    assert macs.hot_loop(straight, macs.kernel_kind(straight)) is None
    no_loop = analyse.KernelLoop(parse_kernel_name("gemm_f32_8x12_neon", load().ops), None, None, len(straight))
    row = analyse.CoreResult("gemm_f32_8x12_neon", "gemm_f32", "neon", "clang", "neoverse-n1", "no hot loop")
    result = results.BenchResult("isaforge bench", ["clang"], ["neoverse-n1"], [], 128, ran_qemu=False)
    result.mca, result.hot_loops = [row], [results.HotLoop.of("clang", no_loop)]
    goal = evaluate_goals(result)[0]
    assert goal.met is False and "gemm_f32_8x12_neon: hot loop not found" in goal.detail
    assert "hot loop not found" in markdown(result, [goal])


def test_peak_and_percent_from_saved_outputs():
    kl = kernel_loop("clang_gemm_f32_8x12_neon.objdump", F32)
    assert kl.loop is not None and kl.kind is not None
    stream = macs.reference_stream(kl.loop.body, kl.kind)
    assert stream.mac_instructions == 30 and stream.macs(0) == 120
    ref = saved_mca("mca_ref_fmla_4s_n1.json")
    peak = analyse.peak_from(stream, "neoverse-n1", "+neon", ref)
    assert peak.cycles == pytest.approx(7506 / 500)
    assert peak.issue_rate == pytest.approx(30 / 15.012)
    assert peak.macs_per_cycle == pytest.approx(120 / 15.012)
    loop = saved_mca("mca_f32_8x12_neon_n1.json")
    res = analyse.CoreResult(kl.kernel.name, kl.kernel.op, "neon", "clang", "neoverse-n1", "ok", kl.kind, "+neon")
    analyse.fill(res, kl, loop, peak)
    assert res.macs_per_cycle == pytest.approx(96 / 12.022)
    assert res.percent_of_peak == pytest.approx(100 * (96 / 12.022) / (120 / 15.012))
    assert res.meets_goal
