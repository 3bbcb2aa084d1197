"""The ISA catalogue (isa.toml) and everything derived from it: loading, checking, and the questions that span entries
(flags of a variant, kernels of a tree, dispatch preference, packers of a layout). The entries are in
catalogue_entries.py.

Standard library only: Meson reaches it through codegen.py from a bare source tree, with nothing installed.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from isaforge.catalogue_entries import (
    CATALOGUE_PATH,
    COMPILERS,
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

__all__ = [
    "CATALOGUE_PATH",
    "COMPILERS",
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
class Catalogue:
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

    # -- kernels ----------------------------------------------------------------------------------------------
    def kernel_dir(self, source_root: Path, arch: str, variant: str) -> Path:
        if variant == REFERENCE:
            return source_root / "kernels" / "reference"
        return source_root / "kernels" / self.arch(arch).kernel_dir / variant

    def kernel_sources(self, source_root: Path, arch: str, variant: str) -> list[Path]:
        folder = self.kernel_dir(source_root, arch, variant)
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.iterdir() if p.suffix in KERNEL_SUFFIXES)

    def kernels(self, source_root: Path, arch: str, variants: list[str]) -> list[KernelName]:
        out = []
        for variant in variants:
            for path in self.kernel_sources(source_root, arch, variant):
                kernel = parse_kernel_name(path.stem, self.ops)
                if kernel.variant != variant:
                    raise CatalogueError(f"{path}: kernel variant {kernel.variant!r} is not its folder's {variant!r}")
                out.append(kernel)
        self._check_preferences(out)
        widened = out + self._widened_kernels(out)
        return widened + self._shared_kernels(widened)

    def _shared_kernels(self, files: list[KernelName]) -> list[KernelName]:
        """Ops that run another op's kernels as they are, under the same names (`kernels` in [op.*])."""
        return [
            KernelName(k.name, op.name, k.mr, k.nr, k.kr, k.variant, shares=k.op)
            for op in self.ops.values()
            if op.kernels_of
            for k in files
            if k.op == op.kernels_of
        ]

    def plain_ops(self) -> list[str]:
        """The ops with a typed one-call function (the others run through plans only)."""
        return [name for name, op in self.ops.items() if op.plain]

    def _check_preferences(self, files: list[KernelName]) -> None:
        """Several kernels of one op in one variant need a declared order (`prefer`): dispatch must not guess."""
        groups: dict[tuple[str, str], list[str]] = {}
        for k in files:
            groups.setdefault((k.op, k.variant), []).append(k.name)
        for (op, variant), names in groups.items():
            unordered = [n for n in names if n not in self.variant(variant).prefer]
            if len(names) > 1 and unordered:
                raise CatalogueError(
                    f"variant {variant} has {len(names)} {op} kernels ({', '.join(sorted(names))}): list them, most "
                    f"preferred first, in `prefer` of [variant.{variant}] in isa.toml"
                )

    def preference(self, kernel: KernelName) -> int:
        """Dispatch's order: by variant, then by the variant's `prefer` list (higher is preferred)."""
        variant = self.variant(kernel.variant)
        return preference_rank(variant.rank, variant.prefer, kernel.runs or kernel.name)

    def _widened_kernels(self, files: list[KernelName]) -> list[KernelName]:
        """Ops that a variant runs through another op's kernels on widened panels (`widened` in [op.*])."""
        out = []
        for op in self.ops.values():
            for k in files:
                if op.widened.get(k.variant) == k.op:
                    name = f"{op.name}_{k.mr}x{k.nr}{f'x{k.kr}' if k.kr > 1 else ''}_{k.variant}"
                    out.append(KernelName(name, op.name, k.mr, k.nr, k.kr, k.variant, runs=k.name))
        return out

    # -- packing layouts ---------------------------------------------------------------------------------------
    def layout(self, k: KernelName) -> Layout:
        """The layout a kernel reads, from its name and catalogue entries (the `runs` kernel's op for widened)."""
        if k.shares:
            return self.layout(KernelName(k.name, k.shares, k.mr, k.nr, k.kr, k.variant))
        source = self.ops[k.op].panel_source
        panel = self.ops[parse_kernel_name(k.runs).op].panel_source if k.runs else source
        return Layout(source, panel, k.mr, k.nr, k.kr, self.variant(k.variant).scalable)

    def packers(self, k: KernelName) -> LayoutPackers:
        """The registry's packers of the kernel's layout; a missing entry names the kernel, the layout and the fix."""
        layout = self.layout(k)
        entry = self.layouts.get(layout.name)
        if entry is None:
            raise CatalogueError(
                f"kernel {k.name} reads layout {layout.describe()}, which has no packer: add "
                f'"{layout.name}" = {{ a = "<packer>", b = "<packer>" }} under [layout] in src/isaforge/isa.toml, '
                f'each packer "generic" (kernels/runtime/pack.c only) or "<variant>:<family>" of '
                f"kernels/pack/<variant>/ (a new family there if none fits)"
            )
        return entry

    def check_packers(self, arch: str, k: KernelName) -> LayoutPackers:
        """The kernel's packers, which must run wherever the kernel runs: their variant's features are the
        kernel's variant's or fewer, and the variant exists on `arch`."""
        entry = self.packers(k)
        for side, packer in (("a", entry.a), ("b", entry.b)):
            if packer.generic:
                continue
            if arch not in self.variant(packer.variant).arches:
                raise CatalogueError(
                    f"kernel {k.name}: layout {entry.name}'s {side} packer {packer.variant}:{packer.family} is of a "
                    f"variant not built for {arch}"
                )
            if arch != HOST_ARCH and not self.variant_features(arch, packer.variant) <= self.variant_features(
                arch, k.variant
            ):
                raise CatalogueError(
                    f"kernel {k.name}: layout {entry.name}'s {side} packer {packer.variant}:{packer.family} needs "
                    f"features the {k.variant} variant does not have"
                )
        return entry

    def best_kernel(
        self, source_root: Path, arch: str, built_variants: list[str], active: set[str], op: str
    ) -> str | None:
        """What dispatch must choose: the most preferred built kernel of `op` whose features are all active."""
        fits = [
            k
            for k in self.kernels(source_root, arch, built_variants)
            if k.op == op and self.variant_features(arch, k.variant) <= active
        ]
        return max(fits, key=self.preference).name if fits else None


def march_key(march: str) -> tuple[int, int]:
    """Orders -march levels: armv7-a < armv8-a < armv8.2-a < armv9-a."""
    m = re.match(r"armv(\d+)(?:\.(\d+))?-a", march)
    return (int(m[1]), int(m[2] or 0)) if m else (0, 0)


@cache
def load(path: Path = CATALOGUE_PATH) -> Catalogue:
    raw = tomllib.loads(path.read_text())
    arches = {
        name: Arch(
            name=name,
            triple=a["triple"],
            kernel_dir=a["kernel_dir"],
            meson_cpu_family=a["meson_cpu_family"],
            meson_cpu=a["meson_cpu"],
            qemu=a["qemu"],
            sysroot=a["sysroot"],
            baseline=tuple(a["baseline"]),
            baseline_extra={k: tuple(v) for k, v in a.get("baseline_extra", {}).items()},
            variant_extra=tuple(a["variant_extra"]),
            assembler_all=tuple(a["assembler_all"]),
            debian_packages=tuple(a["debian_packages"]),
            judge=a.get("judge", "gnu"),
        )
        for name, a in raw["arch"].items()
    }
    compilers = {
        name: Compiler(
            name=name,
            c=tuple(c["c"]),
            ar=c["ar"],
            strip=c["strip"],
            link_args=tuple(c.get("link_args", ())),
            linker=c.get("linker"),
            debian_packages=tuple(c["debian_packages"]),
            objdump=c.get("objdump", ""),
        )
        for name, c in raw["compiler"].items()
    }
    features = {}
    for name, f in raw["feature"].items():
        per_arch = {
            arch: FeatureOnArch(
                march=spec["march"],
                ext=spec["ext"],
                extra={k: tuple(v) for k, v in spec.get("extra", {}).items()},
                hwcap=tuple((int(w), int(b)) for w, b in spec["hwcap"]),
                cpuinfo=tuple(spec["cpuinfo"]),
                implies=tuple(spec["implies"]),
            )
            for arch, spec in f.items()
            if arch in arches
        }
        features[name] = Feature(name=name, bit=f["bit"], title=f["title"], per_arch=per_arch)
    variants = {
        name: Variant(
            name=name,
            requires=tuple(v["requires"]),
            arches=tuple(v["arches"]),
            probe=v.get("probe", ""),
            rank=rank * RANK_STEP,
            scalable=_scalable(name, v.get("scalable", False)),
            asm_probe=dict(v.get("asm_probe", {})),
            prefer=tuple(v.get("prefer", ())),
        )
        for rank, (name, v) in enumerate(raw["variant"].items())
    }
    dtypes = {
        name: DType(name, d["c"], d["bytes"], d["numpy"], d["kind"], d.get("bits", 0))
        for name, d in raw["dtype"].items()
    }
    signatures = {name: Signature(name, **sig) for name, sig in raw["signature"].items()}
    ops = {name: _op(name, o, dtypes, signatures) for name, o in sorted(raw["op"].items(), key=lambda i: i[1]["index"])}
    cpus = _cpu_tables(raw["cpu"])
    cpu_parts = _load_cpu_parts(raw.get("cpu_part", {}))
    layouts = {
        name: LayoutPackers(name, parse_packer(name, "a", e["a"]), parse_packer(name, "b", e["b"]))
        for name, e in raw.get("layout", {}).items()
    }
    sme = raw["qemu_sme"]
    qemu_sme = QemuSme(Path(sme["dir"]), tuple(int(p) for p in sme["min_version"].split(".")), sme["suite"],
                       sme["package"], tuple(sme["binaries"]), _cpu_tables(sme.get("cpu", {})),
                       _property_table(sme.get("property_off", {})))  # fmt: skip
    cat = Catalogue(
        arches,
        compilers,
        features,
        variants,
        dtypes,
        ops,
        cpus,
        cpu_parts=cpu_parts,
        layouts=layouts,
        qemu_sme=qemu_sme,
        cpu_property_off=_property_table(raw.get("cpu_property_off", {})),
    )
    _validate(cat)
    return cat


def _op(name: str, raw: dict, dtypes: dict[str, DType], signatures: dict[str, Signature]) -> Op:
    def known(table: dict, key: str, what: str) -> Any:
        if raw[key] not in table:
            raise CatalogueError(f"op {name}: unknown {what} {raw[key]!r} for {key!r} (known: {', '.join(table)})")
        return table[raw[key]]

    return Op(
        name=name,
        index=raw["index"],
        signature=known(signatures, "signature", "signature"),
        a=known(dtypes, "a", "dtype"),
        b=known(dtypes, "b", "dtype"),
        c=known(dtypes, "c", "dtype"),
        acc=known(dtypes, "acc", "dtype"),
        doc=raw["doc"],
        narrow_accumulation=tuple(raw.get("narrow_accumulation", ())),
        widened=dict(raw.get("widened", {})),
        kernels_of=raw.get("kernels", ""),
    )


def _scalable(variant: str, raw: bool | str) -> str:
    """`scalable = true` (SVE's vector length) or "streaming" (SME's)."""
    kind = "sve" if raw is True else "" if raw is False else raw
    if kind not in SCALABLE_KINDS:
        raise CatalogueError(f'variant {variant}: scalable is true, false or "streaming", not {raw!r}')
    return kind


def _cpu_tables(raw: dict[str, dict[str, list[str]]]) -> dict[str, dict[str, tuple[str, ...]]]:
    return {arch: {cpu: tuple(feats) for cpu, feats in models.items()} for arch, models in raw.items()}


def _property_table(raw: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    return {prop: tuple(feats) for prop, feats in raw.items()}


# "<implementer>:<part>" as Linux prints them: "0x%02x" and "0x%03x".
CPU_PART_KEY = re.compile(r"^0x(?P<implementer>[0-9a-f]{2}):0x(?P<part>[0-9a-f]{3})$")


def _load_cpu_parts(raw: dict[str, dict]) -> dict[tuple[int, int], CpuPart]:
    parts: dict[tuple[int, int], CpuPart] = {}
    for key, entry in raw.items():
        m = CPU_PART_KEY.match(key)
        if not m:
            raise CatalogueError(f'cpu_part {key!r}: the key must be <implementer>:<part> like "0x41:0xd05"')
        part = CpuPart(int(m["implementer"], 16), int(m["part"], 16), entry["name"], tuple(entry["features"]))
        parts[(part.implementer, part.part)] = part
    return parts


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


def _validate(cat: Catalogue) -> None:
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


def _validate_layouts(cat: Catalogue) -> None:
    for entry in cat.layouts.values():
        for packer in (entry.a, entry.b):
            if not packer.generic and packer.variant not in cat.variants:
                raise CatalogueError(f"[layout] {entry.name!r}: packer of unknown variant {packer.variant!r}")
