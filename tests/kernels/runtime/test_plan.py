"""The plan API (kernels/runtime/plan.c) under QEMU, per toolchain and CPU model: its self-checking C programs with
every kernel the model runs (layouts, fused bias and clamp with NaN/Inf, accumulation, row kernels, tiles in any
partition and a thread pool, export/import, bad input with guard bytes, m = 0 with short leading dimensions;
crafted exports of quantized plans: scales create would not have made, k above ISF_QUANT_MAX_K, a quantized section
cut short at the buffer's end), and runs that allocate nothing (malloc & co. interposed). test_plan on `max` runs
every variant's kernels; the baseline models' legs (neon and reference kernels only, which `max` runs too) are in
`make ci`."""

from __future__ import annotations

import pytest

from isaforge import coverage
from isaforge.catalogue import load
from isaforge.pytest_plugin import QemuRunner, TargetCpu
from tests.conftest import ROOT


def run_program(
    target_cpu: TargetCpu,
    qemu_run: QemuRunner,
    program: str,
    args: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> str:
    result = qemu_run(target_cpu.build, target_cpu.cpu, f"tests/kernels/{program}", args or [], env)
    assert result.returncode == 0, result.describe()
    assert result.stdout.strip().splitlines()[-1] == "0 failed", result.describe()
    return result.stdout


@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("l1d_of", ["", "neoverse-v1"])  # Kc for 32 KiB of L1D (max's) and for 64 KiB
def test_plan_checks_pass_with_every_kernel(target_cpu: TargetCpu, qemu_run: QemuRunner, l1d_of: str) -> None:
    run_program(target_cpu, qemu_run, "test_plan", env={"ISAFORGE_CORE": l1d_of})


@pytest.mark.slow
def test_plan_checks_pass_on_every_other_model(target_cpu: TargetCpu, qemu_run: QemuRunner) -> None:
    if target_cpu.cpu == "max":
        pytest.skip("max: test_plan_checks_pass_with_every_kernel")
    run_program(target_cpu, qemu_run, "test_plan")


def test_plan_runs_allocate_nothing(target_cpu: TargetCpu, qemu_run: QemuRunner) -> None:
    run_program(target_cpu, qemu_run, "test_plan_alloc")


def streaming_full_kernels() -> list[str]:
    cat = load()
    every = cat.kernels(ROOT, "aarch64", [v.name for v in cat.arch_variants("aarch64")])
    return sorted(k.name for k in every if cat.variant(k.variant).scalable == "streaming" and k.mr > 1 and k.op in
                  cat.plain_ops())  # fmt: skip


@pytest.mark.svl_sweep
@pytest.mark.arch("aarch64")
@pytest.mark.cpus(["max"])
# The kernels run at every SVL in test_gemm's and test_quantized_sme's sweeps; the plans' own paths (tiles, threads,
# export) at the shortest and at Apple M4's 64 bytes here, the others in make ci.
@pytest.mark.parametrize(
    "svl", [s if s in (16, 64) else pytest.param(s, marks=pytest.mark.slow) for s in coverage.SVL_SWEEP]
)
def test_plan_checks_pass_with_every_sme_kernel_at_every_svl(target_cpu: TargetCpu, qemu_run: QemuRunner, svl) -> None:
    """test_plan's checks (fused bias and clamp with NaN/Inf, tiles in any partition and by threads bit-identical,
    export/import, both weight layouts) with each SME kernel, its MR × NR following the SVL while the SVE length is
    set apart."""
    out = run_program(TargetCpu(target_cpu.build, coverage.sme_model(svl)), qemu_run, "test_plan", ["_sme"])
    checked = {line.split(": ")[1].removesuffix(" checked") for line in out.splitlines() if line.endswith(" checked")}
    assert checked == set(streaming_full_kernels()), out
