"""The SME bench: llvm-mca has no model of streaming SVE or ZA, so what is measured is what QEMU can count honestly.

For every streaming kernel the build has, one plan run per shape (isf_gemm_run alone, the weights packed at create,
counted as the Plans section's runs are: bench.measure.qemu_count) under the SME QEMU's `max` at each streaming
vector length (SVL), FA64 off, the kernel forced by the run's feature mask; and the same shape on the best non-SME
kernel of the op that `max` runs (the catalogue's preference among the built, non-streaming, non-reference kernels),
under the ordinary QEMU. Per row: executed instructions per MAC of the whole run and of the hot loop, and the share
of the outer products (fmopa, smopa, … executed ÷ all executed).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from pathlib import Path

from isaforge.bench.measure.mca import macs
from isaforge.bench.measure.qemu_count import DEFAULT_SVE_BITS, PLAN, RunCount, StaticRunner, tile_size
from isaforge.bench.scenarios import gemms, qplans
from isaforge.bench.scenarios.shapes import Shape
from isaforge.builds import Build
from isaforge.catalogue import REFERENCE, KernelName, load
from isaforge.coverage import SVL_SWEEP, sme_model
from isaforge.errors import IsaforgeError

DEFAULT_SHAPES = "256x256x256,1x1024x1024"
DEFAULT_QUANTIZED = ("gemm_qd8_f32", "gemm_qd8_f32_qc4w")  # the quantized ops issue 32 set goals for
DEFAULT_SVL = "16,32,64"  # bytes
VALID_SVL = SVL_SWEEP  # the SME kernel tests' sweep
STREAMING = "streaming"
BASELINE_CPU = "max"


@dataclass
class StreamingRunner(StaticRunner):
    """A StaticRunner under the SME QEMU; its `sve_bits` is the streaming vector length, which is what a streaming
    kernel's Z registers (so its MACs and NR) follow. The SVE length outside streaming mode is held at 128 bits, as
    the baseline's, so that only the SVL changes from one row to the next."""

    @property
    def cpu(self) -> str:
        svl = self.sve_bits // 8
        return sme_model(svl, vl=16)

    @classmethod
    def at(cls, base: StaticRunner, svl_bytes: int) -> StreamingRunner:
        """`base`'s executable and disassembly, run at `svl_bytes` (one static link serves every SVL)."""
        kept = {f.name: getattr(base, f.name) for f in fields(StaticRunner) if f.init}
        return cls(**(kept | {"sve_bits": svl_bytes * 8}))


@dataclass
class SmeRow:
    run: RunCount  # the streaming kernel's plan run
    svl: int  # bytes
    nr: int  # the kernel's NR at that SVL
    baseline: RunCount | None  # the best non-SME kernel's plan run at the same shape on `max`

    @property
    def outer_product_share(self) -> float:
        outer = sum(n for m, n in self.run.mac_mnemonics.items() if m in macs.OUTER_PRODUCTS)
        return outer / self.run.instructions if self.run.instructions else 0.0

    def as_dict(self) -> dict[str, object]:
        rc = self.run
        return {
            "op": rc.op, "kernel": rc.kernel, "shape": rc.shape, "svl": self.svl, "nr": self.nr,
            "instructions": rc.instructions, "instructions_per_mac": round(rc.instructions_per_mac, 6),
            "hot_loop_instructions_per_mac": round(rc.hot_loop_instructions_per_mac, 6),
            "outer_product_share": round(self.outer_product_share, 6), "macs_executed": rc.macs_executed,
            "padded_macs": rc.padded_macs, "mac_check_ok": rc.mac_check_ok, "wrong": rc.wrong,
            "baseline_kernel": self.baseline.kernel if self.baseline else "",
            "baseline_instructions_per_mac": round(self.baseline.instructions_per_mac, 6) if self.baseline else None,
            "baseline_hot_loop_instructions_per_mac":
                round(self.baseline.hot_loop_instructions_per_mac, 6) if self.baseline else None,
        }  # fmt: skip


def parse_svl(text: str) -> list[int]:
    try:
        svl = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        svl = []
    if not svl or any(s not in VALID_SVL for s in svl):
        raise IsaforgeError(f"--svl {text}: bytes, comma-separated, from {', '.join(map(str, VALID_SVL))}")
    return svl


def streaming_kernels(
    kernels: Sequence[KernelName], ops: Sequence[str] | None, variants: Sequence[str] | None = None
) -> list[KernelName]:
    """The built kernels of streaming variants (the most preferred per op and variant), of the chosen ops and
    variants (none chosen: all)."""
    return gemms.most_preferred(kernels, ops, variants, lambda k: load().variant(k.variant).scalable == STREAMING)


def baseline_kernel(kernels: Sequence[KernelName], op: str, arch: str) -> KernelName | None:
    """The kernel dispatch would prefer for `op` on `max` with every streaming variant capped away: the catalogue's
    most preferred built kernel whose variant's features `max` has, the reference set aside."""
    cat = load()
    have = set(cat.cpu_features(arch, BASELINE_CPU))
    runnable = [
        k
        for k in kernels
        if k.op == op
        and k.variant != REFERENCE
        and cat.variant(k.variant).scalable != STREAMING
        and cat.variant_features(arch, k.variant) <= have
    ]
    return max(runnable, key=cat.preference, default=None)


@dataclass(frozen=True)
class _Run:
    """One plan run to count: `kernel` serving `op` (a quantized op runs its kernel op's kernels) at `shape`."""

    runner: StaticRunner
    op: str
    kernel: KernelName
    shape: Shape

    @property
    def svl(self) -> int:
        return self.runner.sve_bits // 8 if isinstance(self.runner, StreamingRunner) else 0

    def count(self, work: Path) -> RunCount:
        # A folder per vector length: a run's files are named by kernel and shape alone.
        folder = work / f"vl{self.runner.sve_bits}-{type(self.runner).__name__}"
        folder.mkdir(exist_ok=True)
        if self.op == self.kernel.op:
            return self.runner.run(self.kernel, self.shape, folder, PLAN)
        problem = qplans.problem(self.op, self.shape)  # the runner's CPU: its SVE length is the one counted at
        return qplans.run(self.runner, problem, self.kernel.name, self.shape, folder, self.runner.cpu).count


def _runs(base: StaticRunner, ops: Sequence[str], variants: Sequence[str] | None, shapes: Sequence[Shape],
          svls: Sequence[int]) -> tuple[list[_Run], dict[str, KernelName | None]]:  # fmt: skip
    """The runs of `ops` on `base`'s program (every op of it runs the same kernels): each op's streaming kernel per
    shape and SVL, then each op's baseline per shape; and each op's baseline kernel."""
    built = base.kernels()
    runs, baselines = [], {}
    for op in ops:
        for k in streaming_kernels(built, [qplans.kernel_op(op)], variants):
            baselines[op] = baseline_kernel(built, k.op, base.build.arch.name)
            runs += [_Run(StreamingRunner.at(base, svl), op, k, s) for s in shapes for svl in svls]
    runs += [_Run(base, op, b, s) for op, b in baselines.items() if b for s in shapes]
    return runs, baselines


def collect(
    build: Build,
    directory: Path,
    ops: Sequence[str] | None,
    variants: Sequence[str] | None,
    shapes: Sequence[Shape],
    svls: Sequence[int],
    jobs: int = 2,
    progress: Callable[[int, int, str], None] | None = None,
) -> list[SmeRow]:
    """One plan run per streaming kernel, shape and SVL, and one per shape on the op's best non-SME kernel; the
    plain ops through gemm_runner, the quantized ones (by default those with goals) through quant_runner."""
    cat = load()
    chosen = list(ops) if ops else [*cat.plain_ops(), *DEFAULT_QUANTIZED]
    plain = [op for op in chosen if cat.ops[op].plain]
    quantized = [op for op in chosen if not cat.ops[op].plain]
    with tempfile.TemporaryDirectory(prefix="isaforge-smebench-") as tmp:
        work = Path(tmp)
        runs, baselines = _runs(StaticRunner.prepare(build, directory, work, DEFAULT_SVE_BITS), plain, variants,
                                shapes, svls)  # fmt: skip
        if quantized:
            more, more_baselines = _runs(qplans.prepare(build, directory, work, DEFAULT_SVE_BITS), quantized,
                                         variants, shapes, svls)  # fmt: skip
            runs, baselines = runs + more, baselines | more_baselines
        counts: dict[tuple[str, str, str, int], RunCount] = {}
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for n, (run, rc) in enumerate(zip(runs, pool.map(lambda r: r.count(work), runs), strict=True), 1):
                counts[(run.op, rc.kernel, rc.shape, run.svl)] = rc
                if progress:
                    progress(n, len(runs), f"{run.op} {rc.kernel} {rc.shape}{f' SVL {run.svl}' if run.svl else ''}")
    rows = []
    for run in runs:
        if run.svl:
            b = baselines[run.op]
            baseline = counts[(run.op, b.name, run.shape.label, 0)] if b else None
            rc = counts[(run.op, run.kernel.name, run.shape.label, run.svl)]
            rows.append(SmeRow(rc, run.svl, tile_size(run.kernel, run.svl * 8)[1], baseline))
    return rows
