"""The tables of the docs that the catalogue and the kernel files decide, rendered from them so they cannot drift.

A generated block sits in a page between `<!-- generated: NAME … -->` and `<!-- end: NAME -->`.
`python -m isaforge.doctables` rewrites every block in place; with `--check` it only names the stale ones (exit 1),
which tests/test_doctables.py does on every run.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

from isaforge.catalogue import Catalogue, KernelName, load

CHECKOUT = Path(__file__).resolve().parents[2]  # the docs live in the source checkout only, never in a wheel


def _tile(k: KernelName) -> str:
    return f"{k.mr}x{k.nr}" + (f"x{k.kr}" if k.kr > 1 else "")


def _kernel_cell(cat: Catalogue, kernels: list[KernelName], arch: str, op: str) -> str:
    if cat.ops[op].kernels_of:
        return f"those of `{cat.ops[op].kernels_of}`"
    tiles: dict[str, list[str]] = {v.name: [] for v in cat.arch_variants(arch)}
    for k in kernels:
        if k.op == op:
            tiles[k.variant].append(_tile(k))
    widened = cat.ops[op].widened
    cells = [
        f"{variant} {', '.join(found)}" + (f" (`{widened[variant]}`'s, widened)" if variant in widened else "")
        for variant, found in tiles.items()
        if found
    ]
    return "; ".join(cells) or "—"


def kernel_table(cat: Catalogue, root: Path) -> str:
    """Op × arch: each variant's kernels (MRxNR[xKR] tiles) as the kernel files and the catalogue's rules give them."""
    arches = list(cat.arches)
    kernels = {a: cat.kernels(root, a, [v.name for v in cat.arch_variants(a)]) for a in arches}
    rows = ["| op | what | " + " | ".join(arches) + " |", "|---|---|" + "---|" * len(arches)]
    for name, op in cat.ops.items():
        cells = " | ".join(_kernel_cell(cat, kernels[a], a, name) for a in arches)
        rows.append(f"| `{name}` | {op.doc} | {cells} |")
    return "\n".join(rows)


def cpu_table(cat: Catalogue, root: Path) -> str:
    """Every QEMU CPU model the tests run, with the features the catalogue says it has."""
    rows = ["| arch | QEMU CPU model | features |", "|---|---|---|"]
    for arch, models in cat.cpus.items():
        for model in [*models, *cat.sme_qemu_cpus(arch)]:
            rows.append(f"| {arch} | `{model}` | {', '.join(cat.cpu_features(arch, model))} |")
    return "\n".join(rows)


# block name -> (the page that holds it, its renderer)
BLOCKS: dict[str, tuple[str, Callable[[Catalogue, Path], str]]] = {
    "kernels": ("docs/libisaforge.md", kernel_table),
    "cpu-models": ("docs/setup.md", cpu_table),
}


def refresh(text: str, name: str, table: str) -> str:
    """`text` with block `name` replaced by `table`; a page that lost its markers is an error, not a silent skip."""
    pattern = re.compile(
        rf"(<!-- generated: {re.escape(name)}\b[^>]*-->\n)(?:.*?\n)?(<!-- end: {re.escape(name)} -->)", re.S
    )
    if not pattern.search(text):
        raise ValueError(f"no generated block {name!r} (<!-- generated: {name} --> … <!-- end: {name} -->)")
    return pattern.sub(lambda m: f"{m[1]}{table}\n{m[2]}", text)


def refreshed(root: Path) -> tuple[dict[str, str], list[str]]:
    """Every page with blocks, as the catalogue renders them (page -> text), and the names of the stale blocks."""
    cat = load()
    pages: dict[str, str] = {}
    names: list[str] = []
    for name, (page, render) in BLOCKS.items():
        text = pages.setdefault(page, (root / page).read_text())
        pages[page] = refresh(text, name, render(cat, root))
        if pages[page] != text:
            names.append(name)
    return pages, names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m isaforge.doctables", description=__doc__)
    parser.add_argument("--check", action="store_true", help="only name the stale blocks; exit 1 if there is one")
    parser.add_argument("--root", type=Path, default=CHECKOUT, help="the checkout (default: this one)")
    args = parser.parse_args(argv)
    pages, names = refreshed(args.root)
    for name in names:
        print(f"{BLOCKS[name][0]}: table {name!r} {'is stale' if args.check else 'rewritten'}")
    if args.check:
        return 1 if names else 0
    for page, text in pages.items():
        (args.root / page).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
