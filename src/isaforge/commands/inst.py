"""Rewrite sdot/smmla/bfmmla/… in an assembly source as `.inst` words, so it builds with assemblers lacking them.

Every other line is kept byte-for-byte and line numbers do not move; the output is written atomically (nothing is
written when an instruction is malformed).
"""

from __future__ import annotations

import argparse

from isaforge import inst
from isaforge.errors import IsaforgeError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    inst.add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    try:
        inst.convert_file(args.arch, args.source, args.output)
    except OSError as exc:
        raise IsaforgeError(f"{exc.filename or args.source}: {exc.strerror or exc}") from None
    return 0
