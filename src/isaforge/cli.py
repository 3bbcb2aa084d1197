"""`isaforge` command line: every subcommand is a module registered in SUBCOMMANDS (as Meson does)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from isaforge.errors import IsaforgeError

# name -> module under isaforge.commands; each module has `add_arguments(parser)` and `run(args) -> int`.
SUBCOMMANDS: dict[str, str] = {
    "build": "build",
    "toolchain": "toolchain",
    "check-isolation": "check_isolation",
    "bench": "bench",
    "inst": "inst",
    "conan": "conan",
    "matrix": "matrix",
    "info": "info",
    "test-qemu": "test_qemu",
    "docker": "docker",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `only`, just that subcommand's module is imported (the others stay unloaded)."""
    parser = argparse.ArgumentParser(prog="isaforge", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in SUBCOMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name)
            continue
        module = importlib.import_module(f"isaforge.commands.{module_name}")
        doc = module.__doc__ or ""
        p = sub.add_parser(name, help=doc.splitlines()[0] if doc else None, description=doc)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def _chosen(argv: Sequence[str]) -> str | None:
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in SUBCOMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(_chosen(argv)).parse_args(argv)
    try:
        return int(args._run(args))
    except IsaforgeError as exc:
        print(f"isaforge: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `isaforge … | head`: the reader left; nothing is wrong with the command.
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("isaforge: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
