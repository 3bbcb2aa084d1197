"""Every micro-kernel of a build on every modeled core: its hot loop through llvm-mca, against the peak of its MAC
kind on that core (measured once per core, MAC kind and features)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from isaforge.bench import require
from isaforge.bench.measure.mca.cores import ARCH, CLANG, CORES, SVE_BITS, core_features, mattr_for
from isaforge.bench.measure.mca.llvm_mca import LLVM_MCA, McaResult, resource_of, run_mca
from isaforge.bench.measure.mca.macs import (
    ACCUMULATE_ONLY,
    PRODUCT_ONLY,
    Stream,
    base_mnemonic,
    hot_loop,
    kernel_kind,
    mac_kind,
    macs_of,
    reference_stream,
)
from isaforge.bench.measure.mca.objcode import KERNEL_PREFIX, Insn, Loop, disassemble, mca_source, split_operands
from isaforge.catalogue import REFERENCE, load, parse_kernel_name
from isaforge.errors import IsaforgeError

GOAL_PERCENT = 95.0
# A kernel's status on one core. NO_MACS: an elementwise hot loop, priced in cycles per iteration without a peak;
# NO_PEAK: no reference stream of its MAC kind could be built, so only its cycles per iteration are known.
OK, NO_ISA, NO_HOT_LOOP, NO_MACS, NO_PEAK = "ok", "no ISA", "no hot loop", "no MACs", "no peak"


@dataclass(frozen=True)
class Peak:
    core: str
    kind: str
    stream: str  # what the stream is, in words
    mac_instructions: int  # per iteration of the stream
    instructions: int
    macs: int  # per iteration, at the core's vector length
    cycles: float  # per iteration
    mattr: str

    @property
    def issue_rate(self) -> float:
        """MAC instructions per cycle."""
        return self.mac_instructions / self.cycles

    @property
    def macs_per_cycle(self) -> float:
        return self.macs / self.cycles


def peak_from(stream: Stream, core: str, mattr: str, result: McaResult) -> Peak:
    """The peak llvm-mca's run of `stream` on `core` shows."""
    return Peak(
        core,
        stream.kind,
        stream.description,
        stream.mac_instructions,
        len(stream.insns),
        stream.macs(SVE_BITS[core]),
        result.cycles_per_iteration,
        mattr,
    )


def measure_peak(stream: Stream, core: str, mattr: str) -> Peak:
    result = run_mca(stream.source(), core, mattr)
    return peak_from(stream, core, mattr, result)


class NamedKernel(Protocol):
    """A kernel as the bench names it: libisaforge's (catalogue.KernelName) or an engine's (coverage.Kernel)."""

    @property
    def name(self) -> str: ...

    @property
    def op(self) -> str: ...

    @property
    def variant(self) -> str: ...


@dataclass(frozen=True)
class KernelLoop:
    """What the object code says about one kernel, independent of the core."""

    kernel: NamedKernel
    kind: str | None
    loop: Loop | None
    function_instructions: int
    function_start: int = 0
    features: frozenset[str] = frozenset()  # what it needs to run: a core without one of them cannot

    @property
    def found(self) -> bool:
        return self.loop is not None

    def loop_macs(self, sve_bits: int) -> int:
        return sum(macs_of(i, sve_bits) for i in self.loop.body) if self.loop else 0

    @property
    def loop_mac_instructions(self) -> int:
        return sum(1 for i in self.loop.body if mac_kind(i)) if self.loop else 0


@dataclass
class CoreResult:
    kernel: str
    op: str
    variant: str
    compiler: str
    core: str
    status: str  # OK, NO_ISA (the core lacks the variant's features), NO_HOT_LOOP, NO_MACS, NO_PEAK
    kind: str | None = None
    mattr: str = ""
    loop_instructions: int = 0
    mac_instructions: int = 0
    macs_per_iteration: int = 0
    cycles_per_iteration: float = 0.0
    block_rthroughput: float = 0.0
    macs_per_cycle: float = 0.0
    peak_macs_per_cycle: float = 0.0
    percent_of_peak: float = 0.0
    bottleneck: str = ""
    resource_pressure: dict[str, float] = field(default_factory=dict)

    @property
    def meets_goal(self) -> bool:
        return self.status == "ok" and self.percent_of_peak >= GOAL_PERCENT


def find_kernels(
    lib: Path, ops: Sequence[str] | None = None, variants: Sequence[str] | None = None
) -> tuple[list[KernelLoop], dict[str, list[Insn]]]:
    """Every non-reference micro-kernel defined in `lib` (of `ops` and `variants` when given), with its hot loop."""
    cat = load()
    funcs = disassemble(lib)
    out = []
    for name, insns in sorted(funcs.items()):
        if not name.startswith(KERNEL_PREFIX):
            continue
        kernel = parse_kernel_name(name.removeprefix(KERNEL_PREFIX), cat.ops)
        if (
            kernel.variant == REFERENCE
            or cat.variant(kernel.variant).scalable == "streaming"  # llvm-mca has no SME model
            or (ops and kernel.op not in ops)
            or (variants and kernel.variant not in variants)
        ):
            continue
        kind = kernel_kind(insns)
        features = cat.variant_features(ARCH, kernel.variant)
        out.append(KernelLoop(kernel, kind, hot_loop(insns, kind), len(insns), insns[0].addr if insns else 0, features))
    out.sort(key=lambda kl: (list(cat.ops).index(kl.kernel.op), cat.variant(kl.kernel.variant).rank))
    return out, funcs


def explain(result: McaResult, kind: str) -> str:
    """The busiest resources of the loop and the non-MAC instructions that share them."""
    units = result.unit_pressure()
    if not units:
        return ""
    top = max(units.values())
    busiest = [name for name, p in units.items() if p >= 0.98 * top]
    cycles = result.cycles_per_iteration
    cols = {i for i, unit in enumerate(result.units) if resource_of(unit) in busiest}
    others: Counter[str] = Counter()
    for text, row in result.by_insn:
        mnemonic = text.split()[0] if text else ""
        insn = Insn(0, mnemonic, split_operands(text[len(mnemonic) :].strip()))
        in_mix = mac_kind(insn) == kind or (
            base_mnemonic(kind.split(maxsplit=1)[0]) in PRODUCT_ONLY and mnemonic in ACCUMULATE_ONLY
        )
        if not in_mix and any(row[i] > 0 for i in cols):
            others[mnemonic] += 1
    shared = ", ".join(f"{n}×{m}" for m, n in sorted(others.items(), key=lambda kv: (-kv[1], kv[0])))
    what = f"{'/'.join(sorted(busiest))} busy {top:.2f} of {cycles:.2f} cycles"
    if top < 0.9 * cycles:
        return f"latency/dependency bound ({what})"
    return what + (f"; shared with {shared}" if shared else "")


def priced_loop(res: CoreResult, kl: KernelLoop, result: McaResult) -> CoreResult:
    """`res` completed from llvm-mca's run of the kernel's hot loop: what needs no peak."""
    assert kl.loop is not None
    res.loop_instructions = len(kl.loop.body)
    res.mac_instructions = kl.loop_mac_instructions
    res.macs_per_iteration = kl.loop_macs(SVE_BITS[res.core])
    res.cycles_per_iteration = result.cycles_per_iteration
    res.block_rthroughput = result.block_rthroughput
    res.resource_pressure = {k: round(v, 2) for k, v in result.unit_pressure().items() if v}
    return res


def fill(res: CoreResult, kl: KernelLoop, result: McaResult, peak: Peak) -> CoreResult:
    """`res` completed from llvm-mca's run of the kernel's hot loop and the peak of its MAC kind on that core."""
    assert kl.loop is not None and kl.kind is not None
    priced_loop(res, kl, result)
    res.macs_per_cycle = res.macs_per_iteration / res.cycles_per_iteration
    res.peak_macs_per_cycle = peak.macs_per_cycle
    res.percent_of_peak = 100.0 * res.macs_per_cycle / peak.macs_per_cycle
    res.bottleneck = explain(result, kl.kind)
    return res


def _rows(kernels: Sequence[KernelLoop], compiler: str, cores: Sequence[str]) -> list[tuple[KernelLoop, CoreResult]]:
    """One row per kernel and core, its status set from what the core has and what the object code shows."""
    rows = []
    for kl in kernels:
        k = kl.kernel
        for core in cores:
            res = CoreResult(k.name, k.op, k.variant, compiler, core, OK, kl.kind, mattr_for(kl.features))
            if not kl.features <= core_features(core):
                res.status = NO_ISA
            elif kl.loop is None:
                res.status = NO_HOT_LOOP
            elif kl.kind is None:
                res.status = NO_MACS
            rows.append((kl, res))
    return rows


def _peak_or_none(key: tuple[str, str, str], body: Sequence[Insn]) -> Peak | None:
    """The peak of a MAC kind on a core; None when the loop gives no reference stream (a widening multiply whose
    products a compiler sums otherwise than the stream knows)."""
    core, kind, mattr = key
    try:
        stream = reference_stream(body, kind)
    except IsaforgeError:
        return None
    return measure_peak(stream, core, mattr)


def price(
    kernels: Sequence[KernelLoop],
    compiler: str,
    cores: Sequence[str],
    jobs: int = 2,
    progress: Callable[[int, int, str], None] | None = None,
) -> tuple[list[CoreResult], list[Peak]]:
    """Every kernel's hot loop on every core it can run on; peaks are measured once per (core, MAC kind, features).
    A loop without MACs, or whose MAC kind has no reference stream, is priced in cycles per iteration only."""
    require(LLVM_MCA)
    require(CLANG)
    rows = _rows(kernels, compiler, cores)
    todo = [(kl, res) for kl, res in rows if res.status in (OK, NO_MACS)]
    peak_bodies: dict[tuple[str, str, str], Sequence[Insn]] = {}
    for kl, res in todo:
        if res.status == OK and kl.loop is not None and kl.kind is not None:
            peak_bodies.setdefault((res.core, kl.kind, res.mattr), kl.loop.body)
    total = len(peak_bodies) + len(todo)
    done = 0
    peaks: dict[tuple[str, str, str], Peak | None] = {}

    def model(item: tuple[KernelLoop, CoreResult]) -> CoreResult:
        kl, res = item
        assert kl.loop is not None
        result = run_mca(mca_source(kl.loop), res.core, res.mattr)
        peak = peaks.get((res.core, kl.kind or "", res.mattr))
        if peak is not None:
            return fill(res, kl, result, peak)
        res.status = res.status if res.status == NO_MACS else NO_PEAK
        return priced_loop(res, kl, result)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for key, peak in zip(peak_bodies, pool.map(lambda kv: _peak_or_none(*kv), peak_bodies.items()), strict=True):
            peaks[key] = peak
            done += 1
            if progress:
                progress(done, total, f"peak of {key[1]} on {key[0]}")
        for res in pool.map(model, todo):
            done += 1
            if progress:
                progress(done, total, f"{res.kernel} on {res.core}")
    found = [p for p in peaks.values() if p is not None]
    return [res for _, res in rows], sorted(found, key=lambda p: (CORES.index(p.core), p.kind))


def analyse(
    lib: Path,
    compiler: str,
    cores: Sequence[str],
    ops: Sequence[str] | None = None,
    variants: Sequence[str] | None = None,
    jobs: int = 2,
    progress: Callable[[int, int, str], None] | None = None,
) -> tuple[list[CoreResult], list[Peak], list[KernelLoop]]:
    """Model every kernel of `lib` on every core against the peak of its MAC kind."""
    kernels, _ = find_kernels(lib, ops, variants)
    results, peaks = price(kernels, compiler, cores, jobs, progress)
    return results, peaks, kernels
