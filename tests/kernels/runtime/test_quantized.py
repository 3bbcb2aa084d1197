"""The quantized plans (gemm_qs8, gemm_qs8_f32, gemm_qd8_f32, gemm_qd8_f32_qc4w) and gemm_s4's under QEMU `max`, every
kernel by name, on both arches and compilers: each C byte for byte equal to isaforge.quant's numpy reference of
isaforge.h's formulas (int8, int32 and fp32 alike), the bytes around and between C's rows untouched. Cases: zero points
at both ends of int8, per-tensor and per-channel scales, scales that put many values on .5 ties, saturation at both
ends, m = 1…17, k past one Kc block (the partial sums), W[n][k], tiles in reverse order, k = 0, m = 1 across many tile
columns, k = ISF_QUANT_MAX_K with every product at its largest; int4 weights at both ends of their range, blockwise
scales with k not a multiple of the block (and k = 0); plans run after an export and import; scales at FLT_MIN and
FLT_MAX, and dynamic rows at and below the least span quantized (zero rows below). Bad parameters are refused, scales
(given or derived), fp32 bias and bounds that are not normal floats among them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from isaforge import quant, quantjob
from isaforge.catalogue import load
from isaforge.pytest_plugin import QemuRunner, TargetCpu

PROGRAM = "tests/kernels/quant_runner"
OPS = ("gemm_qs8", "gemm_qs8_f32", "gemm_qd8_f32", "gemm_qd8_f32_qc4w", "gemm_s4")
INVALID_ARG = 1


@dataclass(frozen=True)
class Case:
    op: str
    kernel: str
    a: np.ndarray
    w_kn: np.ndarray
    params: quant.QuantParams
    bias: np.ndarray | None = None
    clamp: tuple[float, float] | None = None
    nk: bool = False
    tiles: bool = False
    exported: bool = False  # run after isf_gemm_export and isf_gemm_import

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.a.shape[0], self.w_kn.shape[1], self.w_kn.shape[0]

    def job(self) -> quantjob.QuantJob:
        mode = quantjob.REIMPORTED if self.exported else quantjob.REVERSED_TILES if self.tiles else quantjob.RUN
        return quantjob.QuantJob(
            self.op, self.kernel, self.a, self.w_kn, self.params, self.bias, self.clamp, self.nk, mode
        )

    def expected(self) -> np.ndarray:
        if self.op == "gemm_s4":
            return quant.gemm_s4(self.a, self.w_kn) + (0 if self.bias is None else self.bias.astype(np.int32))
        clamp = self.clamp if self.clamp is not None else ((-128, 127) if self.op == "gemm_qs8" else None)
        return quant.REFERENCE[self.op](self.a, self.w_kn, self.params, self.bias, clamp)


def dynamic(op: str) -> bool:
    return load().ops[op].a.name == "f32"


def int4(op: str) -> bool:
    return load().ops[op].b.element_bits == 4


def operands(rng: np.random.Generator, op: str, m: int, n: int, k: int, **kw) -> dict:
    w_lo, w_hi = (-8, 8) if int4(op) else (-128, 128)
    w_kn = rng.integers(w_lo, w_hi, (k, n), dtype=np.int8)
    if int4(op) and k > 1 and n > 1:
        w_kn[0, :] = -8  # both ends of int4 in every column
        w_kn[1, 0] = 7
    if dynamic(op):
        a = (rng.standard_normal((m, k)) * rng.uniform(0.1, 10)).astype(np.float32)
        if m > 1:
            a[1] = np.abs(a[1])  # a row with no negative value: lo = 0
        if k > 20:
            # ignored by the row's range, quantized as 0 (isaforge.h), wherever it falls; a payload, unlike the
            # default NaN (whose low bits are 0), so a vector path that only rounds it would give another byte
            a[0, k - 18] = np.array(0x7FC0_1235, np.uint32).view(np.float32)
        if m > 3:
            # span 255 and inv 1 exactly: every value a tie, rounded to even (−2.5 → −2, 3.5 → 4)
            a[3] = np.resize(np.array([-127.5, 127.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 100.5], np.float32), k)
    else:
        a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    return {"a": a, "w_kn": w_kn, **kw}


def cases(op: str, kernel: str, seed: int) -> list[Case]:
    rng = np.random.default_rng(seed)
    out = []
    shapes = [(1, 37, 29), (2, 12, 64), (5, 16, 900), (8, 24, 33), (17, 40, 70), (3, 7, 2100), (1, 130, 1700)]
    for i, (m, n, k) in enumerate(shapes):
        per_channel = i % 2 == 0
        w_scales = rng.uniform(1e-3, 2e-2, n if per_channel else 1).astype(np.float32)
        zp = (-128, 127, 0, 17)[i % 4]
        bias = rng.integers(-50000, 50000, n, dtype=np.int32) if not dynamic(op) else rng.standard_normal(n)
        p = quant.QuantParams(
            w_scales, a_scale=0.05, a_zero_point=zp, c_scale=(0.5, 2.0, 40.0)[i % 3], c_zero_point=(-128, 127, 3)[i % 3]
        )
        clamp = ((-100, 90) if op == "gemm_qs8" else (-3.0, 2.5)) if i % 3 == 1 and op != "gemm_s4" else None
        out.append(
            Case(
                op,
                kernel,
                **operands(rng, op, m, n, k),
                params=p,
                bias=bias if i % 4 != 3 else None,
                clamp=clamp,
                nk=i % 2 == 1,
                tiles=i == 4,
                exported=i in (2, 5),
            )
        )
    # Ties: power-of-two scales put many products on .5; k = 0.
    ties = quant.QuantParams(np.array([0.5], np.float32), a_scale=1.0, a_zero_point=-128, c_scale=4.0)
    out.append(Case(op, kernel, **operands(rng, op, 6, 21, 13), params=ties))
    k0 = operands(rng, op, 3, 9, 0)
    out.append(Case(op, kernel, **k0, params=ties, bias=np.arange(9, dtype=np.int32), exported=True))
    # m = 1 across many tile columns with k past Kc: isf_gemm_run's regions as wide as one row's sums allow, the
    # tiles one tile column each; both the reference's bytes.
    wide = operands(rng, op, 1, 520, 2100)
    wide_p = quant.QuantParams(rng.uniform(1e-3, 2e-2, 520).astype(np.float32), a_scale=0.05, a_zero_point=5)
    out += [Case(op, kernel, **wide, params=wide_p, tiles=tiles) for tiles in (False, True)]
    return out + (blockwise_cases(kernel, rng) if op == "gemm_qd8_f32_qc4w" else [])


def blockwise_cases(kernel: str, rng: np.random.Generator) -> list[Case]:
    """Scales per block of k: k not a multiple of the block, blocks from 32 up, one block (k ≤ w_block), m = 1, and
    k = 0 (one block: n scales)."""
    out = []
    for m, n, k, block, clamp in [
        (1, 40, 100, 32, None),
        (9, 13, 333, 64, (-2.0, 2.0)),
        (3, 70, 96, 96, None),
        (2, 5, 40, 128, None),
        (17, 24, 1100, 256, None),
        (4, 6, 0, 32, None),
    ]:
        blocks = max(1, -(-k // block))
        w_scales = rng.uniform(1e-2, 5e-2, n * blocks).astype(np.float32)
        p = quant.QuantParams(w_scales, w_bits=4, w_block=block)
        bias = rng.standard_normal(n) if m % 2 else None
        out.append(
            Case(
                "gemm_qd8_f32_qc4w",
                kernel,
                **operands(rng, "gemm_qd8_f32_qc4w", m, n, k),
                params=p,
                bias=bias,
                clamp=clamp,
                nk=m % 3 == 0,
                tiles=m == 17,
                exported=m == 9,
            )
        )
    return out


def small_sums_k(op: str) -> int:
    """The largest k for which the driver tells the kernels every sum lies in ±2^22 (ISF_EPILOGUE_SMALL_SUMS,
    isf_small_sums): 255 · 128 (8 for int4) · k < 2^22."""
    return (2**22 - 1) // (255 * (8 if int4(op) else 128))


def limit_cases(op: str, kernel: str, k: int = quant.MAX_K) -> list[Case]:
    """k = ISF_QUANT_MAX_K (or another k) with every product of row 0 at its largest magnitude, (a − zp) = ∓255
    against w = −128 (−8 for int4) in column 0 and 127 (7) in column 1: column 0 sums to ±(2^31 − 128) for int8 W at
    the largest k, which fp32 holds exactly, so a kernel whose int32 sums wrapped, or that lost one Kc block's partial
    sums, gives other bytes; at small_sums_k, to the ends of SMALL_SUMS' range. Row 1 is random."""
    rng = np.random.default_rng(7)
    lo, hi = (-8, 7) if int4(op) else (-128, 127)
    w_kn = rng.integers(lo, hi + 1, (k, 3), dtype=np.int8)
    w_kn[:, 0], w_kn[:, 1] = lo, hi
    out = []
    for zp, extreme, bias in ((127, -128, [127, -127, 5]), (-128, 127, [-127, 127, -5])):
        if dynamic(op):  # a constant row quantizes to −128 with zp 127 (negative) or 127 with zp −128 (positive)
            a = rng.standard_normal((2, k)).astype(np.float32)
            a[0] = np.float32(1.0 if extreme > 0 else -1.0)
        else:
            a = rng.integers(-128, 128, (2, k), dtype=np.int8)
            a[0] = extreme
        # power-of-two scales: gemm_qs8's column 1 lands on a .5 tie (−255 · 127 · k · 2^-25 = ∓63.5…)
        w_scales = np.array([2.0**-25, 2.0**-25, 2.0**-12], np.float32)
        p = quant.QuantParams(w_scales, a_scale=1.0, a_zero_point=zp, c_scale=1.0)
        q, row_zp = (quant.quantize_row(a[0])[2], quant.quantize_row(a[0])[1]) if dynamic(op) else (a[0], zp)
        assert quant.sums(q[None, :], w_kn[:, :1], np.array([row_zp]))[0, 0] == np.sign(extreme) * 255 * lo * k
        bias_values = np.array(bias, np.float32 if dynamic(op) else np.int32)
        out.append(Case(op, kernel, a=a, w_kn=w_kn, params=p, bias=bias_values, nk=zp < 0))
    return out


def run_cases(qemu_run: QemuRunner, tc: TargetCpu, tmp_path: Path, batch: list[Case]) -> list[tuple[int, int, bytes]]:
    jobs, results = tmp_path / "jobs.bin", tmp_path / "results.bin"
    batch_jobs = [c.job() for c in batch]
    quantjob.write_jobs(jobs, batch_jobs)
    result = qemu_run(tc.build, tc.cpu, PROGRAM, [str(jobs), str(results)])
    assert result.returncode == 0, result.describe()
    return [(out.status, out.guards_kept, out.c) for out in quantjob.read_results(results, batch_jobs)]


def not_the_reference(batch: list[Case], results: list[tuple[int, int, bytes]]) -> list[str]:
    """One line per case whose C is not the reference's bytes, or whose guards were written."""
    wrong = []
    for c, (status, guards, got) in zip(batch, results, strict=True):
        want = c.expected()
        if status != 0 or not guards or got != want.tobytes():
            diff = np.frombuffer(got, want.dtype).reshape(want.shape) != want if status == 0 else None
            where = np.argwhere(diff)[:3].tolist() if diff is not None else "-"
            wrong.append(f"{c.op} {c.kernel} {c.shape}: status {status}, guards {guards}, first wrong {where}")
    return wrong


def kernels(qemu_run: QemuRunner, tc: TargetCpu, op: str) -> list[str]:
    result = qemu_run(tc.build, tc.cpu, PROGRAM, ["list", str(load().ops[op].index)])
    assert result.returncode == 0, result.describe()
    return result.stdout.split()


@pytest.mark.cpus(["max"])
def test_every_kernel_gives_the_reference_bytes(target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path: Path) -> None:
    batch = []
    for op in OPS:
        names = kernels(qemu_run, target_cpu, op)
        assert names and names[-1].endswith("_ref"), names
        batch += [c for i, name in enumerate(names) for c in cases(op, name, seed=i)]
    wrong = not_the_reference(batch, run_cases(qemu_run, target_cpu, tmp_path, batch))
    assert not wrong, "\n".join(wrong[:20])


@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("vector_bytes", [16, 32, 64, 256])
def test_every_int32_kernel_stores_the_scalar_epilogue(
    target_cpu: TargetCpu, qemu_run: QemuRunner, vector_bytes: int
) -> None:
    """tests/kernels/test_epilogue.c: each gemm_s8 and gemm_s4 kernel called directly, every step combination, byte
    for byte; the SVE kernels at each vector length (AArch32 runs once)."""
    if target_cpu.build.arch_name != "aarch64" and vector_bytes != 16:
        pytest.skip("no SVE on AArch32: one run covers its kernels")
    cpu = f"max,sve-default-vector-length={vector_bytes}" if target_cpu.build.arch_name == "aarch64" else "max"
    result = qemu_run(target_cpu.build, cpu, "tests/kernels/test_epilogue")
    assert result.returncode == 0, result.describe()
    assert result.stdout.strip().splitlines()[-1] == "0 failed", result.stdout
    assert "gemm_s8_4x4_ref: epilogue checked" in result.stdout
    assert "gemm_s4_4x4_ref: epilogue checked" in result.stdout


@pytest.mark.cpus(["max"])
def test_every_kernel_sums_exactly_at_the_largest_k(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path: Path
) -> None:
    batch = []
    for op in OPS[:-1]:  # the quantized ops: gemm_s4 has no zero point to reach the limit with
        ks = [quant.MAX_K, small_sums_k(op)] if dynamic(op) else [quant.MAX_K]
        batch += [c for name in kernels(qemu_run, target_cpu, op) for k in ks for c in limit_cases(op, name, k)]
    wrong = []
    for c, (status, guards, got) in zip(batch, run_cases(qemu_run, target_cpu, tmp_path, batch), strict=True):
        want = c.expected()
        if status != 0 or not guards or got != want.tobytes():
            wrong.append(
                f"{c.op} {c.kernel} k {c.a.shape[1]} zp {c.params.a_zero_point}: status {status}, guards {guards}"
            )
    assert not wrong, "\n".join(wrong[:20])


def edge_cases(op: str, kernel: str) -> list[Case]:
    """The ends of the accepted parameters: s (gemm_qs8), d (gemm_qs8_f32) and w_scale (the dynamic ops) at FLT_MIN and
    FLT_MAX per channel, a row whose sums are 0 (0 · FLT_MAX = 0, not NaN), with and without bias and clamp. Every
    product stays normal (|acc · scale_i| ≥ 1 against FLT_MIN), so no step's result is subnormal (which AArch32's
    NEON flushes, as isaforge.h says). Then the least span quantized, and the fields the op ignores."""
    rng = np.random.default_rng(11)
    edges = np.array([2.0**-126, quant.FLT_MAX, 2.0**-100, 3.0, 2.0**100, 2.0**-126, 0.75, quant.FLT_MAX, 1.0])
    n, zp = edges.size, 5
    p = quant.QuantParams(edges.astype(np.float32), a_scale=1.0, a_zero_point=zp, c_scale=1.0, c_zero_point=-3)
    out = []
    for with_bias, clamp in ((False, None), (True, (-100, 90) if op == "gemm_qs8" else (-3.0, 2.5))):
        fields = operands(rng, op, 6, n, 40)
        if dynamic(op):
            fields["a"] = (fields["a"] * 1000).astype(np.float32)  # span ≥ 255: scale_i ≥ 1
        fields["a"][0] = 0 if dynamic(op) else zp  # acc = 0
        bias = (rng.standard_normal(n) if dynamic(op) else rng.integers(-9, 9, n)) if with_bias else None
        out.append(Case(op, kernel, **fields, params=p, bias=bias, clamp=clamp))
    if op == "gemm_qd8_f32_qc4w":  # two blocks of k: one FLT_MAX per column at most (Inf + -Inf would be NaN)
        blockwise = edges.astype(np.float32).reshape(-1, 1) * np.array([1, 0], np.float32) + np.float32(2.0**-126)
        pb = quant.QuantParams(blockwise.reshape(-1), w_bits=4, w_block=32)
        fields = operands(rng, op, 5, n, 40)
        fields["a"] = (fields["a"] * 1000).astype(np.float32)
        out.append(Case(op, kernel, **fields, params=pb, bias=rng.standard_normal(n)))
    return out + (span_cases(op, kernel, rng) if dynamic(op) else []) + unused_fields(op, kernel, rng)


def unused_fields(op: str, kernel: str, rng: np.random.Generator) -> list[Case]:
    """The fields an op does not read (isaforge.h) take any value, NaN and out-of-range zero points included."""
    if op == "gemm_qs8":
        return []
    nan = float("nan")
    fields = {"c_scale": nan, "c_zero_point": -300}
    if dynamic(op):
        fields |= {"a_scale": 0.0, "a_zero_point": 1000}
    p = quant.QuantParams(rng.uniform(1e-3, 2e-2, 1).astype(np.float32), **fields)
    return [Case(op, kernel, **operands(rng, op, 3, 10, 50), params=p)]


def span_cases(op: str, kernel: str, rng: np.random.Generator) -> list[Case]:
    """Rows at the least span quantized, 255 · FLT_MIN (scale_i = FLT_MIN), and below it: one ulp below, below
    255 / FLT_MAX (where 255 / span overflowed), and subnormal values: zero rows, C = bias (or 0) on every kernel.
    W's scales at least 1 keep (acc · FLT_MIN) · w_scale normal; without bias, C shows those tiny values."""
    k, n, least = 40, 11, np.float32(255 * 2.0**-126)
    a = np.zeros((5, k), np.float32)
    a[0] = rng.uniform(0, 1, k).astype(np.float32) * least
    a[0, :2] = 0, least
    a[1] = rng.uniform(0, 1, k).astype(np.float32) * least
    a[1, :2] = 0, np.nextafter(least, np.float32(0))
    a[2] = rng.uniform(-1e-38, 1e-38, k).astype(np.float32)
    a[3] = rng.integers(-50, 50, k) * np.float32(2.0**-149)
    a[4] = rng.standard_normal(k).astype(np.float32)
    w_kn = operands(rng, op, 1, n, k)["w_kn"]
    p = quant.QuantParams(rng.uniform(1, 4, n).astype(np.float32))
    bias = rng.standard_normal(n)
    return [Case(op, kernel, a=a, w_kn=w_kn, params=p, bias=bias if nk else None, nk=nk) for nk in (False, True)]


@pytest.mark.cpus(["max"])
def test_every_kernel_agrees_at_the_edges_of_the_accepted_range(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path: Path
) -> None:
    batch = []
    for op in OPS[:-1]:
        batch += [c for name in kernels(qemu_run, target_cpu, op) for c in edge_cases(op, name)]
    wrong = not_the_reference(batch, run_cases(qemu_run, target_cpu, tmp_path, batch))
    assert not wrong, "\n".join(wrong[:20])


def bad(op: str, **change) -> Case:
    rng = np.random.default_rng(1)
    p = quant.QuantParams(np.array([0.01], np.float32), a_scale=0.1, a_zero_point=0, c_scale=0.2)
    fields = {"params": p, **operands(rng, op, 2, 5, 7)}
    fields.update(change)
    return Case(op, "", **fields)


@pytest.mark.cpus(["max"])
def test_bad_parameters_are_refused_and_c_untouched(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path: Path
) -> None:
    def params(**kw) -> quant.QuantParams:
        base = {"w_scales": np.array([0.01], np.float32), "a_scale": 0.1, "c_scale": 0.2}
        return quant.QuantParams(**{**base, **kw})

    rng = np.random.default_rng(2)
    big_k = quant.MAX_K + 1
    batch = [
        bad("gemm_qs8", params=params(a_scale=0.0)),
        bad("gemm_qs8", params=params(a_scale=-1.0)),
        bad("gemm_qs8", params=params(a_scale=float("nan"))),
        bad("gemm_qs8", params=params(c_scale=float("inf"))),
        bad("gemm_qs8_f32", params=params(w_scales=np.array([0.01, 0.0, 0.01, 0.01, 0.01], np.float32))),
        bad("gemm_qd8_f32", params=params(w_scales=np.array([0.01, 0.02], np.float32))),  # neither 1 nor n
        bad("gemm_qs8", params=params(a_zero_point=128)),
        bad("gemm_qs8_f32", params=params(a_zero_point=-129)),
        bad("gemm_qs8", params=params(c_zero_point=200)),
        bad("gemm_qs8", clamp=(-10.5, 20)),  # int8 bounds must be whole numbers
        bad("gemm_qs8", clamp=(-129, 20)),
        bad("gemm_qs8", bias=np.array([2**31 - 1, 0, 0, 0, 0], np.int32)),  # acc + bias could leave int32
        bad(
            "gemm_qs8",
            a=rng.integers(-128, 128, (1, big_k), dtype=np.int8),
            w_kn=rng.integers(-128, 128, (big_k, 1), dtype=np.int8),
        ),
    ]
    blocks = quant.QuantParams(np.full(5 * 2, 0.01, np.float32), w_bits=4, w_block=32)  # 2 blocks of k = 40
    batch += [
        bad("gemm_qd8_f32", params=params(w_bits=4)),  # int4 weights for an int8 op
        bad("gemm_qd8_f32_qc4w", params=params(w_bits=8)),
        bad("gemm_qd8_f32", params=params(w_block=32)),  # blocks for an int8 op
        bad("gemm_qd8_f32_qc4w", params=params(w_block=48)),  # not a multiple of 32
        bad("gemm_qd8_f32_qc4w", params=params(w_block=quant.MAX_BLOCK + 32)),
        bad("gemm_qd8_f32_qc4w", params=blocks, **operands(rng, "gemm_qd8_f32_qc4w", 2, 5, 70)),  # 3 blocks, not 2
        bad(
            "gemm_qd8_f32_qc4w",
            params=params(w_scales=np.full(5, 0.01, np.float32), w_block=32),
            **operands(rng, "gemm_qd8_f32_qc4w", 2, 5, 70),
        ),
        bad(
            "gemm_qd8_f32_qc4w",
            params=params(w_scales=np.array([0.01, -1.0] * 5, np.float32), w_block=32),
            **operands(rng, "gemm_qd8_f32_qc4w", 2, 5, 40),
        ),
        bad(  # n · ceil(0 / w_block) = 0 scales: k = 0 is one block, n scales
            "gemm_qd8_f32_qc4w",
            params=params(w_scales=np.zeros(0, np.float32), w_block=32),
            **operands(rng, "gemm_qd8_f32_qc4w", 2, 5, 0),
        ),
    ]
    batch += scales_that_are_not_normal(params, rng)
    results = run_cases(qemu_run, target_cpu, tmp_path, batch)
    wrong = [
        f"{c.op} {c.params} {c.clamp} {c.shape}: status {status}, guards {guards}"
        for c, (status, guards, _) in zip(batch, results, strict=True)
        if status != INVALID_ARG or not guards
    ]
    assert not wrong, "\n".join(wrong)


def scales_that_are_not_normal(params: Callable[..., quant.QuantParams], rng: np.random.Generator) -> list[Case]:
    """Scales, given or derived, that are not finite normal floats: s = +Inf with acc + bias = 0 (0 · Inf = NaN, which
    the AArch32 dotprod, i8mm and NEON kernels rounded to 127 and the others to c_zero_point), s and d below FLT_MIN
    or infinite, and subnormal inputs whose products are normal (AArch32's NEON read w_scale ≈ 2^-135 as 0); a
    subnormal fp32 bias or clamp bound likewise. isaforge.quant refuses the same parameters."""
    huge, sub = 2.0**100, np.float32(2.0**-135)
    zero_sums = {"a": np.zeros((2, 7), np.int8), "bias": np.zeros(5, np.int32)}  # a_zero_point 0: acc + bias = 0
    batch = [
        bad("gemm_qs8", params=params(a_scale=huge, w_scales=np.array([huge], np.float32)), **zero_sums),
        bad("gemm_qs8", params=params(a_scale=2.0**64, w_scales=np.array([2.0**64], np.float32), c_scale=0.5)),
        bad("gemm_qs8", params=params(a_scale=2.0**-100, w_scales=np.array([2.0**-30], np.float32), c_scale=1.0)),
        bad("gemm_qs8", params=params(a_scale=2.0**-100, w_scales=np.array([2.0**-60], np.float32), c_scale=1.0)),
        bad("gemm_qs8", params=params(a_scale=2.0**20, w_scales=np.array([sub], np.float32), c_scale=1.0)),
        bad("gemm_qs8", params=params(a_scale=sub, w_scales=np.array([2.0**20], np.float32), c_scale=1.0)),
        bad("gemm_qs8", params=params(c_scale=np.float32(2.0**-140))),
        bad("gemm_qs8_f32", params=params(a_scale=huge, w_scales=np.array([huge], np.float32)), **zero_sums),
        bad("gemm_qs8_f32", params=params(a_scale=2.0**-100, w_scales=np.array([2.0**-30], np.float32))),
        bad("gemm_qs8_f32", params=params(a_scale=2.0**20, w_scales=np.array([sub], np.float32))),
        bad("gemm_qd8_f32", params=params(w_scales=np.array([sub], np.float32))),
        bad("gemm_qd8_f32", bias=np.array([0.5, -(2.0**-130), 0, 0, 0], np.float32)),
        bad("gemm_qs8_f32", clamp=(-(2.0**-127), 1.0)),
        bad("gemm_qd8_f32_qc4w", clamp=(-1.0, 2.0**-149)),
        bad("gemm_qd8_f32_qc4w", params=params(w_scales=np.array([sub], np.float32))),
        bad(
            "gemm_qd8_f32_qc4w",
            params=params(w_scales=np.array([0.01, sub] * 5, np.float32), w_block=32),
            **operands(rng, "gemm_qd8_f32_qc4w", 2, 5, 40),
        ),
    ]
    for c in batch:
        with pytest.raises(ValueError, match="isf_gemm_create refuses"):
            c.expected()
    return batch
