"""`isaforge` command line: every subcommand is a module registered in SUBCOMMANDS (as Meson does)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from isaforge.catalogue import CatalogueError
from isaforge.errors import IsaforgeError

# name -> module under isaforge.commands; each module has `add_arguments(parser)` and `run(args) -> int`.
SUBCOMMANDS: dict[str, str] = {
    "build": "build",
    "toolchain": "toolchain",
    "check-isolation": "check_isolation",
    "info": "info",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="isaforge", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in SUBCOMMANDS.items():
        module = importlib.import_module(f"isaforge.commands.{module_name}")
        p = sub.add_parser(
            name, help=module.__doc__.splitlines()[0] if module.__doc__ else None, description=module.__doc__
        )
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args._run(args))
    except (IsaforgeError, CatalogueError) as exc:
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
