"""The quantized plans under QEMU: gemm_qs8, gemm_qs8_f32, gemm_qd8_f32 (gemm_s8's kernels with a
quantized epilogue), gemm_s4 and gemm_qd8_f32_qc4w (int4 weights), each run through a plan by the tests' own
quant_runner (tests/kernels/quant_runner.c, jobs in isaforge.quantjob's format) linked statically with the build's
libisaforge.a (as gemm_runner is for the plain ops), so the log is cut at isf_gemm_run's entry and
isf_gemm_destroy's: packing at create is left out.

Every run's C is checked: the static ops' int8 and fp32 bytes and gemm_qd8_f32's fp32 bytes against isaforge.quant
(bit for bit, as the tests hold them), int32 C exactly. Three figure sets come from here:

- per op and kernel, a plan run at 256×256×64 (instructions per MAC against the kernel's hot loop);
- requantization overhead: a gemm_qs8 plan over a gemm_s8 plan of the same kernel, operands and int32 bias,
  256×256×64 (goal ≤ 3 % more guest instructions);
- decoding, m = 1, n = k = 4096 on Neoverse V1 (QEMU's neoverse-v1, the kernel dispatch picks there): the int4 path
  (gemm_qd8_f32_qc4w, per-channel scales) against the int8 path (gemm_qd8_f32): bytes of the packed weights the
  micro-kernels load (goal ≤ 0.55×) and whole-run modeled cycles (wholecall: every executed block priced by
  llvm-mca, goal ≤ 0.75×).

Which loads read the weights: every load of the micro-kernels and the helpers they call is labelled by where its
address comes from (bench/measure/mca/provenance.py: the kernel ABI's x2 is the packed weights, followed through the
code), and a run adds each executed load's bytes to its label. At m = 1 each weight is read once, so the weight
bytes must be the packed weights' own (n_padded · k_padded · bits / 8): the check of the labels.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from isaforge import process, qemu, quant, quantjob
from isaforge.bench.measure.loadbytes import load_bytes
from isaforge.bench.measure.mca import provenance
from isaforge.bench.measure.qemu_count import PLAN, RunCount, StaticRunner, tile_size
from isaforge.bench.measure.qemu_log import ExecLog, parse_log
from isaforge.bench.measure.wholecall import Decoder, Pricer, core_model, model_call, profile_of
from isaforge.bench.scenarios.gemms import select
from isaforge.bench.scenarios.shapes import Shape
from isaforge.builds import Build
from isaforge.catalogue import KernelName, load, parse_kernel_name
from isaforge.errors import IsaforgeError

PROGRAM = "quant_runner"
OVERHEAD_GOAL = 0.03
OVERHEAD_SHAPE = Shape(256, 256, 64)
DECODE_SHAPE = Shape(1, 4096, 4096)
DECODE_CORE = "neoverse-v1"
BYTES_GOAL, CYCLES_GOAL = 0.55, 0.75
INT8_PATH, INT4_PATH = "gemm_qd8_f32", "gemm_qd8_f32_qc4w"
BASELINE = "gemm_s8"  # the int32 output the requantization is measured against
REQUANTIZED = "gemm_qs8"


def quantized_ops() -> list[str]:
    """The ops that run through plans only (the quantized ops and gemm_s4), in catalogue order."""
    return [name for name, op in load().ops.items() if not op.plain]


def kernel_op(op: str) -> str:
    """Whose kernels `op` runs (gemm_qs8 → gemm_s8); an op with kernels of its own names itself."""
    return load().ops[op].kernels_of or op


def prepare(build: Build, directory: Path, workdir: Path, sve_bits: int) -> StaticRunner:
    """The tests' quant_runner, linked statically, with its code range and disassembly."""
    return StaticRunner.prepare(build, directory, workdir, sve_bits, PROGRAM)


# -- operands, job, oracle ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Problem:
    op: str
    a: np.ndarray  # [m][k]: int8, or fp32 for the dynamic ops
    w_kn: np.ndarray  # [k][n] int8 (−8…7 for int4 weights; the job packs them two per byte, quant.pack_int4)
    params: quant.QuantParams | None
    bias: np.ndarray | None  # int32, or fp32 for the dynamic ops
    clamp: tuple[float, float] | None = None  # the float ops' ISF_GEMM_CLAMP bounds (gemm_qs8 clamps to int8 anyway)


def problem(op: str, shape: Shape, seed: int = 1) -> Problem:
    """Random operands in each op's ranges; requantization scales that spread C over int8 and reach the clamp."""
    rng = np.random.default_rng(seed)
    spec = load().ops[op]
    m, n, k = shape.m, shape.n, shape.k
    dynamic = spec.a.kind == "float"
    a = (rng.standard_normal((m, k)) * 3).astype(np.float32) if dynamic else rng.integers(-128, 128, (m, k), np.int8)
    lo, hi = (-8, 8) if spec.b.element_bits == 4 else (-127, 128)
    w = rng.integers(lo, hi, (k, n), np.int8)
    if op in (BASELINE, "gemm_s4"):
        return Problem(op, a, w, None, rng.integers(-50000, 50000, n, np.int32))
    w_scales = rng.uniform(0.5e-2, 1.5e-2, n).astype(np.float32)
    a_scale = 0.05
    # acc's spread is about 74² √k (uniform int8 operands): map that to about ±60 in C's units
    c_scale = float(np.float32(a_scale * 1e-2 * 74.0**2 * np.sqrt(max(k, 1)) / 60.0))
    params = quant.QuantParams(w_scales, a_scale, -3, c_scale, 5)
    bias = rng.standard_normal(n).astype(np.float32) if dynamic else rng.integers(-50000, 50000, n, np.int32)
    return Problem(op, a, w, params, bias)


def biting_clamp(c: np.ndarray, share: float = 0.05) -> tuple[float, float]:
    """Clamp bounds (fp32) at the `share` and 1 − `share` quantiles of an unclamped C, so about that share of C
    lands on each bound and a call that skipped the clamp (or applied it before the bias) is wrong."""
    lo, hi = (float(np.float32(x)) for x in np.quantile(np.asarray(c, np.float64), [share, 1 - share]))
    return lo, hi


def clamped(p: Problem, share: float = 0.05) -> Problem:
    """`p` with a clamp that bites (biting_clamp of its unclamped C)."""
    return dataclasses.replace(p, clamp=biting_clamp(expected(dataclasses.replace(p, clamp=None)), share))


def baseline_of(p: Problem) -> Problem:
    """The same A, W and int32 bias as a gemm_s8 plan: int32 C, nothing requantized."""
    assert p.bias is not None and p.a.dtype == np.int8
    return Problem(BASELINE, p.a, p.w_kn, None, p.bias.astype(np.int32))


def job(p: Problem, kernel: str) -> quantjob.QuantJob:
    """`p` as a job of the tests' quant_runner, run through isf_gemm_run."""
    return quantjob.QuantJob(p.op, kernel, p.a, p.w_kn, p.params or quantjob.NO_QUANT, p.bias, p.clamp)


def expected(p: Problem) -> np.ndarray:
    """C as isaforge.h's formulas give it: exact int32 sums plus bias, or isaforge.quant's bytes."""
    if p.params is None:
        acc = p.a.astype(np.int64) @ p.w_kn.astype(np.int64) + (p.bias if p.bias is not None else 0)
        return ((acc + 2**31) % 2**32 - 2**31).astype(np.int32)
    reference = quant.REFERENCE[p.op]
    clamp = (-128, 127) if p.op == REQUANTIZED else p.clamp
    return np.asarray(reference(p.a, p.w_kn, p.params, p.bias, clamp))  # type: ignore[arg-type]


def compare(p: Problem, got: bytes) -> str:
    """'' when C's bytes are the reference's, else where the first difference is."""
    want = expected(p)
    if got == want.tobytes():
        return ""
    if len(got) != want.nbytes:
        return f"C has {len(got)} bytes, expected {want.nbytes}"
    mine = np.frombuffer(got, want.dtype).reshape(want.shape)
    bits = f"u{want.dtype.itemsize}"
    bad = np.argwhere(mine.view(bits) != want.view(bits))
    i, j = (int(x) for x in bad[0])
    return f"{len(bad)} elements differ from isaforge.quant's, first C[{i}][{j}] = {mine[i, j]}, expected {want[i, j]}"


# -- one run ------------------------------------------------------------------------------------------------------
@dataclass
class QuantRun:
    """One plan run counted: the RunCount (op relabelled to the plan's op) and what this section adds."""

    count: RunCount
    cpu: str
    kernel_load_bytes: int = 0  # bytes the executed loads of the micro-kernels (and the helpers they call) read
    load_bytes: int = 0  # bytes every executed load inside libisaforge read
    weight_bytes: int = 0  # of kernel_load_bytes, those read through the packed weights' pointer
    weights_once: int = 0  # the packed weights' own bytes: what reading each weight once loads
    kernel_loads_by_source: dict[str, int] = dataclasses.field(default_factory=dict)  # kernel_load_bytes per label
    unknown_loads: int = 0  # executions of kernel loads provenance could not label
    unknown_sites: list[str] = dataclasses.field(default_factory=list)  # those loads: "function+0xoff: text"
    cycles: float = 0.0  # whole-run modeled cycles (decode runs only)
    core: str = ""
    undecoded: int = 0

    def as_dict(self) -> dict[str, object]:
        return {**self.count.as_dict(), **{k: v for k, v in self.__dict__.items() if k != "count"}}


def run(
    runner: StaticRunner, p: Problem, kernel: str, shape: Shape, workdir: Path, cpu: str, price_on: str = ""
) -> QuantRun:
    """`p` through a plan with `kernel` ("" dispatch's choice) under QEMU `cpu`; priced on core `price_on` if any."""
    cat = load()
    stem = f"{p.op}-{kernel or 'auto'}-{shape.label}-{cpu.split(',', maxsplit=1)[0]}"
    job_path, out, log_path = (workdir / f"{stem}.{ext}" for ext in ("job", "out", "log"))
    the_job = job(p, kernel)
    quantjob.write_jobs(job_path, [the_job])
    cmd = runner.logged_command(cpu, [str(job_path), str(out)], log_path)
    result = process.run(cmd, what=f"quant_runner {p.op} {kernel or '(dispatch)'} at {shape.label}",
                         timeout=qemu.DEFAULT_TIMEOUT)  # fmt: skip
    (got,) = quantjob.read_results(out, [the_job], result.stdout)
    chosen, status = got.kernel, got.status
    if kernel and chosen != kernel:
        raise IsaforgeError(f"quant_runner ran {chosen}, not {kernel}")
    name = parse_kernel_name(chosen, cat.ops)
    if status != 0:
        for path in (job_path, out, log_path):
            path.unlink(missing_ok=True)
        rc = runner.tally(name, shape, parse_log([]), PLAN, status, by_name=bool(kernel))
        rc.op = p.op
        return QuantRun(rc, cpu)
    log = runner.read_log(log_path, PLAN)
    rc = runner.tally(name, shape, log, PLAN, by_name=bool(kernel))
    rc.op = p.op
    rc.wrong = compare(p, got.c) or ("" if got.guards_kept else "wrote outside C's rows")
    qr = QuantRun(rc, cpu, weights_once=packed_weight_bytes(name, p, runner.sve_bits))
    count_loads(runner, log, qr)
    if price_on:
        modeled = model_call(profile_of(log.runs, log.encodings), Pricer(core_model(price_on), Decoder()))
        qr.cycles, qr.core, qr.undecoded = modeled.cycles, price_on, modeled.undecoded
    for path in (job_path, out, log_path):
        path.unlink()
    return qr


def packed_weight_bytes(kernel: KernelName, p: Problem, sve_bits: int) -> int:
    """The bytes of `p`'s weights packed for `kernel`: n rounded up to NR (at the vector length for SVE kernels) ×
    k rounded up to KR, at the op's bits per weight (`sve_bits`: the streaming length for SME kernels)."""
    k, n = p.w_kn.shape
    nr = tile_size(kernel, sve_bits)[1]
    padded = -(-n // nr) * nr * (-(-k // kernel.kr) * kernel.kr)
    return padded * load().ops[p.op].b.element_bits // 8


def count_loads(runner: StaticRunner, log: ExecLog, qr: QuantRun) -> None:
    """Bytes of every executed load into qr, the micro-kernels' per provenance label; unlabelled ones named."""
    by_source: Counter[str] = Counter()
    unknown: Counter[str] = Counter()
    for addr, n in log.executions.items():
        size = n * load_bytes(runner.insns[addr], runner.sve_bits)
        qr.load_bytes += size
        source = runner.load_sources.get(addr)
        if source is None:  # not a load of a micro-kernel or of a helper it calls
            continue
        by_source[source] += size
        if source == provenance.UNKNOWN:
            start, name = next((s, f) for s, e, f in runner.code.functions if s <= addr < e)
            unknown[f"{name}+0x{addr - start:x}: {runner.insns[addr].text}"] += n
    qr.kernel_load_bytes = sum(by_source.values())
    qr.kernel_loads_by_source = dict(by_source.most_common())
    qr.weight_bytes = by_source[provenance.B]
    qr.unknown_loads = sum(unknown.values())
    qr.unknown_sites = sorted(unknown)


# -- the three figure sets ----------------------------------------------------------------------------------------
@dataclass
class QuantResult:
    compiler: str
    sve_bits: int
    runs: list[QuantRun] = dataclasses.field(default_factory=list)  # per op and kernel at OVERHEAD_SHAPE
    baseline: list[QuantRun] = dataclasses.field(default_factory=list)  # gemm_s8 plans of the same kernels
    decode: dict[str, QuantRun] = dataclasses.field(default_factory=dict)  # INT8_PATH / INT4_PATH on DECODE_CORE
    decode_missing: dict[str, str] = dataclasses.field(default_factory=dict)  # path → why it did not run


def plan_kernels(runner: StaticRunner, op: str, variants: Sequence[str] | None) -> list[KernelName]:
    """The kernel each variant's plan of `op` would run (the variant's most preferred of its kernel op)."""
    return select(runner.kernels(), [kernel_op(op)], variants)


def _decode_runs(runner: StaticRunner, result: QuantResult) -> list[tuple[str, Problem, str, Shape, str, str]]:
    """The two decoding runs on Neoverse V1, or why one cannot run (result.decode_missing)."""
    v1 = core_model(DECODE_CORE)
    todo = []
    for path in (INT8_PATH, INT4_PATH):
        if path not in load().ops:
            result.decode_missing[path] = "not in this build's catalogue"
        elif not [k for k in runner.kernels() if k.op == kernel_op(path) and k.variant != "ref"]:
            result.decode_missing[path] = f"this build has no {kernel_op(path)} kernel but the reference"
        else:
            todo.append((path, problem(path, DECODE_SHAPE), "", DECODE_SHAPE, v1.qemu_cpu, v1.mcpu))
    return todo


def collect(
    build: Build,
    directory: Path,
    ops: Sequence[str],
    variants: Sequence[str] | None,
    workdir: Path,
    sve_bits: int = 128,
    decode: bool = True,
    jobs: int = 2,
    progress: Callable[[int, int, str], None] | None = None,
) -> QuantResult:
    compiler = build.toolchain.compiler.name if build.toolchain else ""
    runner = prepare(build, directory, workdir, sve_bits)
    cpu = f"max,sve-default-vector-length={sve_bits // 8}"
    result = QuantResult(compiler, sve_bits)
    todo: list[tuple[str, Problem, str, Shape, str, str]] = []  # (slot, problem, kernel, shape, cpu, price_on)
    for op in ops:
        p = problem(op, OVERHEAD_SHAPE)
        for kernel in plan_kernels(runner, op, variants):
            todo.append(("runs", p, kernel.name, OVERHEAD_SHAPE, cpu, ""))
            if op == REQUANTIZED:
                todo.append(("baseline", baseline_of(p), kernel.name, OVERHEAD_SHAPE, cpu, ""))
    v1 = core_model(DECODE_CORE)
    v1_runner = dataclasses.replace(runner, sve_bits=v1.sve_bits)
    if decode:
        todo += _decode_runs(runner, result)

    def one(item: tuple[str, Problem, str, Shape, str, str]) -> tuple[str, QuantRun]:
        slot, p, kernel, shape, on, price = item
        return slot, run(v1_runner if price else runner, p, kernel, shape, workdir, on, price)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for n, (slot, qr) in enumerate(pool.map(one, todo), 1):
            if slot == "runs":
                result.runs.append(qr)
            elif slot == "baseline":
                result.baseline.append(qr)
            else:
                result.decode[slot] = qr
            if progress:
                progress(n, len(todo), f"{qr.count.op} {qr.count.kernel} {qr.count.shape}")
    return result
