"""An engine's kernels: the files of its grammar tree (kernels/<arch dir>/<variant>/, named by isaforge's grammar)
and its declared ones, gathered for every arch and checked (checks.py)."""

from __future__ import annotations

from pathlib import Path

from isaforge.catalogue import KERNEL_SUFFIXES, REFERENCE, Catalogue, CatalogueError, KernelName, parse_kernel_name
from isaforge.engine.checks import check_clashes, check_preferences, check_references, check_shared_packing
from isaforge.engine.declared import declared_as_kernels
from isaforge.engine.model import REFERENCE_DIR, Engine, EngineError, Kernel
from isaforge.engine.sources import defined_symbol


def scan_kernels(cat: Catalogue, engine: Engine) -> list[Kernel]:
    """Every kernel (both arches), checked: names, folders, variants, references, reachability, clashes."""
    root = engine.kernel_root
    if not root.is_dir() and not engine.declared:
        raise EngineError(f'{engine.path}: kernel folder {root} does not exist; create it or set kernels = "…"')
    arch_dirs = {a.kernel_dir: a.name for a in cat.arches.values()}
    kernels: list[Kernel] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        if folder.name == REFERENCE_DIR:
            kernels += _kernels_in(cat, engine, folder, REFERENCE, REFERENCE_DIR)
        elif folder.name in arch_dirs:
            kernels += _arch_kernels(cat, engine, folder, arch_dirs[folder.name])
        else:
            known = ", ".join([REFERENCE_DIR, *arch_dirs])
            raise EngineError(f"{folder}: not a kernel folder isaforge knows; use one of: {known}")
    for d in engine.declared:
        kernels += declared_as_kernels(cat, d)
    check_references(engine, kernels)
    check_shared_packing(cat, engine, kernels)
    check_clashes(cat, engine, kernels)
    check_preferences(engine, kernels)
    return kernels


def _arch_kernels(cat: Catalogue, engine: Engine, folder: Path, arch: str) -> list[Kernel]:
    out = []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        variant = sub.name
        if variant not in cat.variants or variant == REFERENCE:
            raise EngineError(
                f"{sub}: {variant!r} is not a variant; isaforge's variants on {arch}: "
                f"{', '.join(v.name for v in cat.arch_variants(arch) if v.name != REFERENCE)}"
            )
        if arch not in cat.variant(variant).arches:
            raise EngineError(f"{sub}: variant {variant} does not exist on {arch}, so no dispatch can reach it there")
        if engine.variants is not None and variant not in engine.variants:
            raise EngineError(
                f"{sub}: variant {variant} is not in [engine] variants of {engine.path.name}, so no dispatch can "
                f"reach its kernels; add it there or remove the folder"
            )
        out += _kernels_in(cat, engine, sub, variant, folder.name)
    return out


def _kernels_in(cat: Catalogue, engine: Engine, folder: Path, variant: str, arch_dir: str) -> list[Kernel]:
    out = []
    for path in sorted(p for p in folder.iterdir() if p.suffix in KERNEL_SUFFIXES):
        try:
            name = parse_kernel_name(path.stem, engine.ops)  # type: ignore[arg-type]
        except CatalogueError as exc:
            raise EngineError(
                f"{path}: {exc}; rename the file, or declare it where it is as a [kernel.<name>] of {engine.path.name}"
            ) from exc
        if name.variant != variant:
            raise EngineError(
                f"{path}: the name ends in _{name.variant} but the file is in the {variant} folder; rename it to "
                f"{path.stem.removesuffix('_' + name.variant)}_{variant}{path.suffix} or move it"
            )
        out.append(_grammar_kernel(engine, name, variant, arch_dir, path.resolve()))
    return out


def _grammar_kernel(engine: Engine, name: KernelName, variant: str, arch_dir: str, path: Path) -> Kernel:
    """A kernel of the grammar tree: its run function is <prefix>_<name>, a member's <prefix>_<name>_<member>, and
    its packing may only be what its name says (mr, nr, kr)."""
    op = engine.ops[name.op]
    symbol = engine.symbol(name.name)
    members = tuple((m, defined_symbol(f"{symbol}_{m}", (path,), f"member {m}", path)) for m, _ in op.members)
    tile = {"mr": name.mr, "nr": name.nr, "kr": name.kr}
    for key in op.packing:
        if key not in tile:
            raise EngineError(
                f"{path}: op {op.name}'s packing key {key!r} cannot come from a file name; declare the kernel as a "
                f"[kernel.<name>] of {engine.path.name} with packing = {{ ... }}"
            )
    packing = tuple((key, tile[key]) for key in op.packing)
    return Kernel(name.name, name.op, variant, arch_dir, (path,), symbol, name.mr, name.nr, name.kr, (), members,
                  packing)  # fmt: skip
