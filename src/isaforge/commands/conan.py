"""Build the isaforge Conan package for a target and compiler: `isaforge conan create --target T --compiler C`.

Picks the host profile (toolchains/conan/<triple>-<compiler>, or the detected default profile for a native build),
detects the build profile if CONAN_HOME has none, checks the compiler is installed, and runs `conan create` on
recipes/isaforge with the right confs: the library's Meson tests and test_package run under QEMU on --cpu (default:
the profile's `user.isaforge:qemu_cpu`, max). Arguments after `--` go to Conan unchanged.
"""

from __future__ import annotations

import argparse
import shlex

from isaforge import conan


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = sub.add_parser("create", help="conan create the isaforge package for a target and compiler")
    p.add_argument("--target", help="target triple or arch, e.g. aarch64-linux-gnu (default: this machine)")
    p.add_argument("--compiler", help="gcc or clang (default: gcc; needs --target)")
    p.add_argument("--cpu", help="QEMU CPU model the tests run on, e.g. neoverse-n2 (default: max)")
    p.add_argument("--profile", help="a host profile of your own instead of --target/--compiler")
    p.add_argument(
        "-o",
        "--option",
        dest="options",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="recipe option, e.g. i8mm=False or shared=True (repeatable)",
    )
    p.add_argument("--skip-tests", action="store_true", help="neither the Meson tests nor test_package")
    p.add_argument("-j", "--jobs", type=int, help="parallel compile jobs (tools.build:jobs)")
    p.add_argument("--dry-run", action="store_true", help="print the conan command and exit")
    p.add_argument("extra", nargs=argparse.REMAINDER, help="-- then arguments for `conan create`")
    p.set_defaults(_action=_create)


def run(args: argparse.Namespace) -> int:
    return int(args._action(args))


def _create(args: argparse.Namespace) -> int:
    extra = list(args.extra)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    req = conan.CreateRequest(
        target=args.target,
        compiler=args.compiler,
        cpu=args.cpu,
        profile=args.profile,
        options=args.options,
        skip_tests=args.skip_tests,
        jobs=args.jobs,
        extra=extra,
    )
    cmd = conan.create_command(req)
    print(shlex.join(cmd), flush=True)
    if args.dry_run:
        return 0
    return conan.run(cmd)
