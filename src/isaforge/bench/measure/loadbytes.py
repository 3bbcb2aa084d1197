"""Bytes one execution of an AArch64 load reads, from its disassembly (llvm-objdump's spelling): what the bench
counts as bytes read, executions × this. Scalar, pair, NEON structured (whole registers, lanes, replicating) and
SVE (contiguous at the vector length, replicating, quadword-replicating) forms; 0 for what is not a load."""

from __future__ import annotations

import re

from isaforge.bench.measure.mca.objcode import Insn

SCALAR = {"q": 16, "d": 8, "s": 4, "h": 2, "b": 1, "x": 8, "w": 4}
ARRANGEMENT = re.compile(r"v\d+\.(\d*)([bhsd])")
ELEMENT = {"b": 1, "h": 2, "s": 4, "d": 8, "w": 4, "q": 16}
SVE_CONTIGUOUS = re.compile(r"^ld(?:nt)?([1-4])(s?)([bhwd])$")
SVE_REPLICATE = re.compile(r"^ld1r(q?)(s?)([bhwd])$")
NEON_STRUCT = re.compile(r"^ld([1-4])(r?)$")


def _registers(operand: str) -> list[str]:
    """`{v0.16b, v1.16b}` or `{ z0.b }` or `{v0.4s-v3.4s}` → the registers."""
    inner = operand.strip().lstrip("{").split("}")[0]
    if "-" in inner:  # a range: v0.4s-v3.4s
        lo, hi = (p.strip() for p in inner.split("-"))
        a, b = int(re.sub(r"\D", "", lo.split(".")[0])), int(re.sub(r"\D", "", hi.split(".")[0]))
        return [lo] * ((b - a) % 32 + 1)
    return [r.strip() for r in inner.split(",") if r.strip()]


def load_bytes(insn: Insn, sve_bits: int) -> int:  # noqa: PLR0911 - one return per addressing form
    """Bytes read by one execution of `insn` (0 if it is not a load); SVE forms at `sve_bits`."""
    m = insn.mnemonic.split(".")[0]
    if not m.startswith("ld") or not insn.operands:
        return 0
    first = insn.operands[0]
    vl = sve_bits // 8
    if first.startswith("{") and "z" in first:  # SVE structured / contiguous
        regs = _registers(first)
        element = ELEMENT[regs[0].rsplit(".", 1)[-1][0]] if "." in regs[0] else 1
        if r := SVE_REPLICATE.match(m):
            return 16 if r[1] else ELEMENT[r[3]]
        if c := SVE_CONTIGUOUS.match(m):
            return len(regs) * vl // element * ELEMENT[c[3]]
        return len(regs) * vl
    if first.startswith("{"):  # NEON structured
        s = NEON_STRUCT.match(m)
        regs = _registers(first)
        lane = first.rstrip().endswith("]")
        arrangement = ARRANGEMENT.match(regs[0])
        if s is None or arrangement is None:
            return 0
        count, kind = arrangement[1], arrangement[2]
        if lane or s[2]:
            return len(regs) * ELEMENT[kind]
        return len(regs) * int(count) * ELEMENT[kind]
    if first.startswith("z"):  # ldr z0, [...]
        return vl
    if first.startswith("p"):  # ldr p0, [...]
        return vl // 8
    pair = 2 if m in ("ldp", "ldnp", "ldpsw", "ldaxp", "ldxp") else 1
    if m.endswith(("rb", "rsb", "urb", "ursb")) or m in ("ldarb", "ldaxrb", "ldxrb"):
        return 1
    if m.endswith(("rh", "rsh", "urh", "ursh")) or m in ("ldarh", "ldaxrh", "ldxrh"):
        return 2
    if m in ("ldrsw", "ldursw", "ldpsw"):
        return 4 * pair
    return pair * SCALAR.get(first[0], 0)
