"""gemm_f32's SME2 kernels (gemm_f32_8x8_sme2 and its row kernel gemm_f32_1x8_sme2), each by name, at every
streaming vector length, on the paths test_gemm.py's SVL sweep (plain calls, no epilogue) leaves out: the store with
bias and clamp fused in a plan, applied on the last Kc block after the earlier blocks' accumulate (ZA moved out four
rows at a time, 2 x SVL/4 rows, bias and bounds 2 x SVL/4 columns), NaN and Inf through it, and guard pages (the
panels grow with the SVL; every load must stop at their end at each length)."""

from __future__ import annotations

import pytest

from isaforge import coverage, gemmjob
from isaforge.gemmjob import Case
from isaforge.pytest_plugin import QemuRunner, TargetCpu
from tests.kernels.test_gemm import LARGE, edge_cases, plan_cases, run_batch

KERNELS = ("gemm_f32_8x8_sme2", "gemm_f32_1x8_sme2")
TYPES = gemmjob.op_types("gemm_f32")
# Past the tallest tile (2 x 64 rows at 256 bytes) and two of the shortest's Kc blocks, with an odd k so that the
# kernels' leftover steps (k mod 8) and their pipelined loop both run on the accumulating calls.
TALL = Case(131, 133, 1001, 1003, 135, 137)


def _model(svl: int) -> str:
    return f"qemu-sme:max,sme_fa64=off,sme-default-vector-length={svl}"


@pytest.mark.arch("aarch64")
@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("svl", coverage.SVL_SWEEP)
@pytest.mark.parametrize("kernel", KERNELS)
def test_fused_bias_and_clamp_at_every_svl(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, kernel: str, svl: int
) -> None:
    cases = [*plan_cases(), TALL] if kernel.startswith("gemm_f32_8x8") else plan_cases()
    epilogue = gemmjob.random_epilogue(TYPES, max(c.n for c in cases), seed=svl)
    tc = TargetCpu(target_cpu.build, _model(svl))
    assert run_batch(qemu_run, tc, tmp_path, "gemm_f32", cases, kernel, plan=True, epilogue=epilogue) == kernel


@pytest.mark.arch("aarch64")
@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("svl", coverage.SVL_SWEEP)
@pytest.mark.parametrize("kernel", KERNELS)
def test_nan_and_inf_through_bias_and_clamp_at_every_svl(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, kernel: str, svl: int
) -> None:
    """A NaN row stays NaN (FMAX/FMIN, not the NaN-dropping FMAXNM/FMINNM); an infinite column becomes a bound."""
    case = Case(9, 13, 7, 7, 13, 13)
    a, b = gemmjob.random_operands(TYPES, [case], seed=7)
    gemmjob.plant_non_finite(TYPES, a, b, case)
    epilogue = gemmjob.random_epilogue(TYPES, case.n, seed=4)
    tc = TargetCpu(target_cpu.build, _model(svl))
    ran = run_batch(qemu_run, tc, tmp_path, "gemm_f32", [case], kernel, operands=(a, b), plan=True, epilogue=epilogue)
    assert ran == kernel


@pytest.mark.arch("aarch64")
@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("svl", coverage.SVL_SWEEP)
@pytest.mark.parametrize("kernel", KERNELS)
def test_guard_pages_at_every_svl(target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, kernel: str, svl: int) -> None:
    """A read past A or B (or the packed panels) or a write past C faults at the length that does it."""
    cases = [*edge_cases(0), LARGE[1]]
    tc = TargetCpu(target_cpu.build, _model(svl))
    assert run_batch(qemu_run, tc, tmp_path, "gemm_f32", cases, kernel, guard_pages=True) == kernel
