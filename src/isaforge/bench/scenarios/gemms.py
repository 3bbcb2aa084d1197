"""The GEMMs the bench counts for libisaforge: one kernel per op and variant (the one dispatch prefers among that
variant's), each run plain at every shape and as the plan runs asked for."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from isaforge.bench.measure.qemu_count import DEFAULT_SVE_BITS, PLAIN, RunCount, StaticRunner
from isaforge.bench.scenarios.shapes import Shape
from isaforge.builds import Build
from isaforge.catalogue import REFERENCE, KernelName, load


def select(
    kernels: Sequence[KernelName], ops: Sequence[str] | None, variants: Sequence[str] | None
) -> list[KernelName]:
    """The kernel each chosen op and variant runs a GEMM with (the variant's most preferred: its row kernels and
    any smaller tiles are the driver's, run inside that GEMM), for the chosen ops and variants (default: every
    variant but the portable reference)."""
    cat = load()
    return most_preferred(
        kernels,
        ops,
        variants,
        lambda k: cat.variant(k.variant).scalable != "streaming",  # priced apart (bench.scenarios.sme)
    )


def most_preferred(
    kernels: Sequence[KernelName],
    ops: Sequence[str] | None,
    variants: Sequence[str] | None,
    keep: Callable[[KernelName], bool],
) -> list[KernelName]:
    """Per op and variant, dispatch's most preferred of the kernels `keep` keeps, of the chosen ops and variants
    (default: every variant but the portable reference), in `kernels`' order."""
    cat = load()
    best: dict[tuple[str, str], KernelName] = {}
    for k in kernels:
        if (not ops or k.op in ops) and keep(k) and (k.variant in variants if variants else k.variant != REFERENCE):
            key = (k.op, k.variant)
            if key not in best or cat.preference(k) > cat.preference(best[key]):
                best[key] = k
    return [k for k in kernels if best.get((k.op, k.variant)) == k]


def count_all(
    build: Build,
    directory: Path,
    ops: Sequence[str] | None,
    variants: Sequence[str] | None,
    shapes: Sequence[Shape],
    sve_bits: int = DEFAULT_SVE_BITS,
    jobs: int = 2,
    progress: Callable[[int, int, str], None] | None = None,
    plans: Sequence[tuple[Shape, str]] = (),
) -> tuple[list[RunCount], StaticRunner]:
    """One plain GEMM per kernel and shape, then the `plans` runs (shape, PLAN or PLAN_EPILOGUE) per kernel."""
    with tempfile.TemporaryDirectory(prefix="isaforge-bench-") as tmp:
        work = Path(tmp)
        counter = StaticRunner.prepare(build, directory, work, sve_bits)
        chosen = select(counter.kernels(), ops, variants)
        todo = [(k, s, PLAIN) for k in chosen for s in shapes] + [(k, s, m) for k in chosen for s, m in plans]

        def one(item: tuple[KernelName, Shape, str]) -> RunCount:
            return counter.run(item[0], item[1], work, item[2])

        out = []
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for n, rc in enumerate(pool.map(one, todo), 1):
                out.append(rc)
                if progress:
                    progress(n, len(todo), f"{rc.kernel} {rc.shape}{'' if rc.mode == PLAIN else f' {rc.mode}'}")
    return out, counter
