"""Batches of GEMM problems for tests/kernels/gemm_runner.c, and the float64 oracle that checks its answers.

One job file holds one A and one B buffer shared by every case (each case reads a leading submatrix with its own
leading dimensions), so thousands of shapes cost one QEMU start.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from isaforge.catalogue import load

SENTINEL_BYTE = 0xA5
F32_UNIT_ROUNDOFF = 2.0**-24


@dataclass(frozen=True)
class Case:
    m: int
    n: int
    k: int
    lda: int
    ldb: int
    ldc: int


@dataclass(frozen=True)
class OpTypes:
    op: str
    index: int
    in_dtype: np.dtype
    out_dtype: np.dtype


def op_types(op: str) -> OpTypes:
    dtypes = {"gemm_f32": (np.float32, np.float32), "gemm_s8": (np.int8, np.int32)}
    if op not in dtypes:
        raise ValueError(f"gemm_runner does not drive {op} yet")
    spec = load().ops[op]
    return OpTypes(op, spec.index, np.dtype(dtypes[op][0]), np.dtype(dtypes[op][1]))


def sweep_cases(max_mn: int = 17, max_k: int = 33, pad: int = 0) -> list[Case]:
    """Every m, n in 1..max_mn and k in 1..max_k; `pad` extra elements in every leading dimension."""
    return [
        Case(m, n, k, k + pad, n + pad, n + pad)
        for m in range(1, max_mn + 1)
        for n in range(1, max_mn + 1)
        for k in range(1, max_k + 1)
    ]


def random_operands(types: OpTypes, cases: list[Case], seed: int, extremes: bool = False) -> tuple[np.ndarray, ...]:
    """Flat A and B large enough for every case."""
    rng = np.random.default_rng(seed)
    a_len = max((c.m - 1) * c.lda + c.k for c in cases)
    b_len = max((c.k - 1) * c.ldb + c.n for c in cases)
    if types.in_dtype == np.int8:
        if extremes:
            return np.full(a_len, -128, np.int8), np.full(b_len, -128, np.int8)
        return (rng.integers(-128, 128, a_len, dtype=np.int8), rng.integers(-128, 128, b_len, dtype=np.int8))
    return (rng.standard_normal(a_len).astype(np.float32), rng.standard_normal(b_len).astype(np.float32))


def write_job(path: Path, types: OpTypes, a: np.ndarray, b: np.ndarray, cases: list[Case]) -> None:
    header = b"ISFJ" + struct.pack("<III", types.index, len(cases), 0) + struct.pack("<QQ", a.nbytes, b.nbytes)
    table = np.array([[c.m, c.n, c.k, c.lda, c.ldb, c.ldc] for c in cases], dtype="<u8")
    path.write_bytes(header + a.tobytes() + b.tobytes() + table.tobytes())


def read_results(path: Path, types: OpTypes, cases: list[Case]) -> list[tuple[int, np.ndarray]]:
    """(status, C as m×ldc raw array) per case."""
    data = path.read_bytes()
    out = []
    pos = 0
    for c in cases:
        (status,) = struct.unpack_from("<i", data, pos)
        pos += 4
        size = c.m * c.ldc * types.out_dtype.itemsize
        out.append((status, np.frombuffer(data, types.out_dtype, c.m * c.ldc, pos).reshape(c.m, c.ldc)))
        pos += size
    if pos != len(data):
        raise ValueError(f"result file has {len(data) - pos} trailing bytes")
    return out


def operand_views(a: np.ndarray, b: np.ndarray, c: Case) -> tuple[np.ndarray, np.ndarray]:
    av = np.lib.stride_tricks.as_strided(a, (c.m, c.k), (c.lda * a.itemsize, a.itemsize))
    bv = np.lib.stride_tricks.as_strided(b, (c.k, c.n), (c.ldb * b.itemsize, b.itemsize))
    return av, bv


def f32_error_bound(av: np.ndarray, bv: np.ndarray, k: int) -> np.ndarray:
    """|computed − exact| ≤ γ(k+1)·Σ|a||b| with γ(j) = j·u/(1 − j·u): every variant sums k products in fp32 (fused
    or not, in any order, split into Kc blocks), so the classic recursive-summation bound holds for all of them."""
    j = (k + 1) * F32_UNIT_ROUNDOFF
    gamma = j / (1 - j)
    return gamma * (np.abs(av.astype(np.float64)) @ np.abs(bv.astype(np.float64))) + np.finfo(np.float32).tiny


def check_case(types: OpTypes, a: np.ndarray, b: np.ndarray, c: Case, status: int, got: np.ndarray) -> str | None:
    """None when the result is right, else one line saying what is wrong."""
    if status != 0:
        return f"{c}: status {status}"
    sentinel = np.frombuffer(bytes([SENTINEL_BYTE]) * types.out_dtype.itemsize, types.out_dtype)[0]
    if c.ldc > c.n and not np.array_equal(got[:, c.n :], np.full((c.m, c.ldc - c.n), sentinel, types.out_dtype)):
        return f"{c}: wrote into the ldc padding"
    av, bv = operand_views(a, b, c)
    exact = av.astype(np.float64) @ bv.astype(np.float64)
    result = got[:, : c.n].astype(np.float64)
    if types.out_dtype == np.int32:
        if not np.array_equal(result, exact):
            bad = np.argwhere(result != exact)[0]
            return f"{c}: C{tuple(bad)} = {result[tuple(bad)]:.0f}, expected {exact[tuple(bad)]:.0f}"
        return None
    err = np.abs(result - exact)
    bound = f32_error_bound(av, bv, c.k)
    if not np.all(err <= bound):
        bad = tuple(np.argwhere(err > bound)[0])
        return f"{c}: C{bad} = {result[bad]!r}, expected {exact[bad]!r} (error {err[bad]:.3g} > bound {bound[bad]:.3g})"
    return None
