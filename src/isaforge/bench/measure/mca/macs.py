"""Multiply-accumulates: which instructions do them and how many (MACs of one instruction = lanes of its destination
× products summed into each lane), the hot loop of a kernel, and the reference stream its peak is measured on."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from isaforge.bench.measure.mca.objcode import Insn, Loop, loops
from isaforge.errors import IsaforgeError

# Products summed into each destination lane.
MAC_DEPTH = {
    "fmla": 1,
    "fmls": 1,
    "mla": 1,
    "mls": 1,
    "smull": 1,
    "umull": 1,
    "smlal": 1,
    "umlal": 1,
    "fmlal": 1,
    "bfmlalb": 1,
    "bfmlalt": 1,
    "bfdot": 2,
    "fdot": 2,
    "sdot": 4,
    "udot": 4,
    "usdot": 4,
    "sudot": 4,
    "bfmmla": 4,
    "smmla": 8,
    "ummla": 8,
    "usmmla": 8,
}
# SME outer products into a ZA tile: each lane of the tile sums (tile element ÷ source element) products, e.g.
# fmopa za0.s from z.h (widening) sums two, smopa za0.s from z.b four; read from the operands (mac_depth).
OUTER_PRODUCTS = frozenset({"fmopa", "fmops", "bfmopa", "bfmops", "smopa", "smops", "umopa", "umops", "sumopa",
                            "usmopa", "bmopa", "bmops"})  # fmt: skip
# Widening multiplies whose destination is not an accumulator, and the instructions that sum their products.
PRODUCT_ONLY = frozenset({"smull", "umull"})
ACCUMULATE_ONLY = frozenset({"sadalp", "uadalp"})
ELEM_BITS = {"b": 8, "h": 16, "s": 32, "d": 64, "q": 128}
NEON_REG = re.compile(r"^v(\d+)\.(\d+)([bhsd])$")
SVE_REG = re.compile(r"^z(\d+)\.([bhsdq])$")
SCALAR_REG = re.compile(r"^[bhsd]\d+$")
ZA_TILE = re.compile(r"^za(\d+)\.([bhsdq])$")
# SME2's ZA-array forms (fmla za.s[w8, 0, vgx2], { z16.s, z17.s }, z0.s[0]): one vector of ZA per source vector.
ZA_ARRAY = re.compile(r"^za\.([bhsd])\[w\d+, [^,\]]+(?:, vgx(\d))?\]$")
Z_LIST = re.compile(r"z(\d+)\.([bhsd])")
VECTOR_OPERAND = re.compile(r"^([vz])(\d+)(\..*)$")


def base_mnemonic(mnemonic: str) -> str:
    short = mnemonic.removesuffix("2")
    return short if short in MAC_DEPTH else mnemonic


def is_outer_product(insn: Insn) -> bool:
    """An SME outer product into a ZA tile (fmopa za0.s, p0/m, p1/m, z0.s, z1.s)."""
    return insn.mnemonic in OUTER_PRODUCTS and bool(insn.operands) and bool(ZA_TILE.match(insn.operands[0]))


def _outer_product_macs(insn: Insn, vector_bits: int) -> int:
    """A square tile of (VL ÷ element) lanes a side, each summing element ÷ source-element products; `vector_bits`
    is the streaming vector length here (inside a streaming kernel the Z registers are SVL long)."""
    tile = ZA_TILE.match(insn.operands[0])
    source = SVE_REG.match(insn.operands[-1])
    if tile is None or source is None:
        raise IsaforgeError(f"cannot read the operands of {insn.mnemonic} {', '.join(insn.operands)}")
    side = vector_bits // ELEM_BITS[tile[2]]
    return side * side * (ELEM_BITS[tile[2]] // ELEM_BITS[source[2]])


def dest_lanes(operand: str, sve_bits: int) -> int | None:
    """Lanes of a destination register: v0.4s → 4, z0.s → VL/32, s0 → 1; None when not a data register."""
    if m := NEON_REG.match(operand):
        return int(m[2])
    if m := SVE_REG.match(operand):
        return sve_bits // ELEM_BITS[m[2]] if sve_bits else 0
    if SCALAR_REG.match(operand):
        return 1
    return None


def mac_kind(insn: Insn) -> str | None:
    """`fmla v.4s[i]`, `smmla z.s`, `smull v.8h`, …; None when the instruction multiplies nothing."""
    if is_outer_product(insn):
        return f"{insn.mnemonic} za.{insn.operands[0][-1]}"
    if za := _za_array(insn):
        return (
            f"{base_mnemonic(insn.mnemonic)} za.{za[0]}[vgx{za[1]}]{'[i]' if insn.operands[-1].endswith(']') else ''}"
        )
    base = base_mnemonic(insn.mnemonic)
    if base not in MAC_DEPTH or not insn.operands:
        return None
    dest = insn.operands[0]
    if m := NEON_REG.match(dest):
        shape = f"v.{m[2]}{m[3]}"
    elif m := SVE_REG.match(dest):
        shape = f"z.{m[2]}"
    elif SCALAR_REG.match(dest):
        shape = dest[0]
    else:
        return None
    indexed = insn.operands[-1].endswith("]")
    return f"{base} {shape}{'[i]' if indexed else ''}"


def _za_array(insn: Insn) -> tuple[str, int, str] | None:
    """A ZA-array multiply-add's (ZA element, source vectors, source element), else None."""
    if base_mnemonic(insn.mnemonic) not in MAC_DEPTH or len(insn.operands) < 3:
        return None
    dest, sources = ZA_ARRAY.match(insn.operands[0]), Z_LIST.findall(insn.operands[1])
    if dest is None or not sources:
        return None
    first, last = int(sources[0][0]), int(sources[-1][0])
    count = last - first + 1 if " - " in insn.operands[1] else len(sources)
    return dest[1], count, sources[0][1]


def _za_array_macs(za: tuple[str, int, str], vector_bits: int) -> int:
    """Each source vector adds into one ZA vector: its lanes (ZA elements), each summing ZA element ÷ source element
    products (2 for bfdot/fdot into .s, 4 for sdot from .b)."""
    elem, count, source = za
    return count * (vector_bits // ELEM_BITS[elem]) * (ELEM_BITS[elem] // ELEM_BITS[source])


def macs_of(insn: Insn, sve_bits: int) -> int:
    """Multiply-accumulates one execution of the instruction does (0 for anything else)."""
    if mac_kind(insn) is None:
        return 0
    if is_outer_product(insn):
        return _outer_product_macs(insn, sve_bits)
    if za := _za_array(insn):
        return _za_array_macs(za, sve_bits)
    lanes = dest_lanes(insn.operands[0], sve_bits) or 0
    return lanes * MAC_DEPTH[base_mnemonic(insn.mnemonic)]


def kernel_kind(insns: Iterable[Insn]) -> str | None:
    counts = Counter(k for k in map(mac_kind, insns) if k)
    return counts.most_common(1)[0][0] if counts else None


def innermost(found: Sequence[Loop]) -> list[Loop]:
    """The loops that hold no other loop: a backward jump into shared code (an epilogue's set-up placed out of line
    that jumps back to the loop's entry) closes a range around the real loop, which is not the hot loop."""
    return [
        loop
        for loop in found
        if not any(o is not loop and loop.start <= o.start and o.end <= loop.end and o != loop for o in found)
    ]


def hot_loop(insns: Sequence[Insn], kind: str | None) -> Loop | None:
    """Among the innermost loops, the one with the most MAC instructions of `kind` (the smaller body on a tie); None
    when no loop has any."""
    best, best_key = None, (0, 0)
    for loop in innermost(loops(insns)):
        n = sum(1 for i in loop.body if mac_kind(i) == kind)
        key = (n, -len(loop.body))
        if n and (best is None or key > best_key):
            best, best_key = loop, key
    return best


def _renamed(insn: Insn, dest: int, sources: dict[int, int]) -> Insn:
    """`insn` with destination register number `dest` and its vector sources renumbered by `sources` (old → new)."""
    ops = []
    for n, op in enumerate(insn.operands):
        m = VECTOR_OPERAND.match(op)
        if m is None:
            ops.append(op)
        elif n == 0:
            ops.append(f"{m[1]}{dest}{m[3]}")
        else:
            ops.append(f"{m[1]}{sources[int(m[2])]}{m[3]}")
    return Insn(0, insn.mnemonic, tuple(ops))


def _source_regs(insn: Insn) -> list[int]:
    return [int(m[2]) for op in insn.operands[1:] if (m := VECTOR_OPERAND.match(op))]


@dataclass(frozen=True)
class Stream:
    kind: str
    insns: tuple[Insn, ...]
    description: str

    def source(self) -> str:
        return "".join(f"\t{i.text}\n" for i in self.insns)

    def macs(self, sve_bits: int) -> int:
        return sum(macs_of(i, sve_bits) for i in self.insns)

    @property
    def mac_instructions(self) -> int:
        return sum(1 for i in self.insns if mac_kind(i))


def reference_stream(body: Sequence[Insn], kind: str, registers: int = 32) -> Stream:
    """Independent instructions of `kind`, spelled as the loop spells them, one accumulator each (as many as the
    registers left by the sources allow, ≥ 16); for product-only kinds, the loop's own mix with its accumulates."""
    templates = list({i.mnemonic: i for i in reversed([i for i in body if mac_kind(i) == kind])}.values())[::-1]
    if not templates:
        raise IsaforgeError(f"no {kind} instruction to build a reference stream from")
    base = base_mnemonic(templates[0].mnemonic)
    sources: dict[int, int] = {}
    for t in templates:  # the sources get the lowest numbers: z0-z7 / v0-v15 suit every by-element form
        for reg in _source_regs(t):
            sources.setdefault(reg, len(sources))
    if base in PRODUCT_ONLY:
        accs = [i for i in body if i.mnemonic in ACCUMULATE_ONLY]
        n_products = sum(1 for i in body if mac_kind(i) == kind)
        if not accs or len(accs) != n_products:
            raise IsaforgeError(f"{kind}: expected one accumulate per product in the loop, found {len(accs)}")
        products = {t.mnemonic: len(sources) + j for j, t in enumerate(templates)}
        first_acc = len(sources) + len(products)
        insns: list[Insn] = []
        for acc in range(first_acc, registers):
            insns += [_renamed(t, products[t.mnemonic], sources) for t in templates]
            (acc_src,) = _source_regs(accs[0])
            insns += [_renamed(accs[0], acc, {acc_src: products[t.mnemonic]}) for t in templates]
        mix = " + ".join(t.mnemonic for t in templates)
        desc = f"{registers - first_acc} groups of {mix} + {len(templates)}×{accs[0].mnemonic} (the loop's mix)"
        return Stream(kind, tuple(insns), desc)
    first_acc = len(sources)
    insns = [_renamed(templates[n % len(templates)], acc, sources) for n, acc in enumerate(range(first_acc, registers))]
    return Stream(kind, tuple(insns), f"{len(insns)} independent {kind} (one accumulator each)")
