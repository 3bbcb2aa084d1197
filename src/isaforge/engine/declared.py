"""[kernel.<name>] tables: kernels where they are, under the names they have (a vendored library as it is), each
needing a catalogue variant or a set of features (fp16+dotprod), or none (portable)."""

from __future__ import annotations

from pathlib import Path

from isaforge.catalogue import REFERENCE, Catalogue, CatalogueError
from isaforge.engine.model import MAX_TUNED, REFERENCE_DIR, SYMBOL, Declared, EngineError, EngineOp, Kernel
from isaforge.engine.sources import defined_symbol, source_files
from isaforge.engine.toml_fields import known_arch, nonempty_string, string_list, subtable, unknown_keys, whole_number

KERNEL_KEYS = {
    "op",
    "arch",
    "requires",
    "sources",
    "symbol",
    "mr",
    "nr",
    "kr",
    "tuned_for",
    "members",
    "packing",
    "roles",
}


def declared_kernels_of(
    cat: Catalogue, raw: dict, ops: dict[str, EngineOp], shared: tuple[Path, ...], path: Path
) -> tuple[Declared, ...]:
    declared = tuple(
        _declared(cat, key, table, ops, shared, path) for key, table in subtable(raw, "kernel", path).items()
    )
    for d in declared:
        both = set(d.sources) & set(shared)
        if both:
            raise EngineError(f"{path}: {sorted(both)[0]} is both a shared source and one of [kernel.{d.name}]'s")
    return declared


def _declared(
    cat: Catalogue, name: str, table: dict, ops: dict[str, EngineOp], shared: tuple[Path, ...], path: Path
) -> Declared:
    where = f"[kernel.{name}]"
    op = _op_of(name, table, ops, where, path)
    arches, labels = _arches_and_labels(cat, table, where, path)
    sources = source_files(table, where, path)
    symbol = defined_symbol(nonempty_string(table, "symbol", where, path), sources, f"{where} symbol", path)
    members = _members(table, op, (*sources, *shared), where, path)
    packing = _packing(table, op, where, path)
    roles = _roles(table, op, where, path)
    tile = tuple(whole_number(table, key, where, path) for key in ("mr", "nr", "kr"))
    tuned_for = _tuned_for(cat, table, where, path)
    return Declared(name, op.name, arches, labels, sources, symbol, tile, tuned_for, members, packing, roles)  # type: ignore[arg-type]


def _op_of(name: str, table: object, ops: dict[str, EngineOp], where: str, path: Path) -> EngineOp:
    """The op a [kernel.<name>] table implements, once the table itself and its name are known to be good."""
    if not isinstance(table, dict):
        raise EngineError(f"{path}: {where} must be a table")
    if not SYMBOL.match(name):
        raise EngineError(f"{path}: kernel name {name!r} must be letters, digits and '_' (it is shown and selected)")
    unknown_keys(where, table, KERNEL_KEYS, path)
    op = nonempty_string(table, "op", where, path)
    if op not in ops:
        raise EngineError(f"{path}: {where} op {op!r} is not an [op.*] of the catalogue; declare it or fix the name")
    return ops[op]


def _arches_and_labels(cat: Catalogue, table: dict, where: str, path: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The arches a kernel is built for (every one when it requires features and names none) and, per arch, the
    variant or feature set its requirements make there; no arch at all for a portable kernel."""
    requires = string_list(table, "requires", where, path)
    arches = tuple(known_arch(cat, a, f"{where} arch", path) for a in string_list(table, "arch", where, path))
    if requires:
        arches = arches or tuple(cat.arches)
    labels = tuple(_feature_set_on(cat, a, requires, f"{where} requires", path) if requires else REFERENCE
                   for a in arches)  # fmt: skip
    return arches, labels


def _members(
    table: dict, op: EngineOp, sources: tuple[Path, ...], where: str, path: Path
) -> tuple[tuple[str, str], ...]:
    """(member, symbol) for each member of the op, each defined in `sources`: the kernel's own and the shared ones
    (a member may be a shared function, a library's packer)."""
    members_raw = table.get("members", {})
    if not isinstance(members_raw, dict):
        raise EngineError(f'{path}: {where} members must be a table of <member> = "<symbol>"')
    _same_keys(members_raw, [m for m, _ in op.members], f"{where} members", f"the members of op {op.name}", path)
    return tuple((m, defined_symbol(str(members_raw[m]), sources, f"{where} members.{m}", path)) for m, _ in op.members)


def _packing(table: dict, op: EngineOp, where: str, path: Path) -> tuple[tuple[str, int], ...]:
    packing_raw = table.get("packing", {})
    if not isinstance(packing_raw, dict):
        raise EngineError(f"{path}: {where} packing must be a table of <key> = <whole number>")
    _same_keys(packing_raw, op.packing, f"{where} packing", f"the packing keys of op {op.name}", path)
    return tuple((k, whole_number(packing_raw, k, f"{where} packing", path)) for k in op.packing)


def _roles(table: dict, op: EngineOp, where: str, path: Path) -> tuple[str, ...]:
    roles = string_list(table, "roles", where, path)
    for role in roles:
        if role not in (r.name for r in op.roles):
            known = ", ".join(r.name for r in op.roles)
            raise EngineError(f"{path}: {where} roles: op {op.name} has no role {role!r} (its roles: {known})")
    return roles


def _tuned_for(cat: Catalogue, table: dict, where: str, path: Path) -> tuple[str, ...]:
    tuned_for = string_list(table, "tuned_for", where, path)
    for core in tuned_for:
        try:
            cat.cpu_part(core)
        except CatalogueError as exc:
            raise EngineError(f"{path}: {where} tuned_for: {exc}") from exc
    if len(tuned_for) > MAX_TUNED:
        raise EngineError(f"{path}: {where} tuned_for names more than {MAX_TUNED} cores")
    return tuned_for


def _same_keys(table: dict, wanted: list[str] | tuple[str, ...], where: str, what: str, path: Path) -> None:
    missing = [k for k in wanted if k not in table]
    extra = [k for k in table if k not in wanted]
    if missing or extra:
        problem = f"lacks {missing[0]}" if missing else f"has {extra[0]}, which is not one of them"
        raise EngineError(f"{path}: {where} {problem}; give exactly {what}: {', '.join(wanted) or 'none'}")


def _feature_set_on(cat: Catalogue, arch: str, requires: tuple[str, ...], where: str, path: Path) -> str:
    """The variant label of `requires` on `arch`, refused when a feature is unknown or missing there."""
    for feat in requires:
        if feat not in cat.features:
            raise EngineError(
                f"{path}: {where}: unknown feature {feat!r}; isaforge's features are: {', '.join(cat.features)}"
            )
        if arch not in cat.features[feat].per_arch:
            raise EngineError(f"{path}: {where}: {feat} does not exist on {arch}; give arch = [...] without {arch}")
    return cat.feature_set_label(arch, requires)


def declared_as_kernels(cat: Catalogue, d: Declared) -> list[Kernel]:
    rest = (d.sources, d.symbol, *d.tile, d.tuned_for, d.members, d.packing, d.roles)
    if not d.arches:
        return [Kernel(d.name, d.op, REFERENCE, REFERENCE_DIR, *rest)]
    return [
        Kernel(d.name, d.op, label, cat.arch(a).kernel_dir, *rest) for a, label in zip(d.arches, d.labels, strict=True)
    ]
