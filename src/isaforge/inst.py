"""Rewrite dot-product, matrix-multiply, BFloat16, SME and SME2 instructions as `.inst 0x########` words.

Old assemblers reject `sdot`, `smmla`, `bfmmla`, `fmopa`, `ld1w {z0.s-z3.s}, pn8/z, …` even when the running CPU
has them (GNU as 2.40 knows SME but no SME2). This module encodes such instructions itself (bit layouts from the
Arm ARM) and emits `.inst 0x########  // <original>` (`@` on arm), so an assembly kernel builds with any
assembler; every other line is kept byte-for-byte and line numbers do not move. The forms are in inst_encoding.py
(Advanced SIMD, SVE, A32) and inst_sme.py (SME, SME2; aarch64).

Meson's generator() runs this file as a script from a bare source tree, so it uses the standard library only:

    python3 src/isaforge/inst.py --arch aarch64|arm IN.S -o OUT.S

`isaforge inst` (isaforge/commands/inst.py) is the same code behind the CLI.

What a line is, as the C preprocessor and GNU as see it: `//` and `/* … */` comments everywhere, `@` comments on
arm, `;` separates statements, labels (`1:`, `name:`) may precede an instruction. `#` lines (preprocessor
directives with their `\\` continuation lines, `#` comments) are left alone, so a `#define` body is not rewritten.
An instruction with a supported mnemonic and malformed operands (wrong arrangement, register or lane index out of
range, wrong register for the indexed operand, an operand that is not a register such as a macro argument) stops
the rewrite with `file:line: what is wrong`. Unknown mnemonics pass untouched.

SME shares mnemonics with ordinary instructions (`ld1w`, `mov`, `ldr`, `ptrue`, `whilelt`, `fmla`, `sdot`, …):
an instruction goes to inst_sme.py when its mnemonic exists only in SME (`fmopa`, `mova`, `smstart`, …) or its
operands are SME-shaped (ZA, ZT0, a `pn` register, a list of several Z registers), and must then fit an SME form or
stop the rewrite; otherwise the forms of inst_encoding.py apply as before, and a line that none of them knows
(`ld1w {z0.s}, p0/z, [x0]`, `mov x0, x1`, `ptrue p0.s`) passes untouched.

A line with one rewritten instruction gets `.inst 0x########  // ` inserted in front of it, which turns the
original (and whatever followed it on the line) into a comment. When more code follows on the same line
(`sdot …; add …`), the line continues with `\\` or the line opens a block comment, each instruction is instead
replaced by `.inst 0x######## /* <original> */` so nothing else on the line changes meaning.

The arm encodings are the A32 ones; for every supported arm instruction the T32 encoding is the same 32-bit value,
and both GNU as and llvm-mc emit a 32-bit `.inst` value in Thumb state as one 32-bit instruction, so the output is
right in `.arm` and `.thumb` code alike.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script by Meson: make `isaforge` importable from the source tree
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from isaforge import inst_sme
from isaforge.inst_encoding import (
    ARCHES,
    ARM_BASES,
    COMMENT,
    CONDITIONS,
    TABLE,
    InstError,
    Malformed,
    check_arch,
    encode_instruction,
)

# -- lines ----------------------------------------------------------------------------------------------------


_TOKEN = {
    "aarch64": re.compile(r'"(?:\\.|[^"\\])*"?|/\*|//'),
    "arm": re.compile(r'"(?:\\.|[^"\\])*"?|/\*|//|@'),
}


def _mask(arch: str, line: str, in_block: bool, directive: bool = False) -> tuple[str, bool, bool]:
    """The line with comments blanked and string contents replaced by `x` (same length), whether a block comment
    is still open at its end, and whether the line belongs to a preprocessor directive or is a `#` comment: such a
    line (`directive` says it continues one) is all blank."""
    out = list(line)
    i, n = 0, len(line)
    while i < n:
        if in_block:
            close = line.find("*/", i)
            stop = n if close < 0 else close + 2
            out[i:stop] = " " * (stop - i)
            in_block, i = close < 0, stop
            continue
        m = _TOKEN[arch].search(line, i)
        if m is None:
            break
        token = m.group()
        if token.startswith('"'):
            out[m.start() + 1 : m.end() - 1] = "x" * max(0, len(token) - 2)
            i = m.end()
        elif token == "/*":
            out[m.start() : m.end()] = "  "
            in_block, i = True, m.end()
        else:  # `//` or `@`: the rest of the line
            out[m.start() :] = " " * (n - m.start())
            break
    code = "".join(out)
    if directive or code.lstrip().startswith("#"):
        return " " * n, in_block, True
    return code, in_block, False


_LABELS = re.compile(r"\s*(?:(?:[A-Za-z_.$][\w.$]*|\d+):\s*)*")
_MNEMONIC = re.compile(r"[A-Za-z][\w.]*(?=\s|$)")


@dataclass(frozen=True)
class _Found:
    start: int  # where the mnemonic starts in the line
    end: int  # end of the instruction's code (trailing blanks excluded)
    word: int


def _find(arch: str, code: str, start: int, end: int) -> _Found | None:
    """Encode the statement code[start:end] if its mnemonic is supported."""
    labels = _LABELS.match(code, start, end)
    pos = labels.end() if labels else start
    m = _MNEMONIC.match(code, pos, end)
    if m is None:
        return None
    mnemonic = m.group().lower()
    stop = start + len(code[start:end].rstrip())
    operands = code[m.end() : stop]
    if arch == "aarch64" and inst_sme.claims(mnemonic, operands):  # before TABLE: SME shares its mnemonics
        return _Found(pos, stop, inst_sme.encode(mnemonic, operands))
    group = TABLE[arch].get(mnemonic)
    if group is None:
        if arch == "arm":
            _check_arm_mnemonic(mnemonic)
        return None
    return _Found(pos, stop, encode_instruction(mnemonic, group, operands))


def _check_arm_mnemonic(mnemonic: str) -> None:
    """`vsdot.u8`, `vsdot` or `vsdoteq.s8` are not some other instruction: say what is wrong with them."""
    head = mnemonic.partition(".")[0]
    if head in ARM_BASES:
        raise Malformed(f"`{mnemonic}`: the data type must be written as in `{ARM_BASES[head]}`")
    if head[-2:] in CONDITIONS and head[:-2] in ARM_BASES:
        raise Malformed(f"`{mnemonic}`: {head[:-2]} is unconditional; write `{ARM_BASES[head[:-2]]}`")


def _statements(code: str) -> list[tuple[int, int]]:
    """Spans of the `;`-separated statements of a masked line (strings are masked, so `;` there is `x`)."""
    spans, start = [], 0
    for m in re.finditer(";", code):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(code)))
    return spans


@dataclass
class _State:
    """What carries from one line to the next: an open block comment, a directive continued with `\\`."""

    in_block: bool = False
    directive: bool = False


def _rewrite_line(arch: str, line: str, state: _State) -> str:
    code, state.in_block, directive = _mask(arch, line, state.in_block, state.directive)
    body = code.rstrip()
    continued = body.endswith("\\")  # preprocessor line continuation
    state.directive = directive and line.rstrip().endswith("\\")
    if continued:
        code = code[: len(body) - 1] + " " + code[len(body) :]
    found = [f for s, e in _statements(code) if (f := _find(arch, code, s, e)) is not None]
    if not found:
        return line
    if len(found) == 1 and not continued and not state.in_block and not code[found[0].end :].replace(";", "").strip():
        f = found[0]
        return f"{line[: f.start]}.inst 0x{f.word:08x}  {COMMENT[arch]} {line[f.start :]}"
    pieces, pos = [], 0
    for f in found:
        original = line[f.start : f.end]
        if "/*" in original or "*/" in original:
            original = " ".join(code[f.start : f.end].split())
        pieces += [line[pos : f.start], f".inst 0x{f.word:08x} /* {original} */"]
        pos = f.end
    pieces.append(line[pos:])
    return "".join(pieces)


def encode_line(arch: str, text: str) -> int | None:
    """The word for the one supported instruction on `text` (labels and comments allowed), None if there is none.

    Raises InstError (without a place) for a supported mnemonic with malformed operands or for two instructions.
    """
    code, _, _ = _mask(check_arch(arch), text, False)
    try:
        found = [f for s, e in _statements(code) if (f := _find(arch, code, s, e)) is not None]
    except Malformed as exc:
        raise InstError(str(exc)) from None
    if len(found) > 1:
        raise InstError(f"{len(found)} instructions in `{text.strip()}`; encode_line takes one")
    return found[0].word if found else None


def rewrite(arch: str, text: str, filename: str = "<input>") -> str:
    """`text` with every supported instruction replaced by its `.inst` word; every other line unchanged.

    Lines are split on `\\n` only (a `\\r` before it stays where it was), so the output has the same line count
    and the same line numbers as the input. Raises InstError with `filename:line: what is wrong`.
    """
    check_arch(arch)
    out = []
    state = _State()
    for lineno, line in enumerate(text.split("\n"), 1):
        try:
            out.append(_rewrite_line(arch, line, state))
        except Malformed as exc:
            raise InstError(str(exc), filename, lineno) from None
    return "\n".join(out)


# -- files ----------------------------------------------------------------------------------------------------


def _write_atomic(path: Path, data: bytes) -> None:
    """Write via a temporary file in the same directory and rename it over `path`: readers see old or new."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def convert_file(arch: str, source: str, output: str | None) -> None:
    """Rewrite file `source` into `output` (stdout for None or `-`); nothing is written when anything fails.

    Raises InstError for a malformed instruction, OSError when a file cannot be read or written.
    """
    check_arch(arch)
    text = Path(source).read_bytes().decode("utf-8", "surrogateescape")
    data = rewrite(arch, text, source).encode("utf-8", "surrogateescape")
    if output is None or output == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        _write_atomic(Path(output), data)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--arch", choices=ARCHES, default="aarch64", help="instruction set of the source (aarch64)")
    parser.add_argument("source", metavar="IN.S", help="assembly source to rewrite")
    parser.add_argument("-o", "--output", metavar="OUT.S", help="where to write the result (stdout if omitted)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="inst.py", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        convert_file(args.arch, args.source, args.output)
    except InstError as exc:
        print(exc, file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"{exc.filename or args.source}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
