"""The encoding tables of the `.inst` encoder: for each supported dot-product, matrix-multiply and BFloat16
instruction, its fixed bits and where each operand goes (bit layouts from the Arm ARM), and the encoding of one
instruction's operands against them. The preprocessing of assembly files around it is in inst.py.

The SME and SME2 forms (ZA tiles and array vectors, ZT0, `pn` predicates, multi-vector lists) are in inst_sme.py,
which inst.py asks first: an SME-shaped `sdot za.s[w8, 0, vgx2], …` is encoded there, `sdot z0.s, z1.b, z2.b`
here as before. This module's errors (InstError, Malformed) and its checks of an instruction's operands against a
mnemonic's forms (their count, none empty, the first that fits no form) are shared by both.

Standard library only: Meson runs inst.py, and so this module, from a bare source tree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

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
# arm Q registers are encoded as the D register 2*q in the same D:Vd / N:Vn / M:Vm fields. A row with `dq` operands
# stands for two forms: on D registers, and on Q registers with the Q bit set (A32_Q).

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
    vsdot.s8     fc200d00  dq=D  dq=N  dq=M
    vsdot.s8     fe200d00  dq=D  dq=N  d=M4[x1]
    vudot.u8     fc200d10  dq=D  dq=N  dq=M
    vudot.u8     fe200d10  dq=D  dq=N  d=M4[x1]
    vusdot.s8    fca00d00  dq=D  dq=N  dq=M
    vusdot.s8    fe800d00  dq=D  dq=N  d=M4[x1]
    vsudot.u8    fe800d10  dq=D  dq=N  d=M4[x1]
    # A32 matrix multiply (FEAT_AA32I8MM, FEAT_AA32BF16)
    vsmmla.s8    fc200c40  q=D  q=N  q=M
    vummla.u8    fc200c50  q=D  q=N  q=M
    vusmmla.s8   fca00c40  q=D  q=N  q=M
    vmmla.bf16   fc000c40  q=D  q=N  q=M
    # A32 BFloat16 (FEAT_AA32BF16)
    vdot.bf16    fc000d00  dq=D  dq=N  dq=M
    vdot.bf16    fe000d00  dq=D  dq=N  d=M4[x1]
    vfmab.bf16   fc300810  q=D  q=N  q=M
    vfmat.bf16   fc300850  q=D  q=N  q=M
    vfmab.bf16   fe300810  q=D  q=N  d=M3[x2]
    vfmat.bf16   fe300850  q=D  q=N  d=M3[x2]
    """,
}

CONDITIONS = ("eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le", "al")


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


A32_Q = 1 << 6


def _rows(arch: str) -> Iterator[tuple[str, list[str]]]:
    """The table's rows (the line, its words), each `dq` row as its D and its Q form."""
    for raw in _TABLE_TEXT[arch].splitlines():
        row = raw.split("#", 1)[0].split()
        if not any(op.startswith("dq=") for op in row):
            yield raw, row
            continue
        mnemonic, base, *ops = row
        yield raw, [mnemonic, base, *(op.replace("dq=", "d=") for op in ops)]
        yield raw, [mnemonic, f"{int(base, 16) | A32_Q:08x}", *(op.replace("dq=", "q=") for op in ops)]


def _load_table(arch: str) -> dict[str, tuple[Form, ...]]:
    forms: dict[str, list[Form]] = {}
    for raw, row in _rows(arch):
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
ARM_BASES = {name.split(".", 1)[0]: name for name in TABLE["arm"]}


def forms(arch: str) -> list[Form]:
    """Every supported form of `arch`, in table order."""
    return [form for group in TABLE[check_arch(arch)].values() for form in group]


def check_arch(arch: str) -> str:
    if arch not in ARCHES:
        raise InstError(f"unknown architecture {arch!r}; use {' or '.join(ARCHES)}")
    return arch


# -- operands -------------------------------------------------------------------------------------------------


class Malformed(Exception):
    """What is wrong with one instruction; the caller adds the file and line."""


def check_count(mnemonic: str, counts: Iterable[int], texts: Sequence[str], operand_text: str) -> None:
    """Malformed unless some form of the mnemonic (`counts`: their operand counts) takes as many operands."""
    wanted = sorted(set(counts))
    if len(texts) not in wanted:
        shown = " or ".join(map(str, wanted))
        raise Malformed(f"{mnemonic} takes {shown} operands, got {len(texts)} in `{operand_text.strip()}`")


def check_not_empty(mnemonic: str, texts: Sequence[str]) -> None:
    for position, text in enumerate(texts, 1):
        if not text:
            raise Malformed(f"{mnemonic}: operand {position} is empty")


def mismatch(mnemonic: str, texts: Sequence[str], best: int, shapes: Iterable[str]) -> Malformed:
    """The error of operands no form takes: the first operand that fits none of the forms that got furthest, and
    what those expect there."""
    expected = " or ".join(dict.fromkeys(shapes))
    after = f" after `{', '.join(texts[:best])}`" if best else ""
    return Malformed(f"{mnemonic}: operand {best + 1} is `{texts[best]}`, expected {expected}{after}")


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
        raise Malformed(f"{mnemonic}: operand {position} `{text}` is not a register{hint}")
    kind, reg, arrangement, index = m.groups()
    return _Operand(text, kind, int(reg), arrangement, None if index is None else int(index))


def encode_instruction(mnemonic: str, group: tuple[Form, ...], operand_text: str) -> int:
    texts = [t.strip() for t in operand_text.split(",")] if operand_text.strip() else []
    check_count(mnemonic, [len(f.operands) for f in group], texts, operand_text)
    check_not_empty(mnemonic, texts)
    ops = [_parse_operand(mnemonic, position, text) for position, text in enumerate(texts, 1)]
    candidates = [f for f in group if len(f.operands) == len(ops)]

    def matched(form: Form) -> int:
        return next((i for i, (op, spec) in enumerate(zip(ops, form.operands, strict=True)) if not op.fits(spec)), -1)

    for form in candidates:
        if matched(form) == -1:
            return form.encode(_check_ranges(mnemonic, form, ops))
    best = max(matched(f) for f in candidates)
    raise mismatch(mnemonic, texts, best, [f.operands[best].shape() for f in candidates if matched(f) == best])


def _check_ranges(mnemonic: str, form: Form, ops: list[_Operand]) -> list[tuple[int, int | None]]:
    values: list[tuple[int, int | None]] = []
    for position, (op, spec) in enumerate(zip(ops, form.operands, strict=True), 1):
        if op.reg >= spec.reg_limit:
            role = " for the indexed operand" if spec.index_bits else ""
            raise Malformed(
                f"{mnemonic}: operand {position} `{op.text}`: register out of range, "
                f"must be {spec.kind}0-{spec.kind}{spec.reg_limit - 1}{role}"
            )
        if op.index is not None and op.index >= spec.lanes:
            raise Malformed(
                f"{mnemonic}: operand {position} `{op.text}`: lane index {op.index} out of range 0..{spec.lanes - 1}"
            )
        values.append((op.reg, op.index))
    return values
