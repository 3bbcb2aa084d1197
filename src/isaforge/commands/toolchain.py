"""List the cross toolchains, and write or show their Meson cross files, CMake toolchain files and Conan profiles.

`list` tells, per target x compiler, whether this machine can build and QEMU-test with it (and what to install if
not); `write` regenerates toolchains/meson/*.ini, toolchains/cmake/*.cmake, the Conan host profiles under
toolchains/conan/ (with the Meson machine files giving their QEMU exe_wrapper), meson.options and
include/isaforge/isaforge_ops.h from the catalogue (`--check`: only report what is out of date); `show` prints one
cross file (`--cmake`: the CMake toolchain file, `--conan`: the Conan profile).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path, PurePosixPath

from isaforge import codegen, toolchains, ui
from isaforge.catalogue import load

MESON_OPTIONS = PurePosixPath("meson.options")
OPS_HEADER = PurePosixPath(codegen.OPS_HEADER)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = sub.add_parser("list", help="which target x compiler toolchains are usable here, and why not")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    p.set_defaults(_action=_list)
    p = sub.add_parser(
        "write", help="regenerate toolchains/*, meson.options and include/isaforge/isaforge_ops.h in the checkout"
    )
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 listing the out-of-date files")
    p.set_defaults(_action=_write)
    p = sub.add_parser("show", help="print the cross file of one target and compiler")
    p.add_argument("--target", required=True, help="target triple (or catalogue arch name), e.g. aarch64-linux-gnu")
    p.add_argument("--compiler", required=True, help="compiler name from the catalogue, e.g. gcc or clang")
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--conan", action="store_true", help="print the Conan host profile instead of the cross file")
    shown.add_argument("--cmake", action="store_true", help="print the CMake toolchain file instead of the cross file")
    p.set_defaults(_action=_show)


def run(args: argparse.Namespace) -> int:
    return int(args._action(args))


def _list(args: argparse.Namespace) -> int:
    probes = [toolchains.probe(tc) for tc in toolchains.toolchains()]
    if args.json:
        rows = [
            {
                "target": p.toolchain.triple,
                "arch": p.toolchain.arch.name,
                "compiler": p.toolchain.compiler.name,
                "status": p.status,
                "usable": p.usable,
                "reasons": list(p.reasons),
                "cross_file": str(p.toolchain.cross_file),
            }
            for p in probes
        ]
        print(json.dumps(rows, indent=2))
        return 0
    rows = [["target", "compiler", "status"]]
    for p in probes:
        status = "usable" if p.usable else f"unusable: {p.reasons[0]}"
        rows.append([p.toolchain.triple, p.toolchain.compiler.name, status])
        rows += [["", "", f"          {reason}"] for reason in p.reasons[1:]]
    print(ui.text_table(rows))
    return 0


def generated_files() -> dict[PurePosixPath, str]:
    """Every file `write` owns in a source checkout: repo-relative path -> text."""
    cat = load()
    return {
        **toolchains.cross_files(cat),
        **toolchains.cmake_files(cat),
        **toolchains.conan_files(cat),
        MESON_OPTIONS: codegen.meson_options(cat),
        OPS_HEADER: codegen.render_header(cat),
    }


def out_of_date(root: Path) -> tuple[dict[PurePosixPath, str], list[PurePosixPath]]:
    """(files whose text differs from what the catalogue makes, stale generated cross files to delete)."""
    changed = {
        rel: text
        for rel, text in generated_files().items()
        if not (root / rel).is_file() or (root / rel).read_text() != text
    }
    stale = toolchains.stale_cross_files(root) + toolchains.stale_cmake_files(root) + toolchains.stale_conan_files(root)
    return changed, stale


def _write(args: argparse.Namespace) -> int:
    root = toolchains.repo_root()
    changed, stale = out_of_date(root)
    if args.check:
        if not changed and not stale:
            print("isaforge: generated files are up to date")
            return 0
        for rel in changed:
            print(f"out of date: {rel}")
        for rel in stale:
            print(f"stale: {rel}")
        print("isaforge: run `isaforge toolchain write` to regenerate them")
        return 1
    for rel, text in changed.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {rel}")
    for rel in stale:
        (root / rel).unlink()
        print(f"removed {rel}")
    if not changed and not stale:
        print("isaforge: generated files are up to date")
    return 0


def _show(args: argparse.Namespace) -> int:
    tc = toolchains.toolchain(args.target, args.compiler)
    if args.conan:
        print(toolchains.render_conan_profile(tc), end="")
    elif args.cmake:
        print(toolchains.render_cmake_toolchain(tc), end="")
    else:
        print(toolchains.render_cross_file(tc), end="")
    return 0
