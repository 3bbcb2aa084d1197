"""Rewrite dot-product, matrix-multiply and BFloat16 instructions as `.inst 0x########` words.

Old assemblers reject `sdot`, `smmla`, `bfmmla`, … even when the running CPU has them. This module encodes such
instructions itself (bit layouts from the Arm ARM) and emits `.inst 0x########  // <original>` (`@` on arm), so an
assembly kernel builds with any assembler; every other line is kept byte-for-byte and line numbers do not move.

Meson's generator() runs this file as a script from a bare source tree, so it uses the standard library only:

    python3 src/isaforge/inst.py --arch aarch64|arm IN.S -o OUT.S

`isaforge inst` (isaforge/commands/inst.py) is the same code behind the CLI.

What a line is, as the C preprocessor and GNU as see it: `//` and `/* … */` comments everywhere, `@` comments on
arm, `;` separates statements, labels (`1:`, `name:`) may precede an instruction. `#` lines (preprocessor
directives with their `\\` continuation lines, `#` comments) are left alone, so a `#define` body is not rewritten.
An instruction with a supported mnemonic and malformed operands (wrong arrangement, register or lane index out of
range, wrong register for the indexed operand, an operand that is not a register such as a macro argument) stops
the rewrite with `file:line: what is wrong`. Unknown mnemonics pass untouched.

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

from isaforge.errors import IsaforgeError

ARCHES = ("aarch64", "arm")
COMMENT = {"aarch64": "//", "arm": "@"}


class InstError(IsaforgeError):
    """A supported instruction that cannot be encoded; `str()` is `file:line: what is wrong` when the place is known."""

    def __init__(self, what: str, filename: str | None = None, line: int | None = None) -> None:
        self.what = what
        self.filename = filename
        self.line = line
        super().__init__(what if filename is None else f"{filename}:{line}: {what}")


# -- the encoding tables ----------------------------------------------------------------------------------------
#
# One row per form: mnemonic, fixed bits (hex), then one spec per operand: `kind[.arrangement]=field[index]`.
# A field names the instruction bits that hold the register number (or, for an index, the lane number), most
# significant bit first; the number of bits is also the range check (`m3` holds z0-z7, `HL` holds lanes 0..3).
# arm Q registers are encoded as the D register 2*q in the same D:Vd / N:Vn / M:Vm fields.

_FIELDS = {
    "aarch64": {
        "d": (4, 3, 2, 1, 0),  # Rd / Zda
        "n": (9, 8, 7, 6, 5),  # Rn / Zn
        "m": (20, 19, 18, 17, 16),  # M:Rm / Zm
        "m4": (19, 18, 17, 16),  # Rm with M used for the lane / Zm of 64-bit indexed forms
        "m3": (18, 17, 16),  # Zm of 32-bit indexed SVE forms
    },
    "arm": {
        "D": (22, 15, 14, 13, 12),  # D:Vd
        "N": (7, 19, 18, 17, 16),  # N:Vn
        "M": (5, 3, 2, 1, 0),  # M:Vm
        "M4": (3, 2, 1, 0),  # Vm of the by-scalar forms (M is the lane)
        "M3": (2, 1, 0),  # Vm<2:0> of vfmab/vfmat by scalar (M:Vm<3> is the lane)
    },
}
_INDEX_FIELDS = {
    "aarch64": {
        "HL": (11, 21),  # Advanced SIMD by element, 4 lanes
        "HLM": (11, 21, 20),  # Advanced SIMD by element, 8 lanes
        "i1": (20,),  # SVE 64-bit indexed
        "i2": (20, 19),  # SVE 32-bit indexed
        "i3": (20, 19, 11),  # SVE bfmlalb/bfmlalt indexed: i3h:i3l
    },
    "arm": {
        "x1": (5,),  # M
        "x2": (5, 3),  # M:Vm<3>
    },
}

_TABLE_TEXT = {
    "aarch64": """
    # Advanced SIMD dot products (FEAT_DotProd, FEAT_I8MM)
    sdot     0e809400  v.2s=d  v.8b=n   v.8b=m
    sdot     4e809400  v.4s=d  v.16b=n  v.16b=m
    sdot     0f80e000  v.2s=d  v.8b=n   v.4b=m[HL]
    sdot     4f80e000  v.4s=d  v.16b=n  v.4b=m[HL]
    udot     2e809400  v.2s=d  v.8b=n   v.8b=m
    udot     6e809400  v.4s=d  v.16b=n  v.16b=m
    udot     2f80e000  v.2s=d  v.8b=n   v.4b=m[HL]
    udot     6f80e000  v.4s=d  v.16b=n  v.4b=m[HL]
    usdot    0e809c00  v.2s=d  v.8b=n   v.8b=m
    usdot    4e809c00  v.4s=d  v.16b=n  v.16b=m
    usdot    0f80f000  v.2s=d  v.8b=n   v.4b=m[HL]
    usdot    4f80f000  v.4s=d  v.16b=n  v.4b=m[HL]
    sudot    0f00f000  v.2s=d  v.8b=n   v.4b=m[HL]
    sudot    4f00f000  v.4s=d  v.16b=n  v.4b=m[HL]
    # Advanced SIMD matrix multiply (FEAT_I8MM, FEAT_BF16)
    smmla    4e80a400  v.4s=d  v.16b=n  v.16b=m
    ummla    6e80a400  v.4s=d  v.16b=n  v.16b=m
    usmmla   4e80ac00  v.4s=d  v.16b=n  v.16b=m
    bfmmla   6e40ec00  v.4s=d  v.8h=n   v.8h=m
    # Advanced SIMD and scalar BFloat16 (FEAT_BF16)
    bfdot    2e40fc00  v.2s=d  v.4h=n   v.4h=m
    bfdot    6e40fc00  v.4s=d  v.8h=n   v.8h=m
    bfdot    0f40f000  v.2s=d  v.4h=n   v.2h=m[HL]
    bfdot    4f40f000  v.4s=d  v.8h=n   v.2h=m[HL]
    bfmlalb  2ec0fc00  v.4s=d  v.8h=n   v.8h=m
    bfmlalt  6ec0fc00  v.4s=d  v.8h=n   v.8h=m
    bfmlalb  0fc0f000  v.4s=d  v.8h=n   v.h=m4[HLM]
    bfmlalt  4fc0f000  v.4s=d  v.8h=n   v.h=m4[HLM]
    bfcvt    1e634000  h=d     s=n
    bfcvtn   0ea16800  v.4h=d  v.4s=n
    bfcvtn2  4ea16800  v.8h=d  v.4s=n
    # SVE integer dot products (FEAT_SVE, FEAT_I8MM)
    sdot     44800000  z.s=d  z.b=n  z.b=m
    sdot     44c00000  z.d=d  z.h=n  z.h=m
    sdot     44a00000  z.s=d  z.b=n  z.b=m3[i2]
    sdot     44e00000  z.d=d  z.h=n  z.h=m4[i1]
    udot     44800400  z.s=d  z.b=n  z.b=m
    udot     44c00400  z.d=d  z.h=n  z.h=m
    udot     44a00400  z.s=d  z.b=n  z.b=m3[i2]
    udot     44e00400  z.d=d  z.h=n  z.h=m4[i1]
    usdot    44807800  z.s=d  z.b=n  z.b=m
    usdot    44a01800  z.s=d  z.b=n  z.b=m3[i2]
    sudot    44a01c00  z.s=d  z.b=n  z.b=m3[i2]
    # SVE matrix multiply (FEAT_I8MM, FEAT_BF16)
    smmla    45009800  z.s=d  z.b=n  z.b=m
    usmmla   45809800  z.s=d  z.b=n  z.b=m
    ummla    45c09800  z.s=d  z.b=n  z.b=m
    bfmmla   6460e400  z.s=d  z.h=n  z.h=m
    # SVE BFloat16 (FEAT_BF16)
    bfdot    64608000  z.s=d  z.h=n  z.h=m
    bfdot    64604000  z.s=d  z.h=n  z.h=m3[i2]
    bfmlalb  64e08000  z.s=d  z.h=n  z.h=m
    bfmlalt  64e08400  z.s=d  z.h=n  z.h=m
    bfmlalb  64e04000  z.s=d  z.h=n  z.h=m3[i3]
    bfmlalt  64e04400  z.s=d  z.h=n  z.h=m3[i3]
    """,
    "arm": """
    # A32 dot products (FEAT_DotProd, FEAT_AA32I8MM)
    vsdot.s8     fc200d00  d=D  d=N  d=M
    vsdot.s8     fc200d40  q=D  q=N  q=M
    vsdot.s8     fe200d00  d=D  d=N  d=M4[x1]
    vsdot.s8     fe200d40  q=D  q=N  d=M4[x1]
    vudot.u8     fc200d10  d=D  d=N  d=M
    vudot.u8     fc200d50  q=D  q=N  q=M
    vudot.u8     fe200d10  d=D  d=N  d=M4[x1]
    vudot.u8     fe200d50  q=D  q=N  d=M4[x1]
    vusdot.s8    fca00d00  d=D  d=N  d=M
    vusdot.s8    fca00d40  q=D  q=N  q=M
    vusdot.s8    fe800d00  d=D  d=N  d=M4[x1]
    vusdot.s8    fe800d40  q=D  q=N  d=M4[x1]
    vsudot.u8    fe800d10  d=D  d=N  d=M4[x1]
    vsudot.u8    fe800d50  q=D  q=N  d=M4[x1]
    # A32 matrix multiply (FEAT_AA32I8MM, FEAT_AA32BF16)
    vsmmla.s8    fc200c40  q=D  q=N  q=M
    vummla.u8    fc200c50  q=D  q=N  q=M
    vusmmla.s8   fca00c40  q=D  q=N  q=M
    vmmla.bf16   fc000c40  q=D  q=N  q=M
    # A32 BFloat16 (FEAT_AA32BF16)
    vdot.bf16    fc000d00  d=D  d=N  d=M
    vdot.bf16    fc000d40  q=D  q=N  q=M
    vdot.bf16    fe000d00  d=D  d=N  d=M4[x1]
    vdot.bf16    fe000d40  q=D  q=N  d=M4[x1]
    vfmab.bf16   fc300810  q=D  q=N  q=M
    vfmat.bf16   fc300850  q=D  q=N  q=M
    vfmab.bf16   fe300810  q=D  q=N  d=M3[x2]
    vfmat.bf16   fe300850  q=D  q=N  d=M3[x2]
    """,
}

_CONDITIONS = ("eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le", "al")


@dataclass(frozen=True)
class OperandSpec:
    kind: str  # register letter: v z h s (aarch64), d q (arm)
    arrangement: str | None  # "4s", "16b", "b", … or None
    reg_bits: tuple[int, ...]  # instruction bits of the register number, most significant first
    index_bits: tuple[int, ...] | None  # instruction bits of the lane number, or None when not indexed

    @property
    def scale(self) -> int:
        """arm Q registers are encoded as their first D register."""
        return 2 if self.kind == "q" else 1

    @property
    def reg_limit(self) -> int:
        return (1 << len(self.reg_bits)) // self.scale

    @property
    def lanes(self) -> int:
        return 1 << len(self.index_bits) if self.index_bits else 0

    def shape(self) -> str:
        """How the operand is written, e.g. `v<n>.4b[<i>]`."""
        arrangement = f".{self.arrangement}" if self.arrangement else ""
        return f"{self.kind}<n>{arrangement}{'[<i>]' if self.index_bits else ''}"

    def text(self, reg: int, index: int | None = None) -> str:
        """The operand written out for register `reg` (and lane `index`), in the disassemblers' spelling."""
        arrangement = f".{self.arrangement}" if self.arrangement else ""
        return f"{self.kind}{reg}{arrangement}" + (f"[{index}]" if self.index_bits else "")


@dataclass(frozen=True)
class Form:
    mnemonic: str
    base: int
    operands: tuple[OperandSpec, ...]

    def encode(self, values: Sequence[tuple[int, int | None]]) -> int:
        """The instruction word for (register, lane) per operand; values must already be in range."""
        word = self.base
        for spec, (reg, index) in zip(self.operands, values, strict=True):
            word |= _place(reg * spec.scale, spec.reg_bits)
            if spec.index_bits:
                assert index is not None
                word |= _place(index, spec.index_bits)
        return word

    def text(self, values: Sequence[tuple[int, int | None]]) -> str:
        ops = ", ".join(spec.text(reg, index) for spec, (reg, index) in zip(self.operands, values, strict=True))
        return f"{self.mnemonic} {ops}"


def _place(value: int, bits: tuple[int, ...]) -> int:
    word = 0
    for position, bit in enumerate(reversed(bits)):
        if value >> position & 1:
            word |= 1 << bit
    if value >> len(bits):
        raise ValueError(f"{value} does not fit in {len(bits)} bits")
    return word


_SPEC = re.compile(r"(?P<kind>[a-z])(?:\.(?P<arr>\w+))?=(?P<field>\w+)(?:\[(?P<index>\w+)\])?")


def _load_table(arch: str) -> dict[str, tuple[Form, ...]]:
    forms: dict[str, list[Form]] = {}
    for raw in _TABLE_TEXT[arch].splitlines():
        row = raw.split("#", 1)[0].split()
        if not row:
            continue
        mnemonic, base, *ops = row
        specs = []
        for op in ops:
            m = _SPEC.fullmatch(op)
            if m is None:
                raise ValueError(f"bad operand spec {op!r} in {raw!r}")
            index = m["index"]
            specs.append(
                OperandSpec(
                    m["kind"], m["arr"], _FIELDS[arch][m["field"]], _INDEX_FIELDS[arch][index] if index else None
                )
            )
        forms.setdefault(mnemonic, []).append(Form(mnemonic, int(base, 16), tuple(specs)))
    return {name: tuple(group) for name, group in forms.items()}


TABLE: dict[str, dict[str, tuple[Form, ...]]] = {arch: _load_table(arch) for arch in ARCHES}
_ARM_BASES = {name.split(".", 1)[0]: name for name in TABLE["arm"]}


def forms(arch: str) -> list[Form]:
    """Every supported form of `arch`, in table order."""
    return [form for group in TABLE[_check_arch(arch)].values() for form in group]


def _check_arch(arch: str) -> str:
    if arch not in ARCHES:
        raise InstError(f"unknown architecture {arch!r}; use {' or '.join(ARCHES)}")
    return arch


# -- operands -------------------------------------------------------------------------------------------------


class _Malformed(Exception):
    """What is wrong with one instruction; the caller adds the file and line."""


@dataclass(frozen=True)
class _Operand:
    text: str
    kind: str
    reg: int
    arrangement: str | None
    index: int | None

    def fits(self, spec: OperandSpec) -> bool:
        return (
            self.kind == spec.kind
            and self.arrangement == spec.arrangement
            and (self.index is not None) == (spec.index_bits is not None)
        )


_OPERAND = re.compile(r"([a-z]+?)(\d+)(?:\.(\w+))?(?:\s*\[\s*(\d+)\s*\])?")


def _parse_operand(mnemonic: str, position: int, text: str) -> _Operand:
    m = _OPERAND.fullmatch(text.lower())
    if m is None:
        hint = " (macro arguments and preprocessor names cannot be encoded)" if re.search(r"[\\A-Za-z_]", text) else ""
        raise _Malformed(f"{mnemonic}: operand {position} `{text}` is not a register{hint}")
    kind, reg, arrangement, index = m.groups()
    return _Operand(text, kind, int(reg), arrangement, None if index is None else int(index))


def _encode(mnemonic: str, group: tuple[Form, ...], operand_text: str) -> int:
    texts = [t.strip() for t in operand_text.split(",")] if operand_text.strip() else []
    counts = sorted({len(f.operands) for f in group})
    if len(texts) not in counts:
        wanted = " or ".join(map(str, counts))
        raise _Malformed(f"{mnemonic} takes {wanted} operands, got {len(texts)} in `{operand_text.strip()}`")
    for position, text in enumerate(texts, 1):
        if not text:
            raise _Malformed(f"{mnemonic}: operand {position} is empty")
    ops = [_parse_operand(mnemonic, position, text) for position, text in enumerate(texts, 1)]
    candidates = [f for f in group if len(f.operands) == len(ops)]

    def matched(form: Form) -> int:
        return next((i for i, (op, spec) in enumerate(zip(ops, form.operands, strict=True)) if not op.fits(spec)), -1)

    for form in candidates:
        if matched(form) == -1:
            return form.encode(_check_ranges(mnemonic, form, ops))
    best = max(matched(f) for f in candidates)
    shapes = list(dict.fromkeys(f.operands[best].shape() for f in candidates if matched(f) == best))
    after = f" after `{', '.join(op.text for op in ops[:best])}`" if best else ""
    raise _Malformed(f"{mnemonic}: operand {best + 1} is `{ops[best].text}`, expected {' or '.join(shapes)}{after}")


def _check_ranges(mnemonic: str, form: Form, ops: list[_Operand]) -> list[tuple[int, int | None]]:
    values: list[tuple[int, int | None]] = []
    for position, (op, spec) in enumerate(zip(ops, form.operands, strict=True), 1):
        if op.reg >= spec.reg_limit:
            role = " for the indexed operand" if spec.index_bits else ""
            raise _Malformed(
                f"{mnemonic}: operand {position} `{op.text}`: register out of range, "
                f"must be {spec.kind}0-{spec.kind}{spec.reg_limit - 1}{role}"
            )
        if op.index is not None and op.index >= spec.lanes:
            raise _Malformed(
                f"{mnemonic}: operand {position} `{op.text}`: lane index {op.index} out of range 0..{spec.lanes - 1}"
            )
        values.append((op.reg, op.index))
    return values


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
    group = TABLE[arch].get(mnemonic)
    if group is None:
        if arch == "arm":
            _check_arm_mnemonic(mnemonic)
        return None
    stop = start + len(code[start:end].rstrip())
    return _Found(pos, stop, _encode(mnemonic, group, code[m.end() : stop]))


def _check_arm_mnemonic(mnemonic: str) -> None:
    """`vsdot.u8`, `vsdot` or `vsdoteq.s8` are not some other instruction: say what is wrong with them."""
    head = mnemonic.partition(".")[0]
    if head in _ARM_BASES:
        raise _Malformed(f"`{mnemonic}`: the data type must be written as in `{_ARM_BASES[head]}`")
    if head[-2:] in _CONDITIONS and head[:-2] in _ARM_BASES:
        raise _Malformed(f"`{mnemonic}`: {head[:-2]} is unconditional; write `{_ARM_BASES[head[:-2]]}`")


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
    code, _, _ = _mask(_check_arch(arch), text, False)
    try:
        found = [f for s, e in _statements(code) if (f := _find(arch, code, s, e)) is not None]
    except _Malformed as exc:
        raise InstError(str(exc)) from None
    if len(found) > 1:
        raise InstError(f"{len(found)} instructions in `{text.strip()}`; encode_line takes one")
    return found[0].word if found else None


def rewrite(arch: str, text: str, filename: str = "<input>") -> str:
    """`text` with every supported instruction replaced by its `.inst` word; every other line unchanged.

    Lines are split on `\\n` only (a `\\r` before it stays where it was), so the output has the same line count
    and the same line numbers as the input. Raises InstError with `filename:line: what is wrong`.
    """
    _check_arch(arch)
    out = []
    state = _State()
    for lineno, line in enumerate(text.split("\n"), 1):
        try:
            out.append(_rewrite_line(arch, line, state))
        except _Malformed as exc:
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
    _check_arch(arch)
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
