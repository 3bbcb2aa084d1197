"""The plan of one build: which of an engine's kernels this arch and compiler build, how each variant or feature set
is compiled (variant_route.py probes it), what is dropped and why, and the order dispatch prefers them in."""

from __future__ import annotations

from dataclasses import dataclass, field

from isaforge import variant_route
from isaforge.catalogue import HOST_ARCH, REFERENCE, Catalogue, preference_rank
from isaforge.engine.kernels import scan_kernels
from isaforge.engine.model import REFERENCE_DIR, Engine, EngineError, Kernel
from isaforge.variant_route import Route


@dataclass(frozen=True)
class Plan:
    engine: Engine
    arch: str
    compiler: str
    built: list[str]  # variants and feature sets, least preferred first, without ref
    dropped: dict[str, str]
    kernels: list[Kernel]  # the built ones of this arch, op by op, most preferred first
    routes: dict[str, Route] = field(default_factory=dict)  # how each built label is compiled
    cc: tuple[str, ...] = ()  # the compiler command the routes were probed with


def plan(cat: Catalogue, engine: Engine, arch: str, compiler: str, cc: list[str]) -> Plan:
    if engine.arches is not None and arch != HOST_ARCH and arch not in engine.arches:
        raise EngineError(
            f"{engine.path}: this build is for {arch}, which [engine] arches does not list "
            f"({', '.join(engine.arches)}); build for a listed arch or add {arch} there"
        )
    every = scan_kernels(cat, engine)
    arch_dir = cat.arch(arch).kernel_dir if arch != HOST_ARCH else None
    mine = [k for k in every if k.arch_dir in (REFERENCE_DIR, arch_dir)]
    built: list[str] = []
    dropped: dict[str, str] = {}
    labels = sorted({k.variant for k in mine if k.variant != REFERENCE}, key=lambda v: (cat.variant(v).rank, v))
    routes: dict[str, Route] = {}
    for label in labels:
        suffixes = {src.suffix for k in mine if k.variant == label for src in k.sources}
        route = variant_route.choose(
            cat, arch, compiler, label, cc, c_sources=".c" in suffixes, asm_sources=bool(suffixes & {".S", ".s"})
        )
        if isinstance(route, Route):
            built.append(label)
            routes[label] = route
            continue
        reason = route
        if engine.variants is not None and label in engine.variants:
            raise EngineError(
                f"{engine.path}: variant {label}: {reason}; remove it from [engine] variants or use a newer compiler"
            )
        dropped[label] = reason
    chosen = [k for k in mine if k.variant == REFERENCE or k.variant in built]
    order = {op: o.index for op, o in engine.ops.items()}
    chosen.sort(key=lambda k: (order[k.op], *dispatch_order(cat, engine, k), k.name))
    return Plan(engine, arch, compiler, built, dropped, chosen, routes, tuple(cc))


def dispatch_order(cat: Catalogue, engine: Engine, k: Kernel) -> tuple[int, int, int]:
    """Most preferred first: by variant (or feature set), kernels tuned for cores before the others of their variant
    (dispatch takes one only on its cores), then by the engine's [prefer]."""
    rank = cat.variant(k.variant).rank
    return (-rank, 0 if k.tuned_for else 1, -preference_rank(rank, engine.prefer.get(k.variant, ()), k.name))
