"""The SME and SME2 forms of the `.inst` encoder (aarch64): ZA tiles, ZA array vectors, ZT0, predicate-as-counter
registers and multi-vector lists. inst.py asks `claims()` first and then `encode()`; the other forms are in
inst_encoding.py.

SME instructions share mnemonics with ordinary ones (`ld1w`, `mov`, `ptrue`, `fmla`, `sdot`, …). A line is ours
when its mnemonic exists only in SME (`fmopa`, `mova`, `smstart`, …) or when its operands are SME-shaped: they
name ZA (`za`, `za0h.s[…]`, `za.s[…]`), ZT0, a `pn` register or a list of several Z registers. Such a line must
match one of the forms below, else it is Malformed (wrong shape, register or immediate out of range, misaligned
list); any other line is left for inst_encoding.py, or untouched when that has no form either.

A form is written as the assembler spells it, with `<name>` placeholders for the numbers it carries; each placeholder
has a field (its instruction bits, most significant first; `!` is a value bit that must be 0 and is not stored, as
for the aligned first register of a list or a scaled immediate). `<name+k>` is not stored but must equal name+k
(the last register of a list, the last slice of a group). `<n:xsp>`, `<n:xzr>`: an X register, or SP / XZR as 31.

Standard library only: Meson runs inst.py, and so this module, from a bare source tree.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from isaforge.inst_encoding import Malformed

# -- fields and placeholders ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """Where a placeholder's value goes: `bits` (None for a value bit that must be 0), signedness, register base."""

    bits: tuple[int | None, ...]
    signed: bool = False
    base: int = 0

    def domain(self) -> list[int]:
        """Every value the field takes, in order."""
        return list(_domain(self))

    def place(self, value: int) -> int:
        raw, width, word = value - self.base, len(self.bits), 0
        for i, bit in enumerate(self.bits):
            if bit is not None and raw >> (width - 1 - i) & 1:
                word |= 1 << bit
        return word


@functools.cache
def _domain(field: Field) -> tuple[int, ...]:
    width = len(field.bits)
    low, high = (-(1 << width - 1), (1 << width - 1) - 1) if field.signed else (0, (1 << width) - 1)
    zero = sum(1 << (width - 1 - i) for i, b in enumerate(field.bits) if b is None)
    return tuple(v + field.base for v in range(low, high + 1) if not (v & zero))


@functools.cache
def _holds(field: Field) -> frozenset[int]:
    return frozenset(_domain(field))


def _parse_field(text: str) -> tuple[str, Field]:
    """`name[~][@base]=hi:lo,b,!,…`; `~` signed, `@base` subtracted first (`w<s>` with s@12 holds w12-w15)."""
    m = re.fullmatch(r"(\w+?)(~)?(?:@(\d+))?=([\d:,!]+)", text)
    if m is None:
        raise ValueError(f"bad field {text!r}")
    bits: list[int | None] = []
    for part in m[4].split(","):
        if part == "!":
            bits.append(None)
        elif ":" in part:
            hi, lo = map(int, part.split(":"))
            bits += range(hi, lo - 1, -1)
        else:
            bits.append(int(part))
    return m[1], Field(tuple(bits), bool(m[2]), int(m[3] or 0))


@dataclass(frozen=True)
class Slot:
    """One number of an operand's template: a placeholder (stored or derived) or a literal."""

    name: str | None  # None for a literal
    kind: str  # "#" a number, "xsp" / "xzr" / "x" an X register
    prefix: str  # what the template has just before it (`z`, `za`, `w`, `#`, …), for messages and wrap-around
    offset: int = 0  # for a derived placeholder: name+offset
    derived: bool = False
    literal: int | None = None

    def shows(self, value: int) -> str:
        if self.kind != "#":
            return "sp" if value == 31 and self.kind == "xsp" else "xzr" if value == 31 else f"x{value}"
        return f"{self.prefix if self.prefix[-1:].isalpha() else ''}{value}"


_X = r"(?<![a-z0-9_])(?:x\d+|sp|xzr)(?![a-z0-9_])"
_TOKEN = re.compile(rf"<(\w+)(?::(\w+))?(?:\+(\d+))?>|{_X}|-?\d+")
_NUMBER = re.compile(rf"({_X})|-?\d+")
_Value = tuple[str, int]  # ("x", n) / ("sp", 31) / ("xzr", 31) / ("#", n)


def _signature(text: str) -> tuple[str, list[_Value]]:
    """Normalised operand text with its numbers replaced by `#` and its X registers by `X`, and their values."""
    values: list[_Value] = []

    def sub(m: re.Match[str]) -> str:
        if m[1] is None:
            values.append(("#", int(m[0])))
            return "#"
        token = m[1]
        values.append(("x", int(token[1:])) if token[0] == "x" and token != "xzr" else (token, 31))
        return "X"

    return _NUMBER.sub(sub, text), values


@dataclass(frozen=True)
class Template:
    """One operand of a form: its normalised text, signature and slots."""

    text: str  # as written in the table (spaces kept), for generated test lines and messages
    signature: str
    slots: tuple[Slot, ...]

    @classmethod
    def parse(cls, text: str) -> Template:
        norm = _normalise(text)
        slots: list[Slot] = []
        out, pos = [], 0
        for m in _TOKEN.finditer(norm):
            prefix = re.search(r"[a-z#]*$", norm[: m.start()])
            before = prefix.group() if prefix else ""
            if m[0].startswith("<"):
                kind = m[2] or "#"
                slots.append(Slot(m[1], kind, before, int(m[3] or 0), m[3] is not None))
                out += [norm[pos : m.start()], "#" if kind == "#" else "X"]
            elif m[0][0] in "xs" or m[0] == "xzr":
                raise ValueError(f"literal X register in template {text!r}")
            else:
                slots.append(Slot(None, "#", before, literal=int(m[0])))
                out += [norm[pos : m.start()], "#"]
            pos = m.end()
        out.append(norm[pos:])
        return cls(text.strip(), "".join(out), tuple(slots))

    def shape(self) -> str:
        """How the operand is written, for messages: `za<d>.s`, `[<Xn|SP>, <m>, lsl #2]`."""
        names = {"xsp": "<X{}|SP>", "xzr": "<X{}|XZR>", "x": "<X{}>"}
        return re.sub(
            r"<(\w+)(?::(\w+))?(\+\d+)?>",
            lambda m: names[m[2]].format(m[1]) if m[2] else f"<{m[1]}{m[3] or ''}>",
            self.text,
        )


def _normalise(text: str) -> str:
    return re.sub(r"\s+", "", text.lower())


# -- forms ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Form:
    mnemonic: str
    base: int
    operands: tuple[Template, ...]
    fields: dict[str, Field]
    feature: str  # "sme", "sme-i16i64", "sme-f64f64" (GNU as 2.40 knows these) or "sme2"

    def placeholders(self) -> list[Slot]:
        return [s for t in self.operands for s in t.slots if s.name is not None and not s.derived]

    def domain(self, slot: Slot) -> list[int]:
        values = self.fields[slot.name].domain() if slot.name in self.fields else []
        if slot.kind in ("xsp", "xzr"):
            values = [v for v in values if v < 31] + [31]
        elif slot.kind == "x":
            values = [v for v in values if v < 31]
        return values

    def encode(self, values: dict[str, int]) -> int:
        word = self.base
        for name, field in self.fields.items():
            word |= field.place(values[name])
        return word

    def text(self, values: dict[str, int]) -> str:
        """The instruction written out for `values` (a value per stored placeholder)."""

        def sub(m: re.Match[str]) -> str:
            slot = Slot(m[1], m[2] or "#", "")
            value = _derive(values[m[1]], int(m[3] or 0), _prefix_of(m.string, m.start()))
            return slot.shows(value) if slot.kind != "#" else str(value)

        ops = ", ".join(re.sub(r"<(\w+)(?::(\w+))?(?:\+(\d+))?>", sub, t.text) for t in self.operands)
        return f"{self.mnemonic} {ops}".strip()


def _prefix_of(text: str, end: int) -> str:
    m = re.search(r"[a-z#]*$", text[:end])
    return m.group() if m else ""


def _derive(value: int, offset: int, prefix: str) -> int:
    """name+offset; Z register numbers wrap (a list `{z31.s, z0.s}` is consecutive)."""
    return (value + offset) % 32 if prefix == "z" and offset else value + offset


# -- the table --------------------------------------------------------------------------------------------------
#
# Rows: mnemonic, fixed bits, feature, `|` operands `|` fields. Families that differ only in an element size, a
# horizontal/vertical slice or a vector-group count are written once and expanded by the generators below.

_SIMPLE = """
smstart  d503477f  sme        |                                 |
smstart  d503437f  sme        | sm                              |
smstart  d503457f  sme        | za                              |
smstop   d503467f  sme        |                                 |
smstop   d503427f  sme        | sm                              |
smstop   d503447f  sme        | za                              |
rdsvl    04bf5800  sme        | <d:xzr>, #<i>                   | d=4:0 i~=10:5
zero     c0480001  sme2       | {zt0}                           |
ldr      e11f8000  sme2       | zt0, [<n:xsp>]                  | n=9:5
str      e13f8000  sme2       | zt0, [<n:xsp>]                  | n=9:5
"""

_SIZE = {"b": 0, "h": 1, "s": 2, "d": 3}
_PMN = "p<n>/m, p<m>/m"
_PMN_FIELDS = "n=12:10 m=15:13 zn=9:5"

# mnemonic, fixed bits, tile size, source element size, feature
_OUTER = [
    ("fmopa", 0x80800000, "s", "s", "sme"),
    ("fmops", 0x80800010, "s", "s", "sme"),
    ("fmopa", 0x81A00000, "s", "h", "sme"),
    ("fmops", 0x81A00010, "s", "h", "sme"),
    ("bfmopa", 0x81800000, "s", "h", "sme"),
    ("bfmops", 0x81800010, "s", "h", "sme"),
    ("smopa", 0xA0800000, "s", "b", "sme"),
    ("smops", 0xA0800010, "s", "b", "sme"),
    ("umopa", 0xA1A00000, "s", "b", "sme"),
    ("umops", 0xA1A00010, "s", "b", "sme"),
    ("sumopa", 0xA0A00000, "s", "b", "sme"),
    ("sumops", 0xA0A00010, "s", "b", "sme"),
    ("usmopa", 0xA1800000, "s", "b", "sme"),
    ("usmops", 0xA1800010, "s", "b", "sme"),
    ("fmopa", 0x80C00000, "d", "d", "sme-f64f64"),
    ("fmops", 0x80C00010, "d", "d", "sme-f64f64"),
    ("smopa", 0xA0C00000, "d", "h", "sme-i16i64"),
    ("smops", 0xA0C00010, "d", "h", "sme-i16i64"),
    ("umopa", 0xA1E00000, "d", "h", "sme-i16i64"),
    ("umops", 0xA1E00010, "d", "h", "sme-i16i64"),
    ("sumopa", 0xA0E00000, "d", "h", "sme-i16i64"),
    ("sumops", 0xA0E00010, "d", "h", "sme-i16i64"),
    ("usmopa", 0xA1C00000, "d", "h", "sme-i16i64"),
    ("usmops", 0xA1C00010, "d", "h", "sme-i16i64"),
    ("smopa", 0xA0800008, "s", "h", "sme2"),
    ("smops", 0xA0800018, "s", "h", "sme2"),
    ("umopa", 0xA1800008, "s", "h", "sme2"),
    ("umops", 0xA1800018, "s", "h", "sme2"),
    ("bmopa", 0x80800008, "s", "s", "sme2"),
    ("bmops", 0x80800018, "s", "s", "sme2"),
]

Row = tuple[str, int, str, str, str]  # mnemonic, fixed bits, feature, operands, fields


def _outer() -> Iterator[Row]:
    for mnemonic, base, tile, src, feature in _OUTER:
        tile_bits = "d=1:0" if tile == "s" else "d=2:0"
        ops = f"za<d>.{tile}, {_PMN}, z<zn>.{src}, z<zm>.{src}"
        yield mnemonic, base, feature, ops, f"{tile_bits} {_PMN_FIELDS} zm=20:16"
    for mnemonic, base, tile, feature in (
        ("addha", 0xC0900000, "s", "sme"),
        ("addva", 0xC0910000, "s", "sme"),
        ("addha", 0xC0D00000, "d", "sme-i16i64"),
        ("addva", 0xC0D10000, "d", "sme-i16i64"),
    ):
        tile_bits = "d=1:0" if tile == "s" else "d=2:0"
        yield mnemonic, base, feature, f"za<d>.{tile}, {_PMN}, z<zn>.{tile}", f"{tile_bits} {_PMN_FIELDS}"


# A tile slice per element size: how the tile is written and where tile and slice offset go when they share the
# low four bits (ld1/st1, mova to a tile; mova from a tile has them five bits up).
_SLICE = {
    "b": ("za0{hv}.b[w<s>, <o>]", ("o=3:0",)),
    "h": ("za<t>{hv}.h[w<s>, <o>]", ("t=3", "o=2:0")),
    "s": ("za<t>{hv}.s[w<s>, <o>]", ("t=3:2", "o=1:0")),
    "d": ("za<t>{hv}.d[w<s>, <o>]", ("t=3:1", "o=0")),
    "q": ("za<t>{hv}.q[w<s>, 0]", ("t=3:0",)),
}
_LD1 = {"b": ("ld1b", 0xE0000000, ""), "h": ("ld1h", 0xE0400000, ", lsl #1"), "s": ("ld1w", 0xE0800000, ", lsl #2")}
_LD1 |= {"d": ("ld1d", 0xE0C00000, ", lsl #3"), "q": ("ld1q", 0xE1C00000, ", lsl #4")}
_HV = (("h", 0), ("v", 1 << 15))


def _shift(fields: Sequence[str], by: int) -> str:
    """Tile/offset fields moved `by` bits up."""
    out = []
    for field in fields:
        name, _, bits = field.partition("=")
        moved = [":".join(str(int(b) + by) for b in part.split(":")) for part in bits.split(",")]
        out.append(f"{name}={','.join(moved)}")
    return " ".join(out)


def _tile_slices() -> Iterator[Row]:
    for size, (tile, fields) in _SLICE.items():
        mnemonic, base, lsl = _LD1[size]
        for hv, v_bit in _HV:
            slice_ = tile.format(hv=hv)
            common = f"s@12=14:13 g=12:10 n=9:5 {' '.join(fields)}"
            for load, store in ((mnemonic, 0), ("st1" + mnemonic[3:], 1 << 21)):
                pred = "p<g>/z" if not store else "p<g>"
                word = base | v_bit | store
                yield load, word, "sme", f"{{{slice_}}}, {pred}, [<n:xsp>, <m:xzr>{lsl}]", f"{common} m=20:16"
                yield load, word | 0x1F0000, "sme", f"{{{slice_}}}, {pred}, [<n:xsp>]", common
            for mova in ("mova", "mov"):
                to_vec = 0xC0020000 | _SIZE.get(size, 3) << 22 | (1 << 16 if size == "q" else 0) | v_bit
                to_tile = 0xC0000000 | _SIZE.get(size, 3) << 22 | (1 << 16 if size == "q" else 0) | v_bit
                yield (
                    mova,
                    to_vec,
                    "sme",
                    f"z<d>.{size}, p<g>/m, {slice_}",
                    f"s@12=14:13 g=12:10 d=4:0 {_shift(fields, 5)}",
                )
                yield mova, to_tile, "sme", f"{slice_}, p<g>/m, z<n>.{size}", f"{common}"
    for mnemonic, base in (("ldr", 0xE1000000), ("str", 0xE1200000)):
        yield mnemonic, base, "sme", "za[w<s>, <o>], [<n:xsp>, #<o+0>, mul vl]", "s@12=14:13 n=9:5 o=3:0"
        yield mnemonic, base, "sme", "za[w<s>, 0], [<n:xsp>]", "s@12=14:13 n=9:5"


_WHILE = {"lt": 0x0400, "lo": 0x0C00, "le": 0x0408, "ls": 0x0C08, "gt": 0x0008, "ge": 0x0000, "hi": 0x0808}
_WHILE["hs"] = 0x0800


def _predicates() -> Iterator[Row]:
    for size, code in _SIZE.items():
        yield "ptrue", 0x25207810 | code << 22, "sme2", f"pn<d>.{size}", "d@8=2:0"
        for cond, bits in _WHILE.items():
            for vl, vl_bit in (("vlx2", 0), ("vlx4", 1 << 13)):
                word = 0x25204010 | bits | code << 22 | vl_bit
                ops = f"pn<d>.{size}, <n:xzr>, <m:xzr>, {vl}"
                yield f"while{cond}", word, "sme2", ops, "d@8=2:0 n=9:5 m=20:16"


def _list(reg: str, size: str, count: int) -> str:
    """A list of `count` consecutive Z registers starting at z<reg>."""
    return f"{{z<{reg}>.{size}-z<{reg}+{count - 1}>.{size}}}"


def _aligned(hi: int, count: int) -> str:
    """The bits of a list's first register, a multiple of `count`, whose top bit is `hi`."""
    low = hi - 4 + count.bit_length() - 1
    return f"{hi}:{low}" + ",!" * (count.bit_length() - 1)


def _multi_loads() -> Iterator[Row]:
    for size, (mnemonic, _, lsl) in _LD1.items():
        if size == "q":
            continue
        for count, count_bit in ((2, 0), (4, 1 << 15)):
            strided = ", ".join(f"z<t{'' if k == 0 else f'+{k * 16 // count}'}>.{size}" for k in range(count))
            lists = ((_list("t", size, count), 0, f"t={_aligned(4, count)}"),)
            lists += ((f"{{{strided}}}", 1 << 24, "t=4,!,2:0" if count == 2 else "t=4,!,!,1:0"),)
            for text, strided_bit, t_bits in lists:
                for load, store in ((mnemonic, 0), ("st1" + mnemonic[3:], 1 << 21)):
                    pred = "pn<g>/z" if not store else "pn<g>"
                    word = 0xA0000000 | _SIZE[size] << 13 | count_bit | strided_bit | store
                    common = f"g@8=12:10 n=9:5 {t_bits}"
                    imm = f"i~=19:16{',!' * (count.bit_length() - 1)}"
                    yield load, word, "sme2", f"{text}, {pred}, [<n:xsp>, <m:xzr>{lsl}]", f"{common} m=20:16"
                    yield load, word | 1 << 22, "sme2", f"{text}, {pred}, [<n:xsp>, #<i>, mul vl]", f"{common} {imm}"
                    yield load, word | 1 << 22, "sme2", f"{text}, {pred}, [<n:xsp>]", common


# mova with a group of tile slices: tile and first-slice bits (to the vectors, to the tile) per size and count;
# the first slice is a multiple of the count, a literal `0:1` / `0:3` where the tile has no other slices.
_GROUP = {
    ("b", 2): ("za0{hv}.b[w<s>, <o>:<o+1>]", "o=7:5,!", "o=2:0,!"),
    ("b", 4): ("za0{hv}.b[w<s>, <o>:<o+3>]", "o=6:5,!,!", "o=1:0,!,!"),
    ("h", 2): ("za<t>{hv}.h[w<s>, <o>:<o+1>]", "t=7 o=6:5,!", "t=2 o=1:0,!"),
    ("h", 4): ("za<t>{hv}.h[w<s>, <o>:<o+3>]", "t=6 o=5,!,!", "t=1 o=0,!,!"),
    ("s", 2): ("za<t>{hv}.s[w<s>, <o>:<o+1>]", "t=7:6 o=5,!", "t=2:1 o=0,!"),
    ("s", 4): ("za<t>{hv}.s[w<s>, 0:3]", "t=6:5", "t=1:0"),
    ("d", 2): ("za<t>{hv}.d[w<s>, 0:1]", "t=7:5", "t=2:0"),
    ("d", 4): ("za<t>{hv}.d[w<s>, 0:3]", "t=7:5", "t=2:0"),
}


def _mova_multi() -> Iterator[Row]:
    for (size, count), (group, to_vectors, to_tiles) in _GROUP.items():
        vectors = _list("z", size, count)
        count_bit = 1 << 10 if count == 4 else 0
        for hv, v_bit in _HV:
            tiles = group.format(hv=hv)
            word = _SIZE[size] << 22 | count_bit | v_bit
            for mova in ("mova", "mov"):
                yield (
                    mova,
                    0xC0060000 | word,
                    "sme2",
                    f"{vectors}, {tiles}",
                    f"s@12=14:13 z={_aligned(4, count)} {to_vectors}",
                )
                yield (
                    mova,
                    0xC0040000 | word,
                    "sme2",
                    f"{tiles}, {vectors}",
                    f"s@12=14:13 z={_aligned(9, count)} {to_tiles}",
                )
    for size in _SIZE:
        for count in (2, 4):
            vectors = _list("z", size, count)
            count_bit = 1 << 10 if count == 4 else 0
            for vgx in (f", vgx{count}", ""):
                array = f"za.{size}[w<s>, <o>{vgx}]"
                for mova in ("mova", "mov"):
                    to_vec = 0xC0060800 | count_bit
                    yield mova, to_vec, "sme2", f"{vectors}, {array}", f"s@8=14:13 o=7:5 z={_aligned(4, count)}"
                    to_za = 0xC0040800 | count_bit
                    yield mova, to_za, "sme2", f"{array}, {vectors}", f"s@8=14:13 o=2:0 z={_aligned(9, count)}"


# ZA array multiply-adds: ZA element size, source element size, then the fixed bits of the multi-and-single,
# multi-and-multi (None: no such form) and multi-and-indexed forms for vgx2 (vgx4 sets a bit more in each), and
# the index bits.
_ARRAY = [
    ("fmla", "s", "s", 0xC1201800, 0xC1A01800, 0xC1500000, "11:10"),
    ("fmls", "s", "s", 0xC1201808, 0xC1A01808, 0xC1500010, "11:10"),
    ("fmla", "d", "d", 0xC1601800, 0xC1E01800, 0xC1D00000, "10"),
    ("fmls", "d", "d", 0xC1601808, 0xC1E01808, 0xC1D00010, "10"),
    ("bfdot", "s", "h", 0xC1201010, 0xC1A01010, 0xC1501018, "11:10"),
    ("fdot", "s", "h", 0xC1201000, 0xC1A01000, 0xC1501008, "11:10"),
    ("sdot", "s", "b", 0xC1201400, 0xC1A01400, 0xC1501020, "11:10"),
    ("udot", "s", "b", 0xC1201410, 0xC1A01410, 0xC1501030, "11:10"),
    ("usdot", "s", "b", 0xC1201408, 0xC1A01408, 0xC1501028, "11:10"),
    ("sudot", "s", "b", 0xC1201418, None, 0xC1501038, "11:10"),
]


def _array() -> Iterator[Row]:
    for mnemonic, za, src, single, multi, indexed, index_bits in _ARRAY:
        for count, single_bit, multi_bit, index_bit in ((2, 0, 0, 0), (4, 1 << 20, 1 << 16, 1 << 15)):
            vectors = _list("n", src, count)
            for vgx in (f", vgx{count}", ""):
                array = f"za.{za}[w<v>, <o>{vgx}]"
                common = "v@8=14:13 o=2:0"
                yield (
                    mnemonic,
                    single | single_bit,
                    "sme2",
                    f"{array}, {vectors}, z<m>.{src}",
                    f"{common} n=9:5 m=19:16",
                )
                n_bits = f"n={_aligned(9, count)}"
                if multi is not None:
                    ops = f"{array}, {vectors}, {_list('m', src, count)}"
                    yield mnemonic, multi | multi_bit, "sme2", ops, f"{common} {n_bits} m={_aligned(20, count)}"
                ops = f"{array}, {vectors}, z<m>.{src}[<i>]"
                yield mnemonic, indexed | index_bit, "sme2", ops, f"{common} {n_bits} m=19:16 i={index_bits}"


def _lookups() -> Iterator[Row]:
    for size in ("b", "h", "s"):
        sz = _SIZE[size] << 12
        yield "luti4", 0xC0CA0000 | sz, "sme2", f"z<d>.{size}, zt0, z<n>[<i>]", "d=4:0 n=9:5 i=16:14"
        yield "luti2", 0xC0CC0000 | sz, "sme2", f"z<d>.{size}, zt0, z<n>[<i>]", "d=4:0 n=9:5 i=17:14"
        pair = f"{_list('d', size, 2)}, zt0, z<n>[<i>]"
        yield "luti4", 0xC08A4000 | sz, "sme2", pair, f"d={_aligned(4, 2)} n=9:5 i=16:15"
        yield "luti2", 0xC08C4000 | sz, "sme2", pair, f"d={_aligned(4, 2)} n=9:5 i=17:15"
        quad = f"{_list('d', size, 4)}, zt0, z<n>[<i>]"
        if size != "b":  # no four-register luti4 of bytes
            yield "luti4", 0xC08A8000 | sz, "sme2", quad, f"d={_aligned(4, 4)} n=9:5 i=16"
        yield "luti2", 0xC08C8000 | sz, "sme2", quad, f"d={_aligned(4, 4)} n=9:5 i=17:16"


def _clamps_and_conversions() -> Iterator[Row]:
    for mnemonic, base, sizes in (("fclamp", 0xC120C000, "hsd"), ("sclamp", 0xC120C400, "bhsd")):
        for size in sizes:
            for count in (2, 4):
                ops = f"{_list('d', size, count)}, z<n>.{size}, z<m>.{size}"
                fields = f"d={_aligned(4, count)} n=9:5 m=20:16"
                word = base | _SIZE[size] << 22 | (1 << 11 if count == 4 else 0)
                yield mnemonic, word, "sme2", ops, fields
                if mnemonic == "sclamp":
                    yield "uclamp", word | 1, "sme2", ops, fields
    for mnemonic, base in (
        ("bfcvt", 0xC160E000),
        ("fcvt", 0xC120E000),
        ("bfcvtn", 0xC160E020),
        ("fcvtn", 0xC120E020),
        ("sqcvt", 0xC123E000),
        ("uqcvt", 0xC123E020),
        ("sqcvtu", 0xC163E000),
    ):
        yield mnemonic, base, "sme2", f"z<d>.h, {_list('n', 's', 2)}", f"d=4:0 n={_aligned(9, 2)}"
    for mnemonic, base in (("sqcvt", 0xC133E000), ("uqcvt", 0xC133E020), ("sqcvtu", 0xC173E000)):
        for dst, src, size_bits in (("b", "s", 0), ("h", "d", 1 << 23)):
            ops = f"z<d>.{dst}, {_list('n', src, 4)}"
            yield mnemonic, base | size_bits, "sme2", ops, f"d=4:0 n={_aligned(9, 4)}"


def _rows() -> Iterator[Row]:
    for raw in _SIMPLE.strip().splitlines():
        head, ops, fields = raw.split("|")
        mnemonic, base, feature = head.split()
        yield mnemonic, int(base, 16), feature, ops.strip(), fields.strip()
    for family in (_outer, _tile_slices, _predicates, _multi_loads, _mova_multi, _array, _lookups):
        yield from family()
    yield from _clamps_and_conversions()


def _form(row: Row) -> Form:
    mnemonic, base, feature, ops, fields = row
    operands = tuple(Template.parse(t) for t in split_operands(ops)) if ops else ()
    parsed = dict(_parse_field(f) for f in fields.split())
    names = {s.name for t in operands for s in t.slots if s.name is not None and not s.derived}
    if names != set(parsed):
        raise ValueError(f"placeholders {sorted(names)} and fields {sorted(parsed)} differ in {row}")
    return Form(mnemonic, base, operands, parsed, feature)


def _load() -> dict[str, tuple[Form, ...]]:
    table: dict[str, list[Form]] = {}
    for row in _rows():
        table.setdefault(row[0], []).append(_form(row))
    return {name: tuple(group) for name, group in table.items()}


# -- operands ---------------------------------------------------------------------------------------------------


def split_operands(text: str) -> list[str]:
    """Operands separated by the commas outside `{}` and `[]`, stripped."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return out if any(out) or len(out) > 1 else []


_ELEMENT = re.compile(r"z(\d+)(\.[a-z])?(?:-z(\d+)(\.[a-z])?)?")


def _canonical_list(norm: str) -> str:
    """`{z0.s,z1.s}` and `{z0.s-z1.s}` alike as `{z0.s-z1.s}`: a list of consecutive Z registers (wrapping after
    z31) of one element size is written as a range. Other lists are kept as written."""
    if not (norm.startswith("{") and norm.endswith("}")):
        return norm
    regs: list[tuple[int, str]] = []
    for element in norm[1:-1].split(","):
        m = _ELEMENT.fullmatch(element)
        if m is None or (m[3] is not None and m[2] != m[4]):
            return norm
        first, last = int(m[1]), int(m[3] if m[3] is not None else m[1])
        if max(first, last) > 31:  # left for the range check to report
            return norm
        regs += [((first + k) % 32, m[2] or "") for k in range((last - first) % 32 + 1)]
    consecutive = all(b == ((a + 1) % 32, s) for (a, s), b in itertools.pairwise(regs))
    if len(regs) < 2 or not consecutive:
        return norm
    (first, size), (last, _) = regs[0], regs[-1]
    return f"{{z{first}{size}-z{last}{size}}}"


_SME_SHAPED = re.compile(r"(?<![a-z0-9_])(?:za|zt\d|pn\d)|\{[^}]*z\d+[^}]*[-,][^}]*\}")


def claims(mnemonic: str, operand_text: str) -> bool:
    """Whether the instruction is for this module: an SME-only mnemonic, or SME-shaped operands (see above)."""
    if mnemonic not in FORMS:
        return False
    return mnemonic in SME_ONLY or _SME_SHAPED.search(_normalise(operand_text)) is not None


@dataclass(frozen=True)
class _Operand:
    text: str
    signature: str
    values: tuple[_Value, ...]


@functools.lru_cache(maxsize=4096)  # kernels repeat their operands (`p0/m`, `[x0]`, `{z0.s-z3.s}`) many times
def _operand(text: str) -> _Operand:
    signature, values = _signature(_canonical_list(_normalise(text)))
    return _Operand(text, signature, tuple(values))


# What each kind of slot reads: a number, or which X register spellings (SP or XZR as register 31).
_ACCEPTS = {"#": ("#",), "x": ("x",), "xsp": ("x", "sp"), "xzr": ("x", "xzr")}


def _fits(form: Form, ops: Sequence[_Operand]) -> tuple[int, dict[str, _Value]]:
    """How many operands fit the form's shapes (all of them: -1) and the placeholder values read so far."""
    bound: dict[str, _Value] = {}
    for position, (op, template) in enumerate(zip(ops, form.operands, strict=True)):
        if op.signature != template.signature:
            return position, bound
        for slot, (kind, value) in zip(template.slots, op.values, strict=True):
            if slot.literal is not None:
                ok = value == slot.literal
            elif slot.derived:
                ok = value == _derive(bound[slot.name][1], slot.offset, slot.prefix)
            else:
                ok = kind in _ACCEPTS[slot.kind]
                bound[slot.name] = (kind, value)
            if not ok:
                return position, bound
    return -1, bound


def encode(mnemonic: str, operand_text: str) -> int:
    """The word for an instruction that claims() accepted; Malformed when it fits no form."""
    texts = split_operands(operand_text)
    for position, text in enumerate(texts, 1):
        if not text:
            raise Malformed(f"{mnemonic}: operand {position} is empty")
    if mnemonic == "zero" and len(texts) == 1 and _normalise(texts[0]) != "{zt0}":
        return 0xC0080000 | zero_mask(texts[0])
    group = FORMS[mnemonic]
    counts = sorted({len(f.operands) for f in group})
    if len(texts) not in counts:
        wanted = " or ".join(map(str, counts))
        raise Malformed(f"{mnemonic} takes {wanted} operands, got {len(texts)} in `{operand_text.strip()}`")
    ops = [_operand(t) for t in texts]
    for form in _BY_SIGNATURE.get((mnemonic, tuple(op.signature for op in ops)), ()):
        position, bound = _fits(form, ops)
        if position == -1:
            return form.encode(_check_ranges(mnemonic, form, ops, bound))
    candidates = [f for f in group if len(f.operands) == len(ops)]
    reached = {id(f): _fits(f, ops) for f in candidates}
    for form in candidates:
        position, bound = reached[id(form)]
        if position == -1:
            return form.encode(_check_ranges(mnemonic, form, ops, bound))
    best = max(position for position, _ in reached.values())
    shapes = list(dict.fromkeys(f.operands[best].shape() for f in candidates if reached[id(f)][0] == best))
    after = f" after `{', '.join(op.text for op in ops[:best])}`" if best else ""
    raise Malformed(f"{mnemonic}: operand {best + 1} is `{ops[best].text}`, expected {' or '.join(shapes)}{after}")


def _check_ranges(mnemonic: str, form: Form, ops: Sequence[_Operand], bound: dict[str, _Value]) -> dict[str, int]:
    """The placeholder values, each checked against what its field holds."""
    for position, (op, template) in enumerate(zip(ops, form.operands, strict=True), 1):
        for slot in template.slots:
            if slot.name is None or slot.derived:
                continue
            kind, value = bound[slot.name]
            if value in _holds(form.fields[slot.name]) and (kind != "x" or value < 31):
                continue
            domain = form.domain(slot)
            if (kind == "x" and value >= 31) or value not in domain:
                shown = f"x{value}" if kind == "x" else slot.shows(value)
                raise Malformed(
                    f"{mnemonic}: operand {position} `{op.text}`: {shown} out of range, "
                    f"must be {_describe(slot, domain)}"
                )
    return {name: value for name, (_, value) in bound.items()}


def _describe(slot: Slot, domain: Sequence[int]) -> str:
    """`z0-z28 in steps of 4`, `z0-z7 or z16-z23`, `-32..28 in steps of 4`, `x0-x30 or sp`."""
    if slot.kind != "#":
        special = {"xsp": " or sp", "xzr": " or xzr"}.get(slot.kind, "")
        return f"x0-x{max(v for v in domain if v < 31)}{special}"
    named = slot.prefix[-1:].isalpha()
    prefix, dash = (slot.prefix, "-") if named else ("", "..")
    step = min((b - a for a, b in itertools.pairwise(domain)), default=1)
    runs: list[list[int]] = [[domain[0]]]
    for value in domain[1:]:
        if value - runs[-1][-1] == step:
            runs[-1].append(value)
        else:
            runs.append([value])
    texts = [f"{prefix}{r[0]}" if len(r) == 1 else f"{prefix}{r[0]}{dash}{prefix}{r[-1]}" for r in runs]
    return " or ".join(texts) + (f" in steps of {step}" if step > 1 else "")


# -- zero {tiles} -----------------------------------------------------------------------------------------------

# The 64-bit tiles (bits of the mask) that each tile covers: za<t>.d is bit t; za<t>.s holds rows t and t+4 of the
# .d tiles, za<t>.h every second one from t, za0.b (and `za`) all eight.
_TILES = {"d": (8, 1), "s": (4, 0x11), "h": (2, 0x55), "b": (1, 0xFF)}
_TILE = re.compile(r"za(\d+)\.([bhsd])")


def zero_mask(text: str) -> int:
    """The 8-bit mask of `zero {za}` / `zero {za0.d, za2.d}` / `zero {}`: one element size per list, as llvm-mc
    demands (GNU as too). A tile listed twice is allowed (llvm-mc warns)."""
    norm = _normalise(text)
    if not (norm.startswith("{") and norm.endswith("}")):
        raise Malformed(
            f"zero: operand 1 is `{text}`, expected {{za}}, {{zt0}} or a list of tiles like {{za0.d, za2.d}}"
        )
    body = norm[1:-1]
    if body in ("", "za"):
        return 0xFF if body else 0
    mask, sizes = 0, set()
    for tile in body.split(","):
        m = _TILE.fullmatch(tile)
        if m is None:
            raise Malformed(f"zero: `{tile}` in `{text}` is not a tile like za0.d, za1.s, za1.h or za0.b")
        number, size = int(m[1]), m[2]
        count, pattern = _TILES[size]
        if number >= count:
            raise Malformed(f"zero: `{tile}` in `{text}`: za{number}.{size} out of range, must be za0-za{count - 1}")
        sizes.add(size)
        mask |= pattern << number
    if len(sizes) > 1:
        raise Malformed(f"zero: `{text}` mixes element sizes; list tiles of one size")
    return mask


FORMS: dict[str, tuple[Form, ...]] = _load()
# Mnemonics that name nothing outside SME: any operands they take are meant for SME.
SME_ONLY = frozenset(
    name for name in FORMS if name in {"smstart", "smstop", "zero", "rdsvl", "addha", "addva", "mova"} or "mop" in name
)


def forms() -> list[Form]:
    """Every SME form, in table order (`zero` with a list of tiles is not among them: see zero_mask)."""
    return [form for group in FORMS.values() for form in group]


def _by_signature() -> dict[tuple[str, tuple[str, ...]], tuple[Form, ...]]:
    table: dict[tuple[str, tuple[str, ...]], list[Form]] = {}
    for form in forms():
        table.setdefault((form.mnemonic, tuple(t.signature for t in form.operands)), []).append(form)
    return {key: tuple(group) for key, group in table.items()}


# The forms by mnemonic and operand signatures: an instruction is tried against these first (the other forms of
# its mnemonic only to say what is wrong).
_BY_SIGNATURE = _by_signature()
