"""The ISA catalogue (isa.toml) and the facts derived from it: features and what they imply, the flags of a variant
per compiler and arch, feature sets, CPU models and parts. load() reads the file (catalogue_reading.py) and checks
it (catalogue_checks.py); the entries are in catalogue_entries.py, and the questions about a source tree's kernels
(which exist, their order, layouts and packers) in kernel_inventory.py, which Catalogue mixes in.

Standard library only: Meson reaches it through codegen.py from a bare source tree, with nothing installed.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from isaforge.catalogue_checks import validate
from isaforge.catalogue_entries import (
    CATALOGUE_PATH,
    DTYPE_KINDS,
    FEATURE_SET_JOIN,
    GENERIC_PACKER,
    HOST_ARCH,
    KERNEL_NAME,
    KERNEL_SUFFIXES,
    LAYOUT_STRING_VERSION,
    PANEL_ALIGN,
    PREFERENCE_SLOTS,
    RANK_STEP,
    REFERENCE,
    SCALABLE_KINDS,
    SME_QEMU_PREFIX,
    VARIANT_DEFINE,
    Arch,
    CatalogueError,
    Compiler,
    CpuPart,
    CpuSpec,
    DType,
    Feature,
    FeatureOnArch,
    KernelName,
    Layout,
    LayoutPackers,
    Op,
    Packer,
    QemuSme,
    Signature,
    Variant,
    c_string,
    fnv1a32,
    parse_kernel_name,
    parse_packer,
    preference_rank,
)
from isaforge.catalogue_reading import (
    read_arches,
    read_compilers,
    read_cpu_parts,
    read_cpu_tables,
    read_dtypes,
    read_features,
    read_layouts,
    read_ops,
    read_property_table,
    read_qemu_sme,
    read_signatures,
    read_variants,
)
from isaforge.kernel_inventory import KernelInventory

__all__ = [
    "CATALOGUE_PATH",
    "DTYPE_KINDS",
    "FEATURE_SET_JOIN",
    "GENERIC_PACKER",
    "HOST_ARCH",
    "KERNEL_NAME",
    "KERNEL_SUFFIXES",
    "LAYOUT_STRING_VERSION",
    "PANEL_ALIGN",
    "PREFERENCE_SLOTS",
    "RANK_STEP",
    "REFERENCE",
    "SCALABLE_KINDS",
    "SME_QEMU_PREFIX",
    "VARIANT_DEFINE",
    "Arch",
    "Catalogue",
    "CatalogueError",
    "Compiler",
    "CpuPart",
    "CpuSpec",
    "DType",
    "Feature",
    "FeatureOnArch",
    "KernelName",
    "Layout",
    "LayoutPackers",
    "Op",
    "Packer",
    "QemuSme",
    "Signature",
    "Variant",
    "c_string",
    "fnv1a32",
    "load",
    "march_key",
    "parse_kernel_name",
    "parse_packer",
    "preference_rank",
]


@dataclass(frozen=True)
class Catalogue(KernelInventory):
    arches: dict[str, Arch]
    compilers: dict[str, Compiler]
    features: dict[str, Feature]
    variants: dict[str, Variant]
    dtypes: dict[str, DType]
    ops: dict[str, Op]  # in isf_op order
    cpus: dict[str, dict[str, tuple[str, ...]]]
    cpu_parts: dict[tuple[int, int], CpuPart] = field(default_factory=dict)  # by (implementer, part)
    layouts: dict[str, LayoutPackers] = field(default_factory=dict)  # the packer registry, by layout name
    qemu_sme: QemuSme | None = None
    cpu_property_off: dict[str, tuple[str, ...]] = field(default_factory=dict)  # under the arch's QEMU
    # Feature sets derived so far (variant() of "fp16+dotprod"): asked for per kernel in sorts and tables.
    _feature_sets: dict[str, Variant] = field(default_factory=dict, compare=False, repr=False)

    # -- lookups with one-line errors -------------------------------------------------------------------------
    def arch(self, name: str) -> Arch:
        if name not in self.arches:
            raise CatalogueError(f"unknown arch {name!r}; choose one of: {', '.join(self.arches)}")
        return self.arches[name]

    def arch_by_triple(self, triple: str) -> Arch:
        for arch in self.arches.values():
            if triple in (arch.triple, arch.name):
                return arch
        known = ", ".join(a.triple for a in self.arches.values())
        raise CatalogueError(f"unknown target {triple!r}; choose one of: {known}")

    def compiler(self, name: str) -> Compiler:
        if name not in self.compilers:
            raise CatalogueError(f"unknown compiler {name!r}; choose one of: {', '.join(self.compilers)}")
        return self.compilers[name]

    def cpu_features(self, arch: str, cpu: str) -> tuple[str, ...]:
        """The features of model `cpu` ([`qemu-sme:`]model[,properties]): the model's, less what its
        `<property>=off`s take away with everything that implies it (`max,sme=off` has no SME of any kind)."""
        spec = CpuSpec.parse(cpu)
        models, off = self.cpus.get(arch, {}), self.cpu_property_off
        if spec.sme_qemu:
            assert self.qemu_sme is not None
            models, off = self.qemu_sme.cpus.get(arch, {}), self.qemu_sme.property_off
        if spec.model not in models:
            prefix = SME_QEMU_PREFIX if spec.sme_qemu else ""
            known = ", ".join(prefix + m for m in models) or "none"
            raise CatalogueError(f"unknown CPU model {prefix + spec.model!r} for {arch}; choose one of: {known}")
        gone = {f for prop in spec.switched_off() for f in off.get(prop, ())}
        return tuple(f for f in models[spec.model] if not self.implied_closure(arch, f) & gone)

    def sme_qemu_cpus(self, arch: str) -> list[str]:
        """The models run under the SME2-capable QEMU on `arch`, as written: `qemu-sme:max`."""
        models = self.qemu_sme.cpus.get(arch, {}) if self.qemu_sme else {}
        return [SME_QEMU_PREFIX + m for m in models]

    def arch_of_cpu(self, cpu: str) -> list[str]:
        return [arch for arch, models in self.cpus.items() if cpu in models]

    def cpu_part(self, name: str) -> CpuPart:
        for part in self.cpu_parts.values():
            if part.name == name:
                return part
        known = ", ".join(p.name for p in self.cpu_parts.values())
        raise CatalogueError(f"unknown CPU part {name!r}; choose one of: {known}")

    def cpu_part_features(self, arch: str, part: CpuPart) -> tuple[str, ...]:
        """What the MIDR fallback detects on `arch` for a core of `part`: its features that exist on `arch`."""
        return tuple(f for f in part.features if arch in self.features[f].per_arch)

    # -- features ---------------------------------------------------------------------------------------------
    def arch_features(self, arch: str) -> list[Feature]:
        return [f for f in self.features.values() if arch in f.per_arch]

    def implied_closure(self, arch: str, name: str) -> set[str]:
        """`name` and every feature it cannot exist without, on `arch`."""
        seen: set[str] = set()
        todo = [name]
        while todo:
            cur = todo.pop()
            if cur in seen:
                continue
            seen.add(cur)
            todo.extend(self.features[cur].per_arch[arch].implies)
        return seen

    def mask(self, names: list[str] | tuple[str, ...] | set[str]) -> int:
        return sum(self.features[n].mask for n in set(names))

    def names(self, mask: int) -> list[str]:
        return [f.name for f in sorted(self.features.values(), key=lambda f: f.bit) if mask & f.mask]

    # -- variants ---------------------------------------------------------------------------------------------
    def arch_variants(self, arch: str) -> list[Variant]:
        return sorted((v for v in self.variants.values() if arch in v.arches), key=lambda v: v.rank)

    def variant(self, name: str) -> Variant:
        """A variant of the catalogue, or a feature set (`fp16+dotprod`): the variant derived from those features."""
        if name in self.variants:
            return self.variants[name]
        if FEATURE_SET_JOIN in name or name in self.features:  # a sub-feature alone (sme_f16f16) is a set of one
            if name not in self._feature_sets:
                self._feature_sets[name] = self._feature_set(name)
            return self._feature_sets[name]
        raise CatalogueError(
            f"unknown variant {name!r}; choose one of: {', '.join(self.variants)}, or features joined with "
            f"{FEATURE_SET_JOIN!r} (fp16{FEATURE_SET_JOIN}dotprod)"
        )

    def _feature_set(self, label: str) -> Variant:
        """The variant of a set of features, derived from the catalogue's own variants and never listed: flags from
        the features (variant_flags), built where all of them exist, probed with each feature's variant's probe, and
        ranked just above the most preferred of those variants (one step per other feature), so that a kernel needing
        more features is preferred to one needing fewer, and below the catalogue's next variant."""
        names = label.split(FEATURE_SET_JOIN)
        for name in names:
            if name not in self.features:
                raise CatalogueError(
                    f"unknown feature {name!r} in {label!r}; a feature set joins catalogue features with "
                    f"{FEATURE_SET_JOIN!r}, from: {', '.join(self.features)}"
                )
        if len(set(names)) != len(names):
            raise CatalogueError(f"feature set {label!r} names a feature twice")
        parts = [self._variant_of_feature(name) for name in names]
        arches = tuple(a for a in (*self.arches, HOST_ARCH) if all(a in p.arches for p in parts))
        top = max(parts, key=lambda p: p.rank)
        owners = {p.name: p for p in parts}.values()  # sme2+sme_f16f16: both probed by sme2's, once
        probes = [p.probe.replace(" probe(", f" probe_{p.name}(") for p in owners if p.probe]
        return Variant(
            name=label,
            requires=tuple(names),
            arches=arches,
            probe="\n".join(probes),
            rank=top.rank + sum(name not in top.requires for name in names),
            scalable=next((p.scalable for p in parts if p.scalable), ""),
            asm_probe={},
        )

    def _variant_of_feature(self, feature: str) -> Variant:
        """The variant that builds and probes `feature`: its own, else (a sub-feature such as sme_f16f16) the most
        preferred variant of what it implies; its flags, which carry the feature's extension, are probed with it."""
        for v in self.variants.values():
            if v.requires == (feature,):
                return v
        implied = {
            f for arch, spec in self.features[feature].per_arch.items() for f in self.implied_closure(arch, feature)
        }
        owners = [v for v in self.variants.values() if len(v.requires) == 1 and v.requires[0] in implied - {feature}]
        if not owners:
            raise CatalogueError(f"feature {feature} has no variant of its own in isa.toml to build and probe it with")
        return max(owners, key=lambda v: v.rank)

    def feature_set_label(self, arch: str, features: list[str] | tuple[str, ...]) -> str:
        """The one name of a set of features on `arch`: the catalogue variant whose features (with all they imply)
        are the same, else the features no other of the set implies, joined in bit order."""
        closure: set[str] = set()
        for feat in features:
            closure |= self.implied_closure(arch, feat)
        for v in self.arch_variants(arch):
            if v.name != REFERENCE and self.variant_features(arch, v.name) == closure:
                return v.name
        implied = {i for f in closure for i in self.implied_closure(arch, f) if i != f}
        minimal = sorted(closure - implied, key=lambda f: self.features[f].bit)
        return FEATURE_SET_JOIN.join(minimal) if minimal else REFERENCE

    def variant_features(self, arch: str, variant: str) -> set[str]:
        """Everything a variant's code may use: its required features and all they imply."""
        out: set[str] = set()
        for feat in self.variant(variant).requires:
            out |= self.implied_closure(arch, feat)
        return out

    def variant_flags(self, arch_name: str, compiler: str, variant: str) -> list[str]:
        """The compile flags of a variant: the baseline for `ref`/`neon`-level code, else one -march with the
        variant's extensions and nothing else, so no other feature leaks into its objects. The baseline's compiler
        extras (the __fp16 storage format) come along: a variant's objects share the baseline's types and ABI."""
        arch = self.arch(arch_name)
        feats = [self.features[n] for n in sorted(self.variant_features(arch_name, variant))]
        levels = {f.per_arch[arch_name].march for f in feats}
        exts = [f.per_arch[arch_name].ext for f in feats if f.per_arch[arch_name].ext]
        if not exts:
            return self.baseline_flags(arch_name, compiler)
        march = max(levels, key=march_key)
        flags = [f"-march={march}{''.join(exts)}", *arch.variant_extra, *arch.baseline_extra.get(compiler, ())]
        for f in feats:
            flags += f.per_arch[arch_name].extra.get(compiler, ())
        return list(dict.fromkeys(flags))

    def baseline_flags(self, arch: str, compiler: str) -> list[str]:
        if arch == HOST_ARCH:
            return []
        spec = self.arch(arch)
        return [*spec.baseline, *spec.baseline_extra.get(compiler, ())]

    def feature_flags_allow(self, arch: str, flags: list[str]) -> set[str]:
        """The features a compile command's flags enable: the reverse of variant_flags, used by check-isolation."""
        march = ""
        for flag in flags:
            if flag.startswith("-march="):
                march = flag.removeprefix("-march=")
        exts = set(march.split("+")[1:])
        out: set[str] = set()
        for f in self.arch_features(arch):
            spec = f.per_arch[arch]
            ext = spec.ext.lstrip("+")
            # A feature with neither an extension nor implications (neon) comes with the baseline.
            if (ext and ext in exts) or (not ext and not spec.implies):
                out |= self.implied_closure(arch, f.name)
        # A feature without an extension of its own (svei8mm) is enabled by what it implies, and only by all of it;
        # repeat until stable, as one such feature may imply another.
        derived = [f.name for f in self.arch_features(arch) if self.is_derived(arch, f.name)]
        changed = True
        while changed:
            changed = False
            for name in derived:
                if name not in out and set(self.features[name].per_arch[arch].implies) <= out:
                    out.add(name)
                    changed = True
        return out

    def is_derived(self, arch: str, name: str) -> bool:
        """A feature that no flag enables by itself: no extension of its own, present when all it implies is."""
        spec = self.features[name].per_arch[arch]
        return not spec.ext and bool(spec.implies)

    # -- ops --------------------------------------------------------------------------------------------------
    def plain_ops(self) -> list[str]:
        """The ops with a typed one-call function (the others run through plans only)."""
        return [name for name, op in self.ops.items() if op.plain]


def march_key(march: str) -> tuple[int, int]:
    """Orders -march levels: armv7-a < armv8-a < armv8.2-a < armv9-a."""
    m = re.match(r"armv(\d+)(?:\.(\d+))?-a", march)
    return (int(m[1]), int(m[2] or 0)) if m else (0, 0)


@cache
def load(path: Path = CATALOGUE_PATH) -> Catalogue:
    raw = tomllib.loads(path.read_text())
    arches = read_arches(raw["arch"])
    dtypes = read_dtypes(raw["dtype"])
    cat = Catalogue(
        arches,
        read_compilers(raw["compiler"]),
        read_features(raw["feature"], arches),
        read_variants(raw["variant"]),
        dtypes,
        read_ops(raw["op"], dtypes, read_signatures(raw["signature"])),
        read_cpu_tables(raw["cpu"]),
        cpu_parts=read_cpu_parts(raw.get("cpu_part", {})),
        layouts=read_layouts(raw.get("layout", {})),
        qemu_sme=read_qemu_sme(raw["qemu_sme"]),
        cpu_property_off=read_property_table(raw.get("cpu_property_off", {})),
    )
    validate(cat)
    return cat
