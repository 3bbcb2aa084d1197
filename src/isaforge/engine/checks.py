"""What an engine's kernels must satisfy together, over every arch: a reference per role, agreeing packing where the
roles share it, no clashing names or sources, and a declared order wherever dispatch would otherwise guess."""

from __future__ import annotations

from pathlib import Path

from isaforge.catalogue import Catalogue
from isaforge.engine.model import IDENTIFIER, REFERENCE_DIR, Engine, EngineError, Kernel


def check_references(engine: Engine, kernels: list[Kernel]) -> None:
    """Every role of every op has a portable kernel: the fallback on every CPU and the tests' oracle."""
    for op in engine.ops.values():
        refs = [k for k in kernels if k.arch_dir == REFERENCE_DIR and k.op == op.name]
        if not refs:
            raise EngineError(
                f"{engine.path}: op {op.name} has no reference kernel; add {engine.kernel_root.name}/{REFERENCE_DIR}/"
                f"{op.name}_1x1_ref.c, or a [kernel.<name>] with op = {op.name!r} and no requires (portable C: the "
                "fallback on every CPU and the tests' oracle)"
            )
        for role in op.roles:
            if not any(not k.roles or role.name in k.roles for k in refs):
                raise EngineError(
                    f"{engine.path}: role {role.name} of op {op.name} has no reference kernel; give a portable kernel "
                    f'of the op roles = ["{role.name}"] (or no roles: it serves all of them)'
                )


def check_shared_packing(cat: Catalogue, engine: Engine, kernels: list[Kernel]) -> None:
    """An op whose roles read the same packed operands (share_packing): per arch, every kernel packs alike."""
    for op in (o for o in engine.ops.values() if o.share_packing):
        for arch in cat.arches.values():
            mine = [k for k in kernels if k.op == op.name and k.arch_dir in (REFERENCE_DIR, arch.kernel_dir)]
            for k in mine[1:]:
                if k.packing != mine[0].packing:
                    raise EngineError(
                        f"{engine.path}: op {op.name} shares packed operands between its roles, but {mine[0].name} "
                        f"packs {dict(mine[0].packing)} and {k.name} {dict(k.packing)} on {arch.name}; make them "
                        "agree or drop share_packing"
                    )


def check_clashes(cat: Catalogue, engine: Engine, kernels: list[Kernel]) -> None:
    """Per arch: one kernel per name and one flag set per source file (a file compiled twice would define its
    symbols twice)."""
    for arch in cat.arches.values():
        mine = [k for k in kernels if k.arch_dir in (REFERENCE_DIR, arch.kernel_dir)]
        names: dict[str, Kernel] = {}
        flags_of: dict[Path, Kernel] = {}
        for k in mine:
            if k.name in names:
                raise EngineError(
                    f"{engine.path}: two kernels named {k.name} on {arch.name} ({names[k.name].sources[0]}, "
                    f"{k.sources[0]}); a kernel's name is its identity: rename one"
                )
            names[k.name] = k
            for src in k.sources:
                other = flags_of.setdefault(src, k)
                if other.variant != k.variant:
                    raise EngineError(
                        f"{engine.path}: {src} belongs to {other.name} ({other.variant}) and {k.name} ({k.variant}) on "
                        f"{arch.name}: a file is compiled with one variant's flags; give each kernel its own files"
                    )


def check_preferences(engine: Engine, kernels: list[Kernel]) -> None:
    """Two kernels of one op in one variant (and arch) need a declared order: dispatch must not guess. A kernel tuned
    for cores comes before its variant's others on those cores, so it needs no place in the order; two tuned for one
    core would."""
    groups: dict[tuple[str, str, str, str], list[str]] = {}
    tuned: dict[tuple[str, str, str, str, str], str] = {}
    for k in kernels:
        for role in k.roles or [r.name for r in engine.ops[k.op].roles]:  # kernels of different roles never compete
            if not k.tuned_for:
                groups.setdefault((k.arch_dir, k.op, k.variant, role), []).append(k.name)
            for core in k.tuned_for:
                other = tuned.setdefault((k.arch_dir, k.op, k.variant, role, core), k.name)
                if other != k.name:
                    raise EngineError(
                        f"{engine.path}: {other} and {k.name} are both {k.op} kernels of {k.variant} tuned for {core} "
                        f"({k.arch_dir}, role {role}); keep one, or tune them for different cores"
                    )
    for (arch_dir, op, variant, _), names in groups.items():
        listed = engine.prefer.get(variant, ())
        if len(names) > 1 and any(n not in listed for n in names):
            key = variant if IDENTIFIER.match(variant) else f'"{variant}"'
            raise EngineError(
                f"{engine.path}: {arch_dir}/{variant} has {len(names)} {op} kernels ({', '.join(sorted(names))}); "
                f"list them most preferred first: [prefer] {key} = [...]"
            )
