"""libisaforge side by side with OpenBLAS, BLIS and XNNPACK: one call of each, whole, in modeled cycles.

Each library's harness (bench/peers) runs one GEMM under `qemu-aarch64 -cpu <core>` (so its run-time dispatch picks
what it would pick on that core), QEMU logs the blocks it executes between the harness's markers, and
bench/wholecall prices them with llvm-mca's model of that core. The float precisions' calls carry a bias and a
clamp where the library's call can (libisaforge's plan, XNNPACK; not sgemm nor isf_gemm: bench/peers). Every result
is checked by gemmjob's oracle (qs8: libisaforge's gemm_qs8 by isaforge.quant byte for byte, XNNPACK's within ±1;
qd8 and qc4w: libisaforge's dynamically quantized plans by isaforge.quant byte for byte, XNNPACK's qs8 stand-in as its
qs8 row); a wrong one is shown and never ranks.
Rows: precision × shape × core; columns: the libraries.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from isaforge import process
from isaforge.bench.measure import wholecall
from isaforge.bench.measure.mca.analyse import Peak
from isaforge.bench.measure.wholecall import CORE_MODELS, CoreModel, Decoder, Pricer, core_model
from isaforge.bench.scenarios import peers
from isaforge.bench.scenarios.shapes import Shape
from isaforge.builds import Build
from isaforge.errors import IsaforgeError

DEFAULT_SHAPES = "1x1024x1024,4x1024x1024,49x256x2304,64x64x64,128x128x128,256x256x64,384x384x384"
DEFAULT_CORES = ",".join(c.qemu_cpu.partition(",")[0] for c in CORE_MODELS)
# The quantized precisions do int8's MACs (int4 weights are widened to int8 for them): their peak is int8's, the
# quantization, requantization and decoding being work on top of them.
PEAK_PRECISION = {"qs8": "int8", "qd8": "int8", "qc4w": "int8"}
PRECISIONS = (*wholecall.PRECISIONS, *PEAK_PRECISION)
DEFAULT_PRECISIONS = ",".join(PRECISIONS)


@dataclass(frozen=True)
class Entrant:
    """One library called one way: `mode` is the harness's (prepacked: weights packed before the call)."""

    library: str  # bench/peers' name
    mode: str
    label: str

    @property
    def ours(self) -> bool:
        return self.library == peers.ISAFORGE


ENTRANTS = (
    Entrant(peers.ISAFORGE, peers.PREPACKED, "libisaforge plan"),
    Entrant(peers.ISAFORGE, peers.PLAIN, "libisaforge isf_gemm"),
    Entrant("openblas", peers.PLAIN, "OpenBLAS"),
    Entrant("blis", peers.PLAIN, "BLIS"),
    Entrant("xnnpack", peers.PREPACKED, "XNNPACK"),
)
PLAN, PLAIN_OURS = ENTRANTS[0], ENTRANTS[1]
OK, WRONG, REFUSED, MISSING = "ok", "wrong", "refused", "not installed"


@dataclass
class CallRow:
    precision: str
    shape: str
    core: str  # CoreModel.mcpu
    entrant: str  # Entrant.label
    status: str  # OK, WRONG (C failed the oracle), REFUSED (the library's status: e.g. no such kernel on this core)
    detail: str = ""
    chose: str = ""  # what the library says it chose: its core type, its kernel
    epilogue: bool = False  # its call applied the bias and clamp (peers.PeerRun.epilogue); else C = A·B
    macs: int = 0  # M·N·K
    cycles: float = 0.0
    instructions: int = 0
    macs_executed: int = 0
    undecoded: int = 0
    blocks: int = 0
    peak_macs_per_cycle: float = 0.0

    @property
    def ranks(self) -> bool:
        return self.status == OK

    @property
    def percent_of_peak(self) -> float:
        return 100.0 * self.macs / (self.cycles * self.peak_macs_per_cycle) if self.ranks and self.cycles else 0.0

    @property
    def instructions_per_mac(self) -> float:
        return self.instructions / self.macs if self.macs else 0.0

    def as_dict(self) -> dict[str, object]:
        out = dict(self.__dict__)
        out["percent_of_peak"] = round(self.percent_of_peak, 3)
        out["instructions_per_mac"] = round(self.instructions_per_mac, 6)
        out["cycles"] = round(self.cycles, 1)
        return out


@dataclass
class SideBySide:
    shapes: list[str]
    cores: list[str]  # mcpu
    precisions: list[str]
    rows: list[CallRow] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)  # library → why it was not run
    peaks: dict[str, dict[str, Peak]] = field(default_factory=dict)  # core → precision → its peak

    def find(self, precision: str, shape: str, core: str, entrant: str) -> CallRow | None:
        for r in self.rows:
            if (r.precision, r.shape, r.core, r.entrant) == (precision, shape, core, entrant):
                return r
        return None

    def best_peer(self, precision: str, shape: str, core: str, modes: Sequence[str] | None = None) -> CallRow | None:
        """The fastest peer that gave a right answer (of the given call modes)."""
        ranked = [
            r for r in self.rows
            if (r.precision, r.shape, r.core) == (precision, shape, core) and r.ranks and not _entrant(r.entrant).ours
            and (modes is None or _entrant(r.entrant).mode in modes)
        ]  # fmt: skip
        return min(ranked, key=lambda r: r.cycles, default=None)


def _entrant(label: str) -> Entrant:
    return next(e for e in ENTRANTS if e.label == label)


def parse_cores(text: str) -> list[CoreModel]:
    cores = [core_model(c.strip()) for c in text.split(",") if c.strip()]
    if not cores:
        raise IsaforgeError(f"no core given; choose from {DEFAULT_CORES}")
    return cores


def parse_precisions(text: str) -> list[str]:
    out = [p.strip() for p in text.split(",") if p.strip()]
    for p in out:
        if p not in PRECISIONS:
            raise IsaforgeError(f"unknown precision {p!r}; choose from {DEFAULT_PRECISIONS}")
    if not out:
        raise IsaforgeError(f"no precision given; choose from {DEFAULT_PRECISIONS}")
    return out


def core_peak(mcpu: str, precision: str) -> Peak:
    """The core's best MAC rate for the precision's multiply-accumulates (wholecall.core_peak)."""
    return wholecall.core_peak(mcpu, PEAK_PRECISION.get(precision, precision))


@dataclass(frozen=True)
class Job:
    precision: str
    shape: Shape
    core: CoreModel
    entrant: Entrant


def collect(
    build: Build,
    shapes: Sequence[Shape],
    cores: Sequence[CoreModel],
    precisions: Sequence[str],
    jobs: int = 2,
    progress: Callable[[int, int, str], None] | None = None,
) -> SideBySide:
    out = SideBySide([s.label for s in shapes], [c.mcpu for c in cores], list(precisions))
    out.peaks = {c.mcpu: {p: core_peak(c.mcpu, p) for p in precisions} for c in cores}
    decoder = Decoder()
    pricers = {c.mcpu: Pricer(c, decoder) for c in cores}
    with tempfile.TemporaryDirectory(prefix="isaforge-peers-") as tmp:
        work = Path(tmp)
        exes: dict[str, Harness] = {}
        for e in ENTRANTS:
            if e.library in exes or e.library in out.missing:
                continue
            why = peers.available(e.library)
            if why is not None:
                out.missing[e.library] = why
                continue
            exe = peers.build_harness(e.library, work, build if e.ours else None)
            exes[e.library] = Harness(exe, peers.markers(exe))
        todo = [Job(p, s, c, e) for p in precisions for s in shapes for c in cores for e in ENTRANTS
                if e.library in exes and peers.peer(e.library).offers(p, e.mode)]  # fmt: skip

        def one(job: Job) -> CallRow:
            return _measure(job, exes[job.entrant.library], pricers[job.core.mcpu], work)

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for n, row in enumerate(pool.map(one, todo), 1):
                out.rows.append(row)
                if progress:
                    progress(n, len(todo), f"{row.entrant} {row.precision} {row.shape} {row.core}")
    return out


@dataclass(frozen=True)
class Harness:
    exe: Path
    window: tuple[int, int]  # its markers' entries


def _measure(job: Job, harness: Harness, pricer: Pricer, work: Path) -> CallRow:
    exe = harness.exe
    s = job.shape
    row = CallRow(job.precision, s.label, job.core.mcpu, job.entrant.label, OK, macs=s.macs)
    row.peak_macs_per_cycle = core_peak(job.core.mcpu, job.precision).macs_per_cycle
    stem = f"{job.entrant.library}-{job.entrant.mode}-{job.precision}-{s.label}-{job.core.mcpu}"
    log = work / f"{stem}.log"
    try:
        got = peers.run(job.entrant.library, exe, job.precision, job.entrant.mode, s, job.core.qemu_cpu, work, log)
        row.chose, row.epilogue = got.detail, got.epilogue
        if got.status != 0:
            row.status, row.detail = REFUSED, f"status {got.status}"
            return row
        if got.wrong:
            row.status, row.detail = WRONG, got.wrong
        call = wholecall.model_call(wholecall.block_profile(log, harness.window), pricer)
    finally:
        log.unlink(missing_ok=True)
    row.cycles, row.instructions, row.macs_executed = call.cycles, call.instructions, call.macs_executed
    row.undecoded, row.blocks = call.undecoded, call.blocks
    return row


def package_versions() -> dict[str, str]:
    """Each peer's Debian package and its version, or that it is not installed."""
    out = {}
    for name, p in peers.PEERS.items():
        if not p.package:
            continue
        got = process.run(["dpkg-query", "-W", "-f=${Version}", p.package], check=False, timeout=30)
        out[name] = f"{p.package} {got.stdout.strip()}" if got.returncode == 0 else f"{p.package} (not installed)"
    return out
