"""Cross-build libisaforge for every usable toolchain and show which kernel each QEMU CPU model dispatches to."""

from __future__ import annotations

import argparse
import json

from isaforge import builds, qemu, ui
from isaforge.builds import Build
from isaforge.catalogue import load
from isaforge.errors import IsaforgeError
from isaforge.toolchains.probing import probe


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", action="append", help="triple or arch to build (repeatable; default: all)")
    parser.add_argument("--compiler", action="append", help="gcc or clang (repeatable; default: both)")
    parser.add_argument("--cpu", default="", help="comma-separated CPU models to show (default: all of the arch)")
    parser.add_argument("--no-dispatch", action="store_true", help="build only; do not run QEMU")


def selected(args: argparse.Namespace) -> list[Build]:
    cat = load()
    targets = [cat.arch_by_triple(t).triple for t in args.target or [a.triple for a in cat.arches.values()]]
    compilers = [cat.compiler(c).name for c in args.compiler or list(cat.compilers)]
    return [builds.build_for(t, c) for t in targets for c in compilers]


def dispatch_rows(build: Build, cpus: list[str]) -> list[list[str]]:
    rows = []
    for cpu in cpus:
        result = qemu.run(build.arch, cpu, build.program("isaforge-info"))
        if result.returncode != 0:
            raise IsaforgeError(f"isaforge-info failed under {cpu}: {result.signal_name or result.returncode}")
        info = json.loads(result.stdout)
        kernels = [info["kernels"][op] or "-" for op in load().ops]
        rows.append([cpu, " ".join(info["detected"]) or "-", *kernels])
    return rows


def cpus_for(arch: str, wanted: str) -> list[str]:
    cat = load()
    chosen = [c for c in wanted.split(",") if c]
    for cpu in chosen:
        if not cat.arch_of_cpu(cpu):
            known = sorted({m for models in cat.cpus.values() for m in models})
            raise IsaforgeError(f"unknown CPU model {cpu!r}; choose from: {', '.join(known)}")
    return [c for c in cat.cpus[arch] if not chosen or c in chosen]


def run(args: argparse.Namespace) -> int:
    todo = selected(args)
    models = {b.arch_name: cpus_for(b.arch_name, args.cpu) for b in todo}  # a misspelt model fails before any build
    usable = [b for b in todo if b.toolchain is not None and probe(b.toolchain).usable]
    for b in todo:
        if b not in usable and b.toolchain is not None:
            print(f"{b.name}: skipped: {'; '.join(probe(b.toolchain).reasons)}")
    if not usable:
        raise IsaforgeError("no usable toolchain; run ci/install-toolchains.sh (or `isaforge toolchain list`)")
    for b in usable:
        directory = builds.ensure_built(b)
        shown = directory.relative_to(b.root) if directory.is_relative_to(b.root) else directory  # installed: a cache
        print(f"{b.name}: built in {shown}")
        if not args.no_dispatch:
            rows = [["cpu", "detected", *load().ops], *dispatch_rows(b, models[b.arch_name])]
            print(ui.text_table(rows, indent="  "))
    return 0 if len(usable) == len(todo) else 1
