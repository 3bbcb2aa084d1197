"""Check that every object of a build uses only instructions its own compile flags allow.

Reads <builddir>/compile_commands.json, disassembles each cross-compiled object and re-assembles every instruction
with the object's own -march/-mfpu. Prints a summary and one line per violation; exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from isaforge.isolation import Report, Violation, check_builddir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("builddir", type=Path, help="Meson build directory (holds compile_commands.json)")
    parser.add_argument("-j", "--jobs", type=int, default=None, help="objects checked in parallel (default: CPUs)")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="also list each object's flags and its unparseable lines"
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
            print(f"  {obj.object} [{obj.arch} {' '.join(obj.flags)}]: {obj.checked} checked, {obj.data} data words")
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


def violation_lines(violations: list[Violation]) -> list[str]:
    """One line per distinct (object, function, instruction): a kernel repeats the same instruction many times."""
    seen: dict[str, None] = {}
    for v in sorted(violations, key=lambda v: (v.object, v.address)):
        seen.setdefault(v.describe(), None)
    return list(seen)
