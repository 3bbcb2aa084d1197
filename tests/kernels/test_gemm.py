"""Numerics of every GEMM variant against a float64 numpy oracle, under QEMU.

int8 must be exact; fp32 must stay within γ(k+1)·Σ|a||b| (isaforge.gemmjob.f32_error_bound). Shapes: every m, n
in 1..17 × k in 1..33, the same with padded leading dimensions, and large shapes that cross the Kc/Nc blocks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from isaforge import gemmjob
from isaforge.catalogue import load
from isaforge.gemmjob import Case
from isaforge.pytest_plugin import QemuRunner, TargetCpu
from tests.conftest import ROOT

OPS = ("gemm_f32", "gemm_s8")
LARGE = [Case(70, 400, 300, 301, 403, 405), Case(33, 29, 1000, 1000, 29, 29), Case(128, 128, 128, 128, 128, 128)]


def run_batch(
    qemu_run: QemuRunner,
    tc: TargetCpu,
    tmp: Path,
    op: str,
    cases: list[Case],
    mask: int | None = None,
    extremes: bool = False,
) -> str:
    """Run the cases, assert every result, and return the kernel the runner reports it used."""
    types = gemmjob.op_types(op)
    a, b = gemmjob.random_operands(types, cases, seed=len(cases) + types.index, extremes=extremes)
    job, out = tmp / f"{op}.job", tmp / f"{op}.out"
    gemmjob.write_job(job, types, a, b, cases)
    args = [str(job), str(out)] + ([hex(mask)] if mask is not None else [])
    result = qemu_run(tc.build, tc.cpu, "tests/kernels/gemm_runner", args)
    assert result.returncode == 0, result.describe()
    failures = [
        msg
        for case, (status, got) in zip(cases, gemmjob.read_results(out, types, cases), strict=True)
        if (msg := gemmjob.check_case(types, a, b, case, status, got)) is not None
    ]
    kernel = json.loads(result.stdout)["kernel"]
    assert not failures, f"{kernel} on {tc.id}: {len(failures)} wrong, first: {failures[0]}"
    return kernel


@pytest.mark.parametrize("op", OPS)
def test_default_kernel_is_right_on_every_model(target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op) -> None:
    """Also the negative leg: on cortex-a53 / cortex-a7 nothing may raise SIGILL."""
    cases = gemmjob.sweep_cases() + gemmjob.sweep_cases(9, 17, pad=3) + LARGE
    kernel = run_batch(qemu_run, target_cpu, tmp_path, op, cases)
    assert kernel.startswith(op)


@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("op", OPS)
def test_capping_walks_every_variant_down_to_ref(target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op) -> None:
    cat = load()
    arch = target_cpu.build.arch_name
    cases = gemmjob.sweep_cases() + LARGE
    mask = cat.mask(target_cpu.expected_features)
    seen = []
    while True:
        kernel = run_batch(qemu_run, target_cpu, tmp_path, op, cases, mask)
        seen.append(kernel)
        variant = cat.variant(kernel.rsplit("_", 1)[1])
        if variant.name == "ref":
            break
        mask &= ~cat.mask(variant.requires)
    every_variant = [v.name for v in cat.arch_variants(arch)]
    built = [k.name for k in cat.kernels(ROOT, arch, every_variant) if k.op == op]
    assert sorted(seen) == sorted(built), f"cap walk visited {seen}, kernels of {op}: {built}"


@pytest.mark.cpus(["max"])
def test_int8_extremes_are_exact(target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path) -> None:
    cat = load()
    cases = [Case(9, 13, 4099, 4099, 13, 13), Case(17, 17, 33, 33, 17, 17)]
    mask = cat.mask(target_cpu.expected_features)
    while True:
        kernel = run_batch(qemu_run, target_cpu, tmp_path, "gemm_s8", cases, mask, extremes=True)
        variant = cat.variant(kernel.rsplit("_", 1)[1])
        if variant.name == "ref":
            break
        mask &= ~cat.mask(variant.requires)
