"""The float SME kernels (gemm_f32_*, gemm_bf16_*, gemm_f16_*_sme2) under the SME QEMU, where the suite's NaN/Inf and
call-boundary tests do not reach them: those run on the catalogue's models, whose `max` is QEMU 10's (SME without
SME2), so no SME2 kernel is among the kernels they call. Here the same checks run on `qemu-sme:max` with FA64 off
(streaming SVE only, as on Apple M4): NaN and Inf through fmopa, bfmopa and the widening fmopa (2-way products summed
in fp32, bfloat16's rounded to odd and flushed to zero under FPCR.EBF = 0) and through the row kernels' fmla, bfdot
and fdot, at the shortest SVL (one 2VL x 2VL tile of 8 x 8) and at 64 bytes (32 x 32, the SVL of Apple M4); and every
kernel's call boundary (callee-saved registers, SM and ZA off after each) with SME2 active."""

from __future__ import annotations

import pytest

from isaforge import gemmjob
from isaforge.gemmjob import Case
from isaforge.pytest_plugin import QemuRunner, TargetCpu
from tests.kernels.runtime.test_memory_safety import run_self_checking
from tests.kernels.test_gemm import every_kernel

SME2_MODEL = "qemu-sme:max,sme_fa64=off"
KERNELS = {op: {f"{op}_8x8x2_sme2", f"{op}_1x8x2_sme2"} for op in ("gemm_bf16", "gemm_f16")}
KERNELS["gemm_f32"] = {"gemm_f32_8x8_sme2", "gemm_f32_1x8_sme2", "gemm_f32_4x16_sme"}


@pytest.mark.svl_sweep
@pytest.mark.cpus(["max"])
@pytest.mark.arch("aarch64")
@pytest.mark.parametrize("svl", [16, pytest.param(64, marks=pytest.mark.slow)])
@pytest.mark.parametrize("op", sorted(KERNELS))
def test_nan_and_inf_propagate_in_the_sme2_kernels(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op: str, svl: int
) -> None:
    tc = TargetCpu(target_cpu.build, f"{SME2_MODEL},sme-default-vector-length={svl}")
    types = gemmjob.op_types(op)
    # m past one tile at each SVL (a row-kernel row after the full tiles), n past two tiles, k across the loop's
    # eight-block passes and its peeled one, two and four blocks; one job, every case's NaN and infinity planted in
    # the operands they share (test_gemm.py's test_nan_and_inf_propagate_in_every_kernel says why that holds)
    cases = [Case(m, n, k, k, n, n) for m, n, k in [(9, 13, 7), (17, 30, 40), (33, 70, 29), (1, 1, 1)]]
    a, b = gemmjob.random_operands(types, cases, seed=7)
    for case in cases:
        gemmjob.plant_non_finite(types, a, b, case)
    seen = every_kernel(qemu_run, tc, tmp_path, op, cases, scalable_only="streaming", every_case=True, operands=(a, b))
    assert KERNELS[op] <= set(seen), seen


@pytest.mark.cpus(["max"])
@pytest.mark.arch("aarch64")
def test_sme2_kernels_keep_the_call_boundary(target_cpu: TargetCpu, qemu_run: QemuRunner) -> None:
    out = run_self_checking(qemu_run, TargetCpu(target_cpu.build, SME2_MODEL), "test_call_boundary")
    plain = run_self_checking(qemu_run, target_cpu, "test_call_boundary")
    called = int(out.split(" kernels called", 1)[0].split()[-1])
    # the SME2 model calls the four kernels here on top of what `max` calls (and the other SME2 kernels)
    assert "SVCR" in out and called >= int(plain.split(" kernels called", 1)[0].split()[-1]) + 4, (out, plain)
