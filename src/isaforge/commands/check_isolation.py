"""Check that every object of a build uses only instructions its variant, or else the arch baseline, allows.

Reads <builddir>/compile_commands.json (Meson's, or CMake's with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON), disassembles
each cross-compiled object and re-assembles every instruction with the flags it is held to: those of the variant its
-DISAFORGE_VARIANT=<variant> names, else the arch baseline, whatever -march it was compiled with. Prints a summary
and one line per violation; exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from isaforge.compile_commands import BUILD_DIRECTORY
from isaforge.isolation import ObjectReport, Report, Violation, check_builddir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("builddir", type=Path, help=BUILD_DIRECTORY)
    parser.add_argument("-j", "--jobs", type=int, default=None, help="objects checked in parallel (default: CPUs)")
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also list, per object, the flags it was built with, what it is held to, and its unparseable lines",
    )


def run(args: argparse.Namespace) -> int:
    report = check_builddir(args.builddir, jobs=args.jobs)
    for note in report.notes:
        print(f"isaforge: note: {note}", file=sys.stderr)
    print(summary(report))
    for line in violation_lines(report.violations):
        print(line)
    if args.verbose:
        for obj in report.objects:
            print(object_line(obj))
            for insn in obj.unparseable:
                print(f"    not re-assemblable: {insn.function}: {insn.text}")
    return 1 if report.violations else 0


def summary(report: Report) -> str:
    objects = len(report.objects)
    bad_objects = len({v.object for v in report.violations})
    text = f"check-isolation: {objects} object{'s' * (objects != 1)}, {report.checked} instructions checked, "
    if report.violations:
        text += f"{len(report.violations)} violation(s) in {bad_objects} object(s)"
    else:
        text += "no violations"
    if report.unparseable:
        text += f" ({report.unparseable} line(s) objdump prints but the assembler cannot read back; -v lists them)"
    return text


def object_line(obj: ObjectReport) -> str:
    """-v: how an object was really built (its ISA flags in the compile command) and what it is held to."""
    built = " ".join(obj.built_with) or "no -march/-mcpu/-mfpu (the compiler's default)"
    return (
        f"  {obj.object} [{obj.arch}]: built with {built}; held to {obj.held.describe()}; "
        f"{obj.checked} checked, {obj.data} data words"
    )


def violation_lines(violations: list[Violation]) -> list[str]:
    """One line per distinct (object, function, instruction): a kernel repeats the same instruction many times."""
    seen: dict[str, None] = {}
    for v in sorted(violations, key=lambda v: (v.object, v.address)):
        seen.setdefault(v.describe(), None)
    return list(seen)
