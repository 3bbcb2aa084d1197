"""bench.measure.loadbytes: the bytes each load spelling reads."""

from __future__ import annotations

import pytest

from isaforge.bench.measure.loadbytes import load_bytes
from isaforge.bench.measure.mca.objcode import Insn, split_operands


def insn(text: str) -> Insn:
    mnemonic, _, rest = text.partition(" ")
    return Insn(0, mnemonic, split_operands(rest))


@pytest.mark.parametrize(
    ("text", "sve_bits", "want"),
    [
        ("ldr q0, [x1], #16", 128, 16),
        ("ldr d3, [x0]", 128, 8),
        ("ldr s3, [x0, #4]", 128, 4),
        ("ldp q0, q1, [x1], #32", 128, 32),
        ("ldr x8, [sp, #8]", 128, 8),
        ("ldrb w9, [x2]", 128, 1),
        ("ldrsw x9, [x2]", 128, 4),
        ("ld1 {v0.16b, v1.16b}, [x1], #32", 128, 32),
        ("ld1 {v0.8b}, [x1]", 128, 8),
        ("ld1r {v0.4s}, [x0]", 128, 4),
        ("ld1 {v0.s}[1], [x0]", 128, 4),
        ("ld1b {z0.b}, p0/z, [x1]", 256, 32),
        ("ld1b {z0.b}, p0/z, [x1]", 128, 16),
        ("ld1sb {z0.h}, p0/z, [x1]", 256, 16),
        ("ld1w {z0.s}, p0/z, [x1]", 256, 32),
        ("ld1rqb {z0.b}, p0/z, [x0]", 256, 16),
        ("ld1rw {z0.s}, p0/z, [x0]", 256, 4),
        ("ldr z1, [x1, #1, mul vl]", 256, 32),
        ("add x0, x0, #1", 128, 0),
        ("sdot v0.4s, v1.16b, v2.4b[0]", 128, 0),
    ],
)
def test_load_bytes(text: str, sve_bits: int, want: int) -> None:
    assert load_bytes(insn(text), sve_bits) == want
