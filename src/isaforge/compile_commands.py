"""What a build's compile_commands.json (Meson's or CMake's) says about each object check-isolation reads: where the
object is, which cross target and compiler built it, the flags that set its instruction set, and the variant it
declares with -DISAFORGE_VARIANT=<variant> (catalogue_entries.VARIANT_DEFINE).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from isaforge.catalogue import VARIANT_DEFINE
from isaforge.errors import IsaforgeError

COMPILE_COMMANDS = "compile_commands.json"
BUILD_DIRECTORY = "Meson or CMake build directory (compile_commands.json; CMake: -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)"
# The compile flags that decide what the assembler accepts; the last of each kind wins, as in the compilers.
ASSEMBLER_FLAG_PREFIXES = ("-march=", "-mcpu=", "-mfpu=", "-mfloat-abi=")
# What `-v` shows of the flags an object was really built with: everything that moves its instruction set.
BUILT_WITH_PREFIXES = (*ASSEMBLER_FLAG_PREFIXES, "-msve-vector-bits=")
BUILT_WITH_FLAGS = ("-marm", "-mthumb")


@dataclass(frozen=True)
class CompileEntry:
    """One compile_commands.json entry that produced an object."""

    directory: Path
    file: str
    output: Path  # absolute
    args: tuple[str, ...]


def read_compile_commands(builddir: Path) -> list[CompileEntry]:
    """The entries of `builddir`/compile_commands.json (Meson's or CMake's) that produced an object."""
    if not builddir.is_dir():
        raise IsaforgeError(
            f"build directory {builddir} does not exist; "
            f"give a {BUILD_DIRECTORY}, configured first (`meson setup` or `cmake -B`)"
        )
    path = builddir / COMPILE_COMMANDS
    if not path.is_file():
        raise IsaforgeError(f"{path} not found; give a {BUILD_DIRECTORY}")
    reconfigure = "reconfigure it (`meson setup --reconfigure`, or cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)"
    try:
        raw = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IsaforgeError(f"{path} is not valid JSON ({exc}); {reconfigure}") from exc
    if not isinstance(raw, list):
        raise IsaforgeError(f"{path} is not a list of compile commands; {reconfigure}")
    entries = []
    for item in raw:
        if not isinstance(item, dict):
            raise IsaforgeError(f"{path}: an entry is not an object; {reconfigure}")
        directory = Path(item.get("directory") or builddir)
        if not directory.is_absolute():
            directory = builddir / directory
        command = item.get("arguments") or shlex.split(str(item.get("command", "")))
        args = [str(a) for a in command]
        output = item.get("output") or _output_flag(args)
        if not output:
            continue
        out = Path(output)
        entries.append(
            CompileEntry(
                directory, str(item.get("file", "")), out if out.is_absolute() else directory / out, tuple(args)
            )
        )
    return entries


def _output_flag(args: Sequence[str]) -> str | None:
    out = None
    for i, arg in enumerate(args):
        if arg == "-o" and i + 1 < len(args):
            out = args[i + 1]
        elif arg.startswith("-o") and len(arg) > 2:
            out = arg[2:]
    return out


def target_triple(args: Sequence[str]) -> str | None:
    """The cross target of a compile command: clang's --target, or the `<triple>-gcc` (or -clang) driver name.
    None for a host compiler."""
    triple = None
    for i, arg in enumerate(args):
        if arg.startswith("--target="):
            triple = arg.removeprefix("--target=")
        elif arg in ("--target", "-target") and i + 1 < len(args):
            triple = args[i + 1]
    if triple:
        return triple
    # The driver (after wrappers such as ccache): everything before the first option.
    for arg in args:
        if arg.startswith("-"):
            break
        m = re.match(
            r"^(?P<triple>[\w.]+(?:-[\w.]+){2,})-(?:gcc|g\+\+|cc|c\+\+|clang|clang\+\+)(?:-[\d.]+)?$", Path(arg).name
        )
        if m:
            return m["triple"]
    return None


def assembler_flags(args: Sequence[str]) -> list[str]:
    """The -march/-mcpu/-mfpu/-mfloat-abi of a command (the last of each wins, as in the compilers)."""
    last: dict[str, str] = {}
    for arg in args:
        for prefix in ASSEMBLER_FLAG_PREFIXES:
            if arg.startswith(prefix):
                last[prefix] = arg
    if last.get("-mfpu=") == "-mfpu=auto":
        del last["-mfpu="]
    return [last[p] for p in ASSEMBLER_FLAG_PREFIXES if p in last]


def built_with(args: Sequence[str]) -> list[str]:
    """The flags of a compile command that set its instruction set, the variant define included, in command order
    (a repeat of the same flag shown once: Meson repeats the baseline's -march in project and target arguments)."""
    return list(dict.fromkeys(_isa_flags(args)))


def _isa_flags(args: Sequence[str]) -> Iterator[str]:
    for i, arg in enumerate(args):
        if arg in ("-D", "-U") and i + 1 < len(args) and _names_define(args[i + 1]):
            yield arg + args[i + 1]
        elif arg.startswith(BUILT_WITH_PREFIXES) or arg in BUILT_WITH_FLAGS or is_define(arg):
            yield arg


def _names_define(text: str) -> bool:
    return text.split("=", 1)[0] == VARIANT_DEFINE


def is_define(flag: str) -> bool:
    """-DISAFORGE_VARIANT=… or -UISAFORGE_VARIANT, as one argument."""
    return flag[:2] in ("-D", "-U") and _names_define(flag[2:])


def declared_variant(args: Sequence[str]) -> str | None:
    """The value of the command's -DISAFORGE_VARIANT=<variant>: the last one, unless a later -U removes it."""
    value: str | None = None
    for flag in _isa_flags(args):
        if flag.startswith("-U"):
            value = None
        elif flag.startswith("-D"):
            # A bare -DISAFORGE_VARIANT defines it as 1, as the compilers do.
            value = flag.partition("=")[2] if "=" in flag else "1"
    return value


def compiler_of(args: Sequence[str]) -> str:
    """The catalogue compiler of a command: clang when its driver is one, else gcc."""
    # The driver (after wrappers such as ccache): everything before the first option.
    for arg in args:
        if arg.startswith("-"):
            break
        if "clang" in Path(arg).name:
            return "clang"
    return "gcc"
