"""The plan API (kernels/runtime/plan.c) under QEMU, per toolchain and CPU model: its self-checking C programs with
every kernel the model runs (layouts, fused bias and clamp with NaN/Inf, accumulation, row kernels, tiles in any
partition and a thread pool, export/import, bad input with guard bytes, m = 0 with short leading dimensions;
crafted exports of quantized plans: scales create would not have made, k above ISF_QUANT_MAX_K, a quantized section
cut short at the buffer's end), and runs that allocate nothing (malloc & co. interposed). test_plan on `max` runs
every variant's kernels; the baseline models' legs (neon and reference kernels only, which `max` runs too) are in
`make ci`."""

from __future__ import annotations

import pytest

from isaforge.pytest_plugin import QemuRunner, TargetCpu


def run_program(target_cpu: TargetCpu, qemu_run: QemuRunner, program: str) -> None:
    result = qemu_run(target_cpu.build, target_cpu.cpu, f"tests/kernels/{program}")
    assert result.returncode == 0, result.describe()
    assert result.stdout.strip().splitlines()[-1] == "0 failed", result.describe()


@pytest.mark.cpus(["max"])
def test_plan_checks_pass_with_every_kernel(target_cpu: TargetCpu, qemu_run: QemuRunner) -> None:
    run_program(target_cpu, qemu_run, "test_plan")


@pytest.mark.slow
def test_plan_checks_pass_on_every_other_model(target_cpu: TargetCpu, qemu_run: QemuRunner) -> None:
    if target_cpu.cpu == "max":
        pytest.skip("max: test_plan_checks_pass_with_every_kernel")
    run_program(target_cpu, qemu_run, "test_plan")


def test_plan_runs_allocate_nothing(target_cpu: TargetCpu, qemu_run: QemuRunner) -> None:
    run_program(target_cpu, qemu_run, "test_plan_alloc")
