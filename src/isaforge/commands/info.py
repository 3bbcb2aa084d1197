"""Show what libisaforge detects on one QEMU CPU model and which kernel it runs for each op.

Builds libisaforge for the target and compiler if needed, runs its isaforge-info under the model and prints its JSON:
the detected and active features, where they came from, the kernel chosen per op and every kernel each op can run.
"""

from __future__ import annotations

import argparse

from isaforge import builds, qemu
from isaforge.catalogue import load
from isaforge.errors import IsaforgeError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", required=True, help="triple or arch, e.g. aarch64-linux-gnu")
    parser.add_argument("--compiler", default="gcc", help="gcc or clang")
    parser.add_argument("--cpu", required=True, help="QEMU CPU model, e.g. cortex-a55 or max")
    parser.add_argument("--detect", choices=["hwcap", "cpuinfo", "midr"], default="hwcap", help="detection path to use")
    parser.add_argument("--disable", default="", help="ISAFORGE_DISABLE for the run, e.g. i8mm,dotprod")


def run(args: argparse.Namespace) -> int:
    build = builds.build_for(args.target, args.compiler)
    load().cpu_features(build.arch.name, args.cpu)  # a wrong model fails before the build
    builds.ensure_built(build)
    env = {"ISAFORGE_DETECT": args.detect}
    if args.disable:
        env["ISAFORGE_DISABLE"] = args.disable
    result = qemu.run(build.arch, args.cpu, build.program("isaforge-info"), env=env)
    if result.returncode != 0:
        raise IsaforgeError(f"isaforge-info failed under {args.cpu}: {result.signal_name or result.returncode}")
    print(result.stdout, end="")
    print(result.stderr, end="")
    return 0
