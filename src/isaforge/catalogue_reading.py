"""Reading isa.toml's tables into the catalogue's typed entries (catalogue_entries.py), one function per table;
load() in catalogue.py puts them together and checks the whole. A malformed entry (an unknown dtype of an op, a
`scalable` that is no kind, a cpu_part key that is no MIDR) is refused here with a one-line CatalogueError.

Standard library only: Meson reaches it through codegen.py from a bare source tree, with nothing installed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from isaforge.catalogue_entries import (
    RANK_STEP,
    SCALABLE_KINDS,
    Arch,
    CatalogueError,
    Compiler,
    CpuPart,
    DType,
    Feature,
    FeatureOnArch,
    LayoutPackers,
    Op,
    QemuSme,
    Signature,
    Variant,
    parse_packer,
)

Table = dict[str, Any]  # one [kind.name] table of the TOML file


def read_arches(raw: dict[str, Table]) -> dict[str, Arch]:
    return {
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
        for name, a in raw.items()
    }


def read_compilers(raw: dict[str, Table]) -> dict[str, Compiler]:
    return {
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
        for name, c in raw.items()
    }


def read_features(raw: dict[str, Table], arches: dict[str, Arch]) -> dict[str, Feature]:
    """The features, each with its facts on the catalogue's arches only."""
    features = {}
    for name, f in raw.items():
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
    return features


def read_variants(raw: dict[str, Table]) -> dict[str, Variant]:
    """The variants, ranked by their order in the file (dispatch prefers the later ones)."""
    return {
        name: Variant(
            name=name,
            requires=tuple(v["requires"]),
            arches=tuple(v["arches"]),
            probe=v.get("probe", ""),
            rank=rank * RANK_STEP,
            scalable=_scalable(name, v.get("scalable", False)),
            asm_probe=dict(v.get("asm_probe", {})),
            prefer=tuple(v.get("prefer", ())),
            tail_rows=_tail_rows(v.get("tail_rows", {})),
            column_margin=v.get("column_margin", 0),
        )
        for rank, (name, v) in enumerate(raw.items())
    }


def _tail_rows(raw: Table) -> tuple[tuple[str, str, int], ...]:
    """`kernel = rows` (every arch) or `kernel = { arch = rows, … }`, as (kernel, arch or "", rows)."""
    rows: list[tuple[str, str, int]] = []
    for name, value in raw.items():
        per_arch = value.items() if isinstance(value, dict) else [("", value)]
        rows += [(name, arch, n) for arch, n in per_arch]
    return tuple(sorted(rows))


def read_dtypes(raw: dict[str, Table]) -> dict[str, DType]:
    return {name: DType(name, d["c"], d["bytes"], d["numpy"], d["kind"], d.get("bits", 0)) for name, d in raw.items()}


def read_signatures(raw: dict[str, Table]) -> dict[str, Signature]:
    return {name: Signature(name, **sig) for name, sig in raw.items()}


def read_ops(raw: dict[str, Table], dtypes: dict[str, DType], signatures: dict[str, Signature]) -> dict[str, Op]:
    """The ops in isf_op order (their `index`)."""
    return {name: _op(name, o, dtypes, signatures) for name, o in sorted(raw.items(), key=lambda i: i[1]["index"])}


def read_layouts(raw: dict[str, Table]) -> dict[str, LayoutPackers]:
    return {
        name: LayoutPackers(name, parse_packer(name, "a", e["a"]), parse_packer(name, "b", e["b"]))
        for name, e in raw.items()
    }


def read_qemu_sme(sme: Table) -> QemuSme:
    return QemuSme(Path(sme["dir"]), tuple(int(p) for p in sme["min_version"].split(".")), sme["suite"],
                   sme["package"], tuple(sme["binaries"]), read_cpu_tables(sme.get("cpu", {})),
                   read_property_table(sme.get("property_off", {})))  # fmt: skip


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


def read_cpu_tables(raw: dict[str, dict[str, list[str]]]) -> dict[str, dict[str, tuple[str, ...]]]:
    return {arch: {cpu: tuple(feats) for cpu, feats in models.items()} for arch, models in raw.items()}


def read_property_table(raw: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    return {prop: tuple(feats) for prop, feats in raw.items()}


# "<implementer>:<part>" as Linux prints them: "0x%02x" and "0x%03x".
CPU_PART_KEY = re.compile(r"^0x(?P<implementer>[0-9a-f]{2}):0x(?P<part>[0-9a-f]{3})$")


def read_cpu_parts(raw: dict[str, dict]) -> dict[tuple[int, int], CpuPart]:
    parts: dict[tuple[int, int], CpuPart] = {}
    for key, entry in raw.items():
        m = CPU_PART_KEY.match(key)
        if not m:
            raise CatalogueError(f'cpu_part {key!r}: the key must be <implementer>:<part> like "0x41:0xd05"')
        l1d = entry.get("l1d_kib", 0)
        if type(l1d) is not int or l1d < 0 or l1d & (l1d - 1):
            raise CatalogueError(f"cpu_part {key!r}: l1d_kib must be a power of two (KiB), not {l1d!r}")
        part = CpuPart(int(m["implementer"], 16), int(m["part"], 16), entry["name"], tuple(entry["features"]), l1d)
        parts[(part.implementer, part.part)] = part
    return parts
