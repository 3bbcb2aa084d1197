"""The checks of the ISA catalogue against itself: every entry names what exists (features, variants, dtypes), bits
and indices are unique and gapless, and CPU tables list only what their cores can have. load() in catalogue.py runs
validate() on every catalogue it reads; each failure is a one-line CatalogueError naming the entry.

Standard library only: Meson reaches it through codegen.py from a bare source tree, with nothing installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from isaforge.catalogue_entries import (
    DTYPE_KINDS,
    HOST_ARCH,
    PREFERENCE_SLOTS,
    SME_QEMU_PREFIX,
    CatalogueError,
    Feature,
    QemuSme,
)

if TYPE_CHECKING:  # catalogue.py imports this module to validate what it loads
    from isaforge.catalogue import Catalogue


def validate(cat: Catalogue) -> None:
    """Refuse a catalogue inconsistent with itself, naming the entry at fault: load() runs this on every file."""
    bits = [f.bit for f in cat.features.values()]
    if len(set(bits)) != len(bits):
        raise CatalogueError("two features share a bit")
    for arch in cat.arches.values():
        if arch.judge not in ("gnu", "llvm"):
            raise CatalogueError(f"arch {arch.name}: judge {arch.judge!r} is neither gnu nor llvm")
    for v in cat.variants.values():
        for feat in v.requires:
            if feat not in cat.features:
                raise CatalogueError(f"variant {v.name} requires unknown feature {feat}")
            for arch in v.arches:
                if arch != HOST_ARCH and arch not in cat.features[feat].per_arch:
                    raise CatalogueError(f"variant {v.name} is built for {arch}, which lacks {feat}")
    _validate_ops(cat)
    _validate_layouts(cat)
    _validate_cpus(cat)
    _validate_cpu_parts(cat)


def _validate_ops(cat: Catalogue) -> None:
    if sorted(o.index for o in cat.ops.values()) != list(range(len(cat.ops))):
        raise CatalogueError("op indices must be 0, 1, … without gaps (they are isf_op values)")
    for o in cat.ops.values():
        if o.kernels_of and (o.kernels_of not in cat.ops or cat.ops[o.kernels_of].acc.kind != "int" or o.plain):
            raise CatalogueError(f"op {o.name}: `kernels` must name an int32-summing op, and the op run through plans")
        if o.a.bytes != o.b.bytes and not o.kernels_of and o.b.element_bits >= 8:
            raise CatalogueError(f"op {o.name}: A and B elements differ in size, which the driver's packing cannot")
    for d in cat.dtypes.values():
        if d.kind not in DTYPE_KINDS:
            raise CatalogueError(f"dtype {d.name}: kind {d.kind!r} is not one of {', '.join(DTYPE_KINDS)}")
    for v in cat.variants.values():
        if len(v.prefer) >= PREFERENCE_SLOTS:
            raise CatalogueError(f"variant {v.name}: `prefer` lists more than {PREFERENCE_SLOTS - 1} kernels")
        for name, arch, rows in v.tail_rows:
            if name not in v.prefer or not isinstance(rows, int) or rows < 1 or (arch and arch not in v.arches):
                given = f"{rows!r} on {arch}" if arch else repr(rows)
                raise CatalogueError(
                    f"variant {v.name}: `tail_rows` gives {name} {given}: name a kernel of its `prefer` list and "
                    "a number of rows of at least 1, for every arch or per arch of the variant's `arches`"
                )
        margin = v.column_margin
        if isinstance(margin, bool) or not isinstance(margin, int) or not 0 <= margin < 100:
            raise CatalogueError(
                f"variant {v.name}: `column_margin` is {v.column_margin!r}: give a whole percentage from 0 to 99"
            )


def _validate_layouts(cat: Catalogue) -> None:
    for entry in cat.layouts.values():
        for packer in (entry.a, entry.b):
            if not packer.generic and packer.variant not in cat.variants:
                raise CatalogueError(f"[layout] {entry.name!r}: packer of unknown variant {packer.variant!r}")


def _validate_cpus(cat: Catalogue) -> None:
    sme = cat.qemu_sme or QemuSme(Path(), (), "", "", ())
    for prefix, tables in (("", cat.cpus), (SME_QEMU_PREFIX, sme.cpus)):
        for arch, models in tables.items():
            for cpu, feats in models.items():
                for feat in feats:
                    if arch not in cat.features.get(feat, Feature("", 0, "", {})).per_arch:
                        raise CatalogueError(f"cpu {prefix}{cpu} ({arch}) lists unknown feature {feat}")
    for where, table in (("cpu_property_off", cat.cpu_property_off), ("qemu_sme.property_off", sme.property_off)):
        for prop, feats in table.items():
            if unknown := set(feats) - set(cat.features):
                raise CatalogueError(f"[{where}] {prop} lists unknown feature {', '.join(sorted(unknown))}")
    for f in cat.features.values():
        for arch, spec in f.per_arch.items():
            # AT_HWCAP/AT_HWCAP2 are unsigned long: 64 bits on aarch64, 32 on arm.
            width = 64 if arch == "aarch64" else 32
            if any(word not in (1, 2) or not 0 <= bit < width for word, bit in spec.hwcap):
                raise CatalogueError(f"feature {f.name} ({arch}): hwcap needs [1|2, bit] with bit < {width}")


def _validate_cpu_parts(cat: Catalogue) -> None:
    names = [p.name for p in cat.cpu_parts.values()]
    if len(set(names)) != len(names):
        raise CatalogueError("two cpu_part entries share a name")
    for part in cat.cpu_parts.values():
        for feat in part.features:
            if feat not in cat.features:
                raise CatalogueError(f"cpu_part {part.key} ({part.name}) lists unknown feature {feat}")
        # The runtime drops a feature whose implied ones are missing: a part listing sve without fp16 would lose it
        # silently. Refuse it here instead.
        for arch in cat.arches:
            listed = set(cat.cpu_part_features(arch, part))
            for feat in listed:
                missing = cat.implied_closure(arch, feat) - listed
                if missing:
                    raise CatalogueError(
                        f"cpu_part {part.key} ({part.name}) lists {feat} without {', '.join(sorted(missing))} ({arch})"
                    )
