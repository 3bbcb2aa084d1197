"""The quantized plans (gemm_qs8, gemm_qs8_f32, gemm_qd8_f32, gemm_qd8_f32_qc4w) and gemm_s4's on every SME kernel,
by name, at every streaming vector length of isaforge.coverage.SVL_SWEEP under the SME QEMU with FA64 off: each C byte
for byte equal to isaforge.quant's numpy reference. test_quantized.py runs every kernel on QEMU `max`, which has no
SME2; here the streaming kernels' tiles (MR and NR both growing with SVL) meet every step of the int32 epilogue:
m = 1…17 and 70 (every row count of a first tile at SVL 16, edge tiles at every SVL), n and k multiples of no tile, k
past Kc at every SVL (the partial sums), bias and clamp, W[n][k], tiles in reverse order, a plan exported and
imported. One QEMU start per op and SVL, every SME kernel's cases in its batch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from isaforge import coverage, quant, quantjob
from isaforge.catalogue import load
from isaforge.pytest_plugin import QemuRunner, TargetCpu
from tests.kernels.runtime.test_quantized import OPS, PROGRAM, Case, dynamic, int4, kernels, not_the_reference, operands

ROWS = (*range(1, 18), 70)
COLUMNS = (13, 37, 70, 5, 131, 1)
# Kc is L1_BUDGET / (MR + NR) bytes of k: 1024 at SVL 16 down to 64 at 256, so 1100 crosses it at every SVL.
DEPTHS = (29, 70, 1100, 3, 250, 9, 0)


def params(rng: np.random.Generator, op: str, i: int, n: int, k: int) -> quant.QuantParams:
    """Per-channel scales on even i, per-tensor on odd; zero points at both ends of int8; for qc4w every third case
    blockwise (blocks of 32 or 64, k a multiple of neither)."""
    if op == "gemm_qd8_f32_qc4w" and i % 3 == 2:
        block = (32, 64)[i % 2]
        blocks = max(1, -(-k // block))
        return quant.QuantParams(rng.uniform(1e-2, 5e-2, n * blocks).astype(np.float32), w_bits=4, w_block=block)
    w_scales = rng.uniform(1e-3, 2e-2, n if i % 2 == 0 else 1).astype(np.float32)
    return quant.QuantParams(
        w_scales,
        a_scale=0.05,
        a_zero_point=(-128, 127, 0, 17)[i % 4],
        c_scale=(0.5, 2.0, 40.0)[i % 3],
        c_zero_point=(-128, 127, 3)[i % 3],
    )


def sme_cases(op: str, kernel: str, seed: int) -> list[Case]:
    rng = np.random.default_rng(seed)
    out = []
    for i, m in enumerate(ROWS):
        n, k = COLUMNS[i % len(COLUMNS)], DEPTHS[i % len(DEPTHS)]
        bias = rng.standard_normal(n) if dynamic(op) else rng.integers(-50000, 50000, n, dtype=np.int32)
        clamp = None
        if i % 3 == 1 and op != "gemm_s4":
            clamp = (-100, 90) if op == "gemm_qs8" else (-3.0, 2.5)
        out.append(
            Case(
                op,
                kernel,
                **operands(rng, op, m, n, k),
                params=params(rng, op, i, n, k),
                bias=bias if i % 4 != 3 else None,
                clamp=clamp,
                nk=i % 2 == 1,
                tiles=i % 5 == 4,
                exported=i % 6 == 2,
            )
        )
    return out


def run_named(qemu_run: QemuRunner, tc: TargetCpu, tmp_path: Path, batch: list[Case]) -> list[quantjob.QuantOutput]:
    """The batch in one QEMU start; each result with the kernel its plan reports it ran."""
    jobs, results = tmp_path / "jobs.bin", tmp_path / "results.bin"
    batch_jobs = [c.job() for c in batch]
    quantjob.write_jobs(jobs, batch_jobs)
    result = qemu_run(tc.build, tc.cpu, PROGRAM, [str(jobs), str(results)])
    assert result.returncode == 0, result.describe()
    return quantjob.read_results(results, batch_jobs, result.stdout)


def streaming(names: list[str]) -> list[str]:
    return [name for name in names if name.endswith(("_sme", "_sme2"))]


@pytest.mark.svl_sweep
@pytest.mark.arch("aarch64")
@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("svl", coverage.SVL_SWEEP)
@pytest.mark.parametrize("op", OPS)
def test_every_sme_kernel_gives_the_reference_bytes_at_every_svl(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path: Path, op: str, svl: int
) -> None:
    tc = TargetCpu(target_cpu.build, coverage.sme_model(svl))
    names = streaming(kernels(qemu_run, tc, op))
    assert names, f"{op} has no SME kernel in this build"
    batch = [c for i, name in enumerate(names) for c in sme_cases(op, name, seed=svl + i)]
    outputs = run_named(qemu_run, tc, tmp_path, batch)
    ran = {(c.kernel, out.kernel) for c, out in zip(batch, outputs, strict=True) if out.status == 0}
    assert all(asked == got for asked, got in ran), f"asked for one kernel, the plan ran another: {sorted(ran)}"
    wrong = not_the_reference(batch, [(out.status, out.guards_kept, out.c) for out in outputs])
    assert not wrong, "\n".join(wrong[:20])


@pytest.mark.arch("aarch64")
@pytest.mark.cpus(["max"])
def test_int4_and_int8_extremes_are_exact_on_sme_kernels(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path: Path
) -> None:
    """Both ends of int8 A against both ends of int4 (−8, 7) and int8 W over a k past Kc: the int4 kernels' sums are
    16 times the true ones until shifted back, so a shift that is not exact, or one applied to the partial sums
    too, shows here. At the widest tile and the narrowest."""
    batch = []
    for op in ("gemm_s4", "gemm_qs8_f32"):
        w_lo, w_hi = (-8, 7) if int4(op) else (-128, 127)
        a = np.full((9, 1500), -128, np.int8)
        a[1::2] = 127
        w_kn = np.full((1500, 11), w_lo, np.int8)
        w_kn[:, 1::2] = w_hi
        p = quant.QuantParams(np.array([2.0**-20], np.float32), a_zero_point=0)
        batch.append(Case(op, "", a=a, w_kn=w_kn, params=p if op != "gemm_s4" else quantjob.NO_QUANT))
    for svl in (coverage.SVL_SWEEP[0], coverage.SVL_SWEEP[-1]):
        tc = TargetCpu(target_cpu.build, coverage.sme_model(svl))
        named = [
            Case(c.op, name, a=c.a, w_kn=c.w_kn, params=c.params)
            for c in batch
            for name in streaming(kernels(qemu_run, tc, c.op))
        ]
        assert named, "no SME kernel of gemm_s4 or gemm_s8 in this build"
        outputs = run_named(qemu_run, tc, tmp_path, named)
        wrong = not_the_reference(named, [(out.status, out.guards_kept, out.c) for out in outputs])
        assert not wrong, "\n".join(wrong)


@pytest.mark.svl_sweep
@pytest.mark.arch("aarch64")
@pytest.mark.cpus(["max"])
# Every kernel's quantized plans run at every SVL above; the exhaustive step combinations at the shortest and at Apple
# M4's 64 bytes here, all five in make ci.
@pytest.mark.parametrize(
    "svl", [s if s in (16, 64) else pytest.param(s, marks=pytest.mark.slow) for s in coverage.SVL_SWEEP]
)
def test_every_sme_int32_kernel_stores_the_scalar_epilogue(
    target_cpu: TargetCpu, qemu_run: QemuRunner, svl: int
) -> None:
    """tests/kernels/test_epilogue.c under the SME QEMU: each SME kernel of gemm_s8 and gemm_s4 called directly with
    every combination of the epilogue's steps, byte for byte against isf_epilogue_store_s32, its whole tile at
    this SVL (test_quantized.py runs it on `max`, whose SME has no SME2)."""
    tc = TargetCpu(target_cpu.build, coverage.sme_model(svl))
    names = streaming(kernels(qemu_run, tc, "gemm_s8") + kernels(qemu_run, tc, "gemm_s4"))
    assert names, "no SME kernel of gemm_s8 or gemm_s4 in this build"
    result = qemu_run(tc.build, tc.cpu, "tests/kernels/test_epilogue")
    assert result.returncode == 0, result.describe()
    assert result.stdout.strip().splitlines()[-1] == "0 failed", result.stdout
    unchecked = [name for name in names if f"{name}: epilogue checked" not in result.stdout]
    assert not unchecked, f"not checked at SVL {svl}: {unchecked}"


@pytest.mark.svl_sweep
@pytest.mark.arch("aarch64")
@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("svl", (coverage.SVL_SWEEP[0], coverage.SVL_SWEEP[-1]))
def test_every_sme_kernel_keeps_the_call_boundary(target_cpu: TargetCpu, qemu_run: QemuRunner, svl: int) -> None:
    """tests/kernels/test_call_boundary.c under the SME QEMU (test_memory_safety.py runs it on `max`, where the SME2
    kernels do not run): callee-saved registers, streaming mode and ZA off, TPIDR2_EL0 0 after every kernel this
    model runs, each of them counted, at the narrowest and the widest SVL."""
    tc = TargetCpu(target_cpu.build, coverage.sme_model(svl))
    # The kernel table has an entry per op and kernel, the quantized ops' for gemm_s8's and gemm_s4's kernels too.
    runnable = [name for op in load().ops for name in kernels(qemu_run, tc, op)]
    assert streaming(runnable), "no SME kernel in this build"
    result = qemu_run(tc.build, tc.cpu, "tests/kernels/test_call_boundary")
    assert result.returncode == 0, result.describe()
    assert result.stdout.strip().splitlines()[-1] == "0 failed", result.stdout
    assert f"{len(runnable)} kernels called through the trampoline, SVCR and TPIDR2_EL0 read" in result.stdout
