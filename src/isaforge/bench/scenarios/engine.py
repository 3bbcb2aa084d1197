"""An engine's kernels, priced as libisaforge's are: the project built for aarch64 as `isaforge test-qemu` builds it,
each kernel its manifest declares found in the build's static libraries, and its hot loop found in its object code.

An engine kernel is a C function with a main loop and a tail, and compilers vectorize the tail too (a loop of
smull/saddw after a loop of one sdot): the hot loop is the first innermost loop that multiply-accumulates, in the
source's order, not the one with the most MACs (libisaforge's kernels have one loop, which that rule finds). A
kernel that multiplies nothing (an elementwise op) has as its hot loop the first innermost loop on vector registers.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from isaforge import builds, coverage, projects
from isaforge.bench.measure.mca.analyse import CoreResult, KernelLoop, Peak, price
from isaforge.bench.measure.mca.cores import core_features
from isaforge.bench.measure.mca.macs import innermost, kernel_kind
from isaforge.bench.measure.mca.objcode import Insn, Loop, disassemble, loops
from isaforge.catalogue import REFERENCE, load
from isaforge.errors import IsaforgeError
from isaforge.toolchains.model import Toolchain, toolchains
from isaforge.toolchains.probing import probe

ARCH = "aarch64"
# test-qemu's build folder: a project it has proven is priced without another build
BUILDDIR = "build-isaforge"
VECTOR_REGISTER = ("v", "z", "q")
STREAMING = "sme"  # every streaming variant needs it


@dataclass(frozen=True)
class EngineKernel:
    """One kernel a manifest declares, and the function it is in the object code."""

    owner: str
    name: str
    op: str
    variant: str
    requires: frozenset[str]
    symbol: str


@dataclass(frozen=True)
class Skipped:
    kernel: EngineKernel
    why: str


def toolchain_for(compiler: str) -> Toolchain:
    """The aarch64 toolchain of `compiler`, usable here; a one-line error otherwise."""
    cat = load()
    tc = next((t for t in toolchains(cat) if t.arch.name == ARCH and t.compiler.name == compiler), None)
    if tc is None:
        raise IsaforgeError(f"no {ARCH} toolchain for compiler {compiler!r}; choose from: {', '.join(cat.compilers)}")
    found = probe(tc)
    if not found.usable:
        raise IsaforgeError(f"{tc.name} is not usable: {'; '.join(found.reasons)} (run ci/install-toolchains.sh)")
    return tc


def build(project: projects.Project, tc: Toolchain) -> projects.ProjectBuild:
    """The project configured and built with `tc` against the libisaforge installed for it."""
    prefix = builds.ensure_installed(builds.build_for(tc.triple, tc.compiler.name))
    pb = projects.ProjectBuild(project, tc, project.directory / BUILDDIR / tc.name, prefix)
    projects.configure(pb)
    projects.compile_project(pb)
    return pb


def _declared_symbols(manifest: coverage.Manifest) -> dict[str, str]:
    """Kernel → symbol for the kernels the engine catalogue declares by name ([kernel.<name>] symbol = ...)."""
    try:
        catalogue = Path(json.loads(manifest.path.read_text())["catalogue"])
        tables = tomllib.loads(catalogue.read_text()).get("kernel", {})
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {name: t["symbol"] for name, t in tables.items() if isinstance(t, dict) and isinstance(t.get("symbol"), str)}


def engine_kernels(pb: projects.ProjectBuild) -> list[EngineKernel]:
    """The kernels the build's manifests declare for aarch64, in their order; no manifest is a one-line error."""
    manifests = coverage.find_manifests(pb.directory)
    if not manifests:
        raise IsaforgeError(
            f"{pb.directory}: the build wrote no kernel manifest ({coverage.MANIFEST_GLOB}); build the kernels with "
            "isaforge's generator (docs/engines.md)"
        )
    out = []
    for manifest in (m for m in manifests if m.arch == ARCH):
        symbols = _declared_symbols(manifest)
        for k in manifest.kernels:
            symbol = symbols.get(k.name, f"{k.owner}_{k.name}")
            out.append(EngineKernel(k.owner, k.name, k.op, k.variant, k.requires, symbol))
    return out


def functions(builddir: Path) -> dict[str, list[Insn]]:
    """Every function of the build's static libraries (its dependencies' left out), the first definition winning."""
    found: dict[str, list[Insn]] = {}
    for lib in sorted(builddir.rglob("*.a")):
        if set(lib.relative_to(builddir).parts[:-1]) & set(coverage.FOREIGN_DIRS):
            continue
        for name, insns in disassemble(lib).items():
            found.setdefault(name, insns)
    return found


def _vector(insn: Insn) -> bool:
    return any(op[:1] in VECTOR_REGISTER and op[1:2].isdigit() for op in insn.operands)


def engine_hot_loop(insns: Sequence[Insn]) -> tuple[str | None, Loop | None]:
    """(MAC kind, hot loop): the first innermost loop that multiply-accumulates, else the first on vector
    registers (kind None)."""
    inner = sorted(innermost(loops(insns)), key=lambda loop: loop.start)
    for loop in inner:
        kind = kernel_kind(loop.body)
        if kind is not None:
            return kind, loop
    return None, next((loop for loop in inner if any(_vector(i) for i in loop.body)), None)


def kernel_loops(
    kernels: Sequence[EngineKernel], funcs: dict[str, list[Insn]]
) -> tuple[list[KernelLoop], list[Skipped]]:
    """Each kernel's hot loop; the ones llvm-mca cannot price (portable references, SME, absent from the object
    code) with the reason."""
    priced, skipped = [], []
    for k in kernels:
        insns = funcs.get(k.symbol)
        if k.variant == REFERENCE:
            skipped.append(Skipped(k, "portable C reference, not priced"))
        elif STREAMING in k.requires:
            skipped.append(Skipped(k, "streaming SVE (SME): llvm-mca has no model of it"))
        elif not insns:
            skipped.append(Skipped(k, f"{k.symbol} is in none of the build's static libraries"))
        else:
            kind, loop = engine_hot_loop(insns)
            priced.append(KernelLoop(k, kind, loop, len(insns), insns[0].addr, k.requires))
    return priced, skipped


@dataclass
class EngineBuildResult:
    """One compiler's build of the engine, priced."""

    compiler: str
    builddir: str
    loops: list[KernelLoop]
    rows: list[CoreResult]
    peaks: list[Peak]
    skipped: list[Skipped]


@dataclass
class EngineResult:
    project: str
    cores: list[str]
    core_isa: dict[str, list[str]]
    tools: dict[str, str] = field(default_factory=dict)
    builds: list[EngineBuildResult] = field(default_factory=list)


def collect(
    directory: Path,
    compilers: Sequence[str],
    cores: Sequence[str],
    jobs: int,
    step: Callable[[str], Callable[[int, int, str], None]],
) -> EngineResult:
    """The project built with each compiler, and every kernel it declares priced on every core; `step` starts a
    stage and gives the callback its progress goes to."""
    project = projects.detect(directory)
    if project.is_isaforge:
        raise IsaforgeError("--project names libisaforge itself; run isaforge bench without --project for it")
    result = EngineResult(project.directory.name, list(cores), {c: sorted(core_features(c)) for c in cores})
    for compiler in compilers:
        tc = toolchain_for(compiler)
        step(f"building {project.directory.name} for {tc.name}")
        pb = build(project, tc)
        loops, skipped = kernel_loops(engine_kernels(pb), functions(pb.directory))
        rows, peaks = price(loops, compiler, cores, jobs, step(f"llvm-mca ({compiler})"))
        result.builds.append(EngineBuildResult(compiler, str(pb.directory), loops, rows, peaks, skipped))
    return result
