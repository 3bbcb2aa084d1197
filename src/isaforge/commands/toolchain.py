"""List the cross toolchains, and write or show their Meson cross files, CMake toolchain files and Conan profiles.

`list` tells, per target x compiler, whether this machine can build and QEMU-test with it (and what to install if
not); `write` regenerates toolchains/meson/*.ini, toolchains/cmake/*.cmake, the Conan host profiles under
toolchains/conan/ (with the Meson machine files giving their QEMU exe_wrapper), meson.options and
include/isaforge/isaforge_ops.h from the catalogue (`--check`: only report what is out of date); `write --out DIR`
writes the cross files and the Conan profiles with every file they include into DIR instead, for a project of one's
own (no checkout needed); `show` prints one cross file (`--cmake`: the CMake toolchain file, `--conan`: the Conan
profile, including the checked-in QEMU machine file by its absolute path).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePath, PurePosixPath

from isaforge import codegen, ui
from isaforge.catalogue import load
from isaforge.errors import IsaforgeError
from isaforge.source_tree import repo_root, source_root
from isaforge.toolchains import cmake_files, conan_profiles, meson_files
from isaforge.toolchains.model import CONAN_DIR, CROSS_DIR, Toolchain, toolchain, toolchains
from isaforge.toolchains.probing import probe

MESON_OPTIONS = PurePosixPath("meson.options")
OPS_HEADER = PurePosixPath(codegen.OPS_HEADER)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = sub.add_parser("list", help="which target x compiler toolchains are usable here, and why not")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    p.set_defaults(_action=_list)
    p = sub.add_parser(
        "write",
        help="regenerate toolchains/*, meson.options and include/isaforge/isaforge_ops.h in the checkout, "
        "or (--out DIR) write the cross files and Conan profiles with every file they include into DIR",
    )
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="write DIR/meson/<triple>-<compiler>.ini, DIR/cmake/<triple>-<compiler>.cmake, the Conan host profiles "
        "DIR/conan/<triple>-<compiler> and the QEMU machine files they include (DIR/conan/<triple>-qemu.ini) instead "
        "of the checkout's files",
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
    probes = [probe(tc) for tc in toolchains()]
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
        **meson_files.cross_files(cat),
        **cmake_files.cmake_files(cat),
        **conan_profiles.conan_files(cat),
        MESON_OPTIONS: codegen.meson_options(cat),
        OPS_HEADER: codegen.render_header(cat),
    }


def toolchain_files() -> dict[PurePosixPath, str]:
    """What `write --out DIR` writes: the cross files, the CMake toolchain files and the Conan profiles with the
    machine files they include, DIR-relative in the layout of the checkout's toolchains/ (so each profile's
    {{ profile_dir }} finds its own)."""
    cat = load()
    top = CROSS_DIR.parent
    every = {**meson_files.cross_files(cat), **cmake_files.cmake_files(cat), **conan_profiles.conan_files(cat)}
    return {rel.relative_to(top): text for rel, text in every.items()}


def out_of_date(root: Path) -> tuple[dict[PurePosixPath, str], list[PurePosixPath]]:
    """(files whose text differs from what the catalogue makes, stale generated cross files to delete)."""
    changed = {rel: text for rel, text in generated_files().items() if _differs(root / rel, text)}
    stale = [
        *meson_files.stale_cross_files(root),
        *cmake_files.stale_cmake_files(root),
        *conan_profiles.stale_conan_files(root),
    ]
    return changed, stale


def _write(args: argparse.Namespace) -> int:
    if args.out is not None:
        out: Path = args.out
        if out.exists() and not out.is_dir():
            raise IsaforgeError(f"--out {out} is not a directory; give the folder to write the toolchain files into")
        # Paths as given (DIR/conan/…), so the lines name the files where they are.
        base = Path()
        changed: Mapping[PurePath, str] = {
            out / rel: text for rel, text in toolchain_files().items() if _differs(out / rel, text)
        }
        stale: Sequence[PurePath] = []  # DIR is the user's: nothing there is removed
        fix = f"isaforge toolchain write --out {out}"
    else:
        base = repo_root()
        changed, stale = out_of_date(base)
        fix = "isaforge toolchain write"
    if args.check:
        if not changed and not stale:
            print("isaforge: generated files are up to date")
            return 0
        for rel in changed:
            print(f"out of date: {rel}")
        for rel in stale:
            print(f"stale: {rel}")
        print(f"isaforge: run `{fix}` to regenerate them")
        return 1
    for rel, text in changed.items():
        path = base / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        except OSError as exc:
            raise IsaforgeError(f"cannot write {path}: {exc.strerror or exc}") from None
        print(f"wrote {rel}")
    for rel in stale:
        (base / rel).unlink()
        print(f"removed {rel}")
    if not changed and not stale:
        print("isaforge: generated files are up to date")
    return 0


def _differs(path: Path, text: str) -> bool:
    return not path.is_file() or path.read_text() != text


def _show(args: argparse.Namespace) -> int:
    tc = toolchain(args.target, args.compiler)
    if args.conan:
        print(conan_profiles.render_conan_profile(tc, _machine_file_dir(tc)), end="")
    elif args.cmake:
        print(cmake_files.render_cmake_toolchain(tc), end="")
    else:
        print(meson_files.render_cross_file(tc), end="")
    return 0


def _machine_file_dir(tc: Toolchain) -> Path:
    """The folder of the QEMU machine file a shown profile includes: printed profiles are saved anywhere, so they
    include the checked-in one by its absolute path, which must exist and say what the catalogue says."""
    fix = "write the profiles with the files they include with `isaforge toolchain write --out DIR`"
    try:
        folder = source_root() / CONAN_DIR
    except IsaforgeError as exc:
        raise IsaforgeError(f"{exc}; {fix}") from None
    machine_file = folder / tc.conan_machine_file.name
    if _differs(machine_file, conan_profiles.render_qemu_machine_file(tc.arch)):
        raise IsaforgeError(f"{machine_file}, which the profile includes, is missing or out of date; {fix}")
    return folder
