"""Cross-build Arm kernel libraries for aarch64 and armv7 with GCC or Clang, each ISA variant with only its own flags,
dispatched at run time from the CPU's features, and prove every kernel under QEMU user mode, CPU model by CPU model."""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Sequence
from typing import Any, NamedTuple

from isaforge.errors import IsaforgeError


class Subcommand(NamedTuple):
    module: str  # under isaforge.commands, with `add_arguments(parser)` and `run(args) -> int`
    summary: str  # its line in `isaforge --help`: short enough for an 80-column terminal


# The one place a subcommand is registered; `isaforge --help` lists them in this order.
SUBCOMMANDS: dict[str, Subcommand] = {
    "build": Subcommand("build", "cross-build libisaforge, show each CPU model's kernels"),
    "test-qemu": Subcommand("test_qemu", "prove a project's kernels on every QEMU CPU model"),
    "info": Subcommand("info", "the features and kernels one QEMU CPU model gets"),
    "toolchain": Subcommand("toolchain", "list cross toolchains; write Meson/CMake/Conan files"),
    "conan": Subcommand("conan", "build and test the isaforge Conan package"),
    "check-isolation": Subcommand("check_isolation", "check objects use only their variant's instructions"),
    "inst": Subcommand("inst", "encode new instructions as .inst for older assemblers"),
    "bench": Subcommand("bench", "price kernels' hot loops per core, count GEMMs under QEMU"),
    "matrix": Subcommand("matrix", "list, run or export the CI matrix (ci/matrix.toml)"),
    "docker": Subcommand("docker", "build the CI image and run `make test` in it offline"),
}

EPILOG = "Run `isaforge COMMAND --help` for what a command does and its options."


class _ParagraphFormatter(argparse.HelpFormatter):
    """Re-wraps a docstring to the terminal paragraph by paragraph; indented lines (examples) are kept as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        blocks = []
        for paragraph in re.split(r"\n\s*\n", text.strip()):
            for prose, example in re.findall(r"((?:^\S.*\n?)+)|((?:^\s.*\n?)+)", paragraph, re.M):
                blocks.append(super()._fill_text(prose, width, indent) if prose else example.rstrip("\n"))
            blocks.append("")
        return "\n".join(blocks).rstrip("\n")

    def add_argument(self, action: argparse.Action) -> None:
        super().add_argument(action)
        if isinstance(action, argparse._SubParsersAction):
            # argparse measures subcommand names at their group's indent but prints them two columns deeper, which
            # pushes the help of the longest one (check-isolation) onto a line of its own.
            longest = max(map(len, action.choices), default=0)
            self._action_max_length = max(self._action_max_length, self._current_indent + 2 + longest)


class _PrintVersion(argparse.Action):
    """`--version`; the version is looked up only when asked for, as importlib.metadata is slow to import."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, nargs=0, help="print isaforge's version and exit")

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: object, values: object, option: object = None
    ) -> None:
        from isaforge import __version__  # noqa: PLC0415 (the point: imported late)

        print(f"isaforge {__version__}")
        parser.exit()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `only`, just that subcommand's module is imported (the others stay unloaded; with "", none:
    the summaries are enough for `--help` and `--version`)."""
    parser = argparse.ArgumentParser(
        prog="isaforge", description=__doc__, epilog=EPILOG, formatter_class=_ParagraphFormatter
    )
    parser.add_argument("--version", action=_PrintVersion)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module_name, summary) in SUBCOMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=summary)
            continue
        module = importlib.import_module(f"isaforge.commands.{module_name}")
        p = sub.add_parser(name, help=summary, description=module.__doc__, formatter_class=_ParagraphFormatter)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def _chosen(argv: Sequence[str]) -> str:
    first = next((a for a in argv if not a.startswith("-")), "")
    return first if first in SUBCOMMANDS else ""


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
