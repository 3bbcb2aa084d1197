"""Generate an engine's kernel libraries and dispatch from its catalogue (docs/engines.md).

    python3 enginegen.py engine.toml -o OUTDIR [--arch A] [--compiler C] [--prefix P] --cc <C compiler command…>

An engine declares its ops (the C signature of their run function and, as interfaces, their members, packing keys
and roles) in a TOML file of its own. Its kernels are files under kernels/<arch dir>/<variant>/ named by isaforge's
grammar, or [kernel.<name>] tables naming any sources and symbols (a vendored library as it is), each needing a
catalogue variant or a set of features (fp16+dotprod); features, variants and flags come from isaforge's catalogue.
This script probes every variant and feature set with the engine's compiler, writes <name>_dispatch.h (the engine's
API), isaforge_engine.inc (data-only tables for the one dispatcher, engine_dispatch.c next to this file) and the
manifest isaforge-kernels-<name>.json into OUTDIR (all or nothing), and prints one line per static library the build
system makes: `name|c_args|sources`, the variants' and feature sets', then the references' at the baseline.
Meson runs it with run_command, CMake with execute_process: standard library only, like codegen.py. This file is
the command line; the generator's parts are the modules of the isaforge.engine package.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `isaforge` importable from the tree this file is in
    # The tree may be an installed prefix or a Conan package, which must stay as installed: no __pycache__ in it.
    sys.dont_write_bytecode = True
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from isaforge.catalogue import HOST_ARCH, CatalogueError, load
from isaforge.engine.build_lines import library_lines
from isaforge.engine.compiler import detect_arch, detect_compiler
from isaforge.engine.generate import generate
from isaforge.engine.load import load_engine
from isaforge.engine.model import EngineError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="enginegen.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("catalogue", type=Path, help="the engine's TOML file")
    parser.add_argument("-o", "--outdir", type=Path, required=True, help="where the generated files go")
    parser.add_argument("--arch", help="aarch64, arm or host (default: from the compiler's -dumpmachine)")
    parser.add_argument("--compiler", choices=("gcc", "clang"), help="default: from the compiler's --version")
    parser.add_argument("--prefix", help="C prefix, overriding [engine] name")
    parser.add_argument("--cc", nargs=argparse.REMAINDER, required=True, help="the C compiler command (last)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if not args.cc:
            raise EngineError("--cc needs the C compiler command, e.g. --cc aarch64-linux-gnu-gcc")
        cat = load()
        engine = load_engine(args.catalogue, cat, args.prefix)
        arch = args.arch or detect_arch(cat, args.cc)
        if arch != HOST_ARCH:
            cat.arch(arch)
        compiler = args.compiler or detect_compiler(args.cc)
        p = generate(cat, engine, args.outdir, arch, compiler, args.cc)
    except CatalogueError as exc:
        print(f"enginegen: {exc}", file=sys.stderr)
        return 1
    for variant, reason in p.dropped.items():
        print(f"enginegen: variant {variant} dropped: {reason}", file=sys.stderr)
    print("\n".join(library_lines(cat, p, args.outdir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
