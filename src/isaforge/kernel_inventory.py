"""libisaforge's kernel inventory as the catalogue sees it: the kernels of a source tree (kernels/<arch>/<variant>/,
named by the grammar of docs/kernel_names.md), the ops that run other ops' kernels, dispatch's order among them, and
the layout and packers each one reads. The ISA facts it answers from (ops, variants, their features, the packer
registry) are catalogue.py's; the entries both use are in catalogue_entries.py.

Standard library only: Meson reaches it through codegen.py from a bare source tree, with nothing installed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path

from isaforge.catalogue_entries import (
    HOST_ARCH,
    KERNEL_SUFFIXES,
    REFERENCE,
    Arch,
    CatalogueError,
    KernelName,
    Layout,
    LayoutPackers,
    Op,
    Variant,
    parse_kernel_name,
    preference_rank,
)


class KernelInventory(ABC):
    """The catalogue's questions about a source tree's kernels, mixed into catalogue.py's Catalogue, which provides
    the facts declared below."""

    ops: dict[str, Op]
    layouts: dict[str, LayoutPackers]

    @abstractmethod
    def arch(self, name: str) -> Arch: ...

    @abstractmethod
    def variant(self, name: str) -> Variant: ...

    @abstractmethod
    def variant_features(self, arch: str, variant: str) -> set[str]: ...

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
