"""What `isaforge bench` runs for libisaforge, once its options are checked: per compiler, the build's kernels'
hot loops through llvm-mca, one GEMM per op, variant and shape and the plan runs counted under QEMU, the quantized
plans; and the side by side with the peer libraries. The figures go to a BenchResult (or a SideBySide) for the
report."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from isaforge import builds, process
from isaforge.bench.measure import executable, wholecall
from isaforge.bench.measure.mca import analyse, cores, llvm_mca
from isaforge.bench.report import plans, results
from isaforge.bench.scenarios import gemms, qplans, sidebyside, sme
from isaforge.bench.scenarios.shapes import Shape
from isaforge.catalogue import load
from isaforge.errors import IsaforgeError

ARCH = "aarch64"
# A stage's name → the callback its steps are reported with (done, total, what).
Stage = Callable[[str], Callable[[int, int, str], None]]


@dataclass(frozen=True)
class Selection:
    """Everything a run was asked for, checked."""

    command: str  # the command line that reproduces the run
    compilers: list[str]
    cores: list[str]
    ops: list[str]
    variants: list[str]
    shapes: list[Shape]
    plans: list[tuple[Shape, str]]  # (shape, PLAN or PLAN_EPILOGUE)
    before: plans.Before | None
    plan_shapes: list[Shape]
    epilogue_shape: Shape
    sve_bits: int
    jobs: int
    mca: bool  # llvm-mca's hot loops
    qemu: bool  # the QEMU counts
    quantized_plans: bool
    decode: bool  # the quantized section's int4-vs-int8 decoding runs
    peer_shapes: list[Shape]
    peer_cores: list[wholecall.CoreModel]
    precisions: list[str]
    sme_shapes: list[Shape]  # the SME bench's, when a streaming kernel is built; empty: --no-sme
    svls: list[int]  # streaming vector lengths, bytes


def version(cmd: list[str], pattern: str) -> str:
    """A tool's version as its --version says it; "?" when it says nothing."""
    try:
        out = process.run([*cmd, "--version"], check=False, timeout=30).stdout
    except IsaforgeError:
        return "?"
    m = re.search(pattern, out)
    return m[0].strip() if m else (out.splitlines() or ["?"])[0].strip()


def split_ops(chosen: list[str]) -> tuple[list[str] | None, list[str], list[str] | None]:
    """(plain ops for the one-call counts, plan-only ops for bench.qplans, ops whose kernels llvm-mca models);
    None: every op. No --ops: every op of both kinds (gemm_s4's kernels, which have no one-call op, through plans)."""
    cat = load()
    if not chosen:
        return list(cat.plain_ops()), qplans.quantized_ops(), None
    plain = [o for o in chosen if cat.ops[o].plain]
    quantized = [o for o in chosen if not cat.ops[o].plain]
    return plain, quantized, list(dict.fromkeys(plain + [qplans.kernel_op(o) for o in quantized]))


def _empty_result(sel: Selection) -> results.BenchResult:
    result = results.BenchResult(
        sel.command, sel.compilers, sel.cores, [s.label for s in sel.shapes], sel.sve_bits, ran_mca=sel.mca,
        ran_qemu=sel.qemu, ran_plans=bool(sel.plans), plan_shapes=[s.label for s in sel.plan_shapes],
        epilogue_shape=sel.epilogue_shape.label, before=sel.before,
    )  # fmt: skip
    if sel.mca:
        result.tools["llvm-mca"] = version([llvm_mca.LLVM_MCA], r"LLVM version [\w.]+")
        result.core_map = cores.core_map()
        result.core_isa = {c: sorted(cores.core_features(c)) for c in sel.cores}
    if sel.qemu:
        result.tools["QEMU"] = version([load().arch(ARCH).qemu], r"version [\w.]+")
    return result


def collect(sel: Selection, stage: Stage) -> results.BenchResult:
    """Every compiler's build measured as `sel` asks."""
    plain_ops, quantized_ops, mca_ops = split_ops(sel.ops)
    result = _empty_result(sel)
    for compiler in sel.compilers:
        build = builds.build_for(load().arch(ARCH).triple, compiler)
        stage(f"building {build.name}")
        directory = builds.ensure_built(build)
        assert build.toolchain is not None
        result.tools[compiler] = version(build.toolchain.compiler.command(build.toolchain.arch)[:1], r".*")
        if sel.mca:
            rows, peaks, loops = analyse.analyse(
                directory / executable.LIBRARY, compiler, sel.cores, mca_ops, sel.variants, sel.jobs,
                stage(f"llvm-mca ({compiler})"),
            )  # fmt: skip
            result.mca += rows
            result.peaks[compiler] = peaks
            result.hot_loops += [results.HotLoop.of(compiler, kl) for kl in loops]
        if sel.qemu and plain_ops != []:
            counts, _ = gemms.count_all(
                build, directory, plain_ops, sel.variants, sel.shapes, sel.sve_bits, sel.jobs,
                stage(f"qemu ({compiler})"), sel.plans,
            )  # fmt: skip
            result.qemu += counts
        if sel.qemu and sel.quantized_plans and quantized_ops:
            with tempfile.TemporaryDirectory(prefix="isaforge-qbench-") as tmp:
                progress = stage(f"quantized plans ({compiler})")
                variants = sel.variants or None
                q = qplans.collect(build, directory, quantized_ops, variants, Path(tmp), sel.sve_bits, sel.decode,
                                   sel.jobs, progress)  # fmt: skip
                result.quantized.append(q)
        if sel.sme_shapes:  # nothing to run when the build has no streaming kernel
            result.sme += sme.collect(build, directory, sel.ops or None, sel.variants, sel.sme_shapes, sel.svls,
                                      sel.jobs, stage(f"SME ({compiler})"))  # fmt: skip
    return result


def collect_peers(sel: Selection, stage: Stage) -> sidebyside.SideBySide:
    """The side by side, with the first chosen compiler's build of libisaforge."""
    build = builds.build_for(load().arch(ARCH).triple, sel.compilers[0])
    stage(f"building {build.name}")
    builds.ensure_built(build)
    return sidebyside.collect(build, sel.peer_shapes, sel.peer_cores, sel.precisions, sel.jobs, stage("side by side"))
