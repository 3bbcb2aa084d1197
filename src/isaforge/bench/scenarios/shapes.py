"""GEMM shapes, M×N×K, as the bench's options and reports spell them."""

from __future__ import annotations

from dataclasses import dataclass

from isaforge.errors import IsaforgeError


@dataclass(frozen=True)
class Shape:
    m: int
    n: int
    k: int

    @property
    def label(self) -> str:
        return f"{self.m}x{self.n}x{self.k}"

    @property
    def macs(self) -> int:
        return self.m * self.n * self.k


DEFAULT_SHAPES = (Shape(64, 64, 64), Shape(128, 128, 128), Shape(256, 256, 64))


def parse_shapes(text: str) -> list[Shape]:
    """`64x64x64,256x256x64` (M×N×K) or `128` (a cube)."""
    out = []
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        parts = item.lower().split("x")
        if len(parts) == 1:
            parts *= 3
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise IsaforgeError(f"bad shape {item!r}; write MxNxK with positive integers, e.g. 128x128x128")
        out.append(Shape(*(int(p) for p in parts)))
    if not out:
        raise IsaforgeError("no shape given; write MxNxK, e.g. --shapes 64x64x64,256x256x64")
    return out
