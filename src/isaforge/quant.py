"""The quantized ops' numerics (include/isaforge/isaforge.h), in numpy, step for step: the oracle of the tests, and
what an engine can check libisaforge's gemm_qs8, gemm_qs8_f32, gemm_qd8_f32, gemm_qd8_f32_qc4w and gemm_s4 against
(and how it packs int4 weights for them). Every fp32 step is one
IEEE rounding in the header's order, so the results are the library's bytes, not approximations of them. Parameters
isf_gemm_create refuses for the numerics' sake (scales, given or derived, that are not finite normal floats; subnormal
fp32 bias values and clamp bounds) raise ValueError here."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

import numpy as np

F32 = np.float32
MAX_K = 65793  # ISF_QUANT_MAX_K: floor((2^31 - 1) / (255 * 128))
BLOCK_STEP = 32  # ISF_QUANT_BLOCK_STEP: w_block is a multiple of it
MAX_BLOCK = 1024  # ISF_QUANT_MAX_BLOCK
FLT_MIN = F32(2.0**-126)  # the least normal fp32
FLT_MAX = np.finfo(F32).max
# A row whose span is below 255 · FLT_MIN quantizes as a zero row: its scale would not be a normal float (AArch32's
# NEON would read it as 0), and below 255 / FLT_MAX its 255 / span would overflow.
MIN_SPAN = F32(255 * 2.0**-126)


@dataclass(frozen=True)
class QuantParams:
    """isf_quant_params: w_scales has 1 or n values (n · ceil(k / w_block) with w_block, column-major by block)."""

    w_scales: np.ndarray
    a_scale: float = 1.0
    a_zero_point: int = 0
    c_scale: float = 1.0
    c_zero_point: int = 0
    w_bits: int = 0
    w_block: int = 0


def pack_int4(w: np.ndarray) -> bytes:
    """int4 weights as isaforge.h stores them: element e of the row-major 2-D array (values −8…7; the leading
    dimension is its width) in the low nibble of byte e // 2 when e is even, the high nibble when odd."""
    flat = np.asarray(w, dtype=np.int8).reshape(-1)
    if flat.size and (flat.min() < -8 or flat.max() > 7):
        raise ValueError("int4 weights must be in -8..7")
    nibbles = (flat.astype(np.uint8) & 0xF).astype(np.uint8)
    if nibbles.size % 2:
        nibbles = np.append(nibbles, np.uint8(0))
    return (nibbles[0::2] | (nibbles[1::2] << 4)).astype(np.uint8).tobytes()


P = ParamSpec("P")
R = TypeVar("R")


def _overflow_is_a_result(fn: Callable[P, R]) -> Callable[P, R]:
    """±Inf from an fp32 overflow is the formula's value, as the kernels give it: no RuntimeWarning."""

    @functools.wraps(fn)
    def quiet(*args: P.args, **kwargs: P.kwargs) -> R:
        with np.errstate(over="ignore"):
            return fn(*args, **kwargs)

    return quiet


def _rne(x: np.ndarray) -> np.ndarray:
    return np.rint(x.astype(np.float64))


def quantize_row(a: np.ndarray) -> tuple[np.float32, int, np.ndarray]:
    """isf_quantize_row: (scale, zero point, int8 values) of one fp32 row."""
    a = np.asarray(a, dtype=F32)
    finite = a[~np.isnan(a)]
    lo = min(F32(0), finite.min()) if finite.size else F32(0)
    hi = max(F32(0), finite.max()) if finite.size else F32(0)
    span = F32(hi - lo)
    span = F32(255) if span < MIN_SPAN else span
    scale, inv = F32(span / F32(255)), F32(F32(255) / span)
    t = F32(lo * inv)
    zp = int(np.clip(-128 - _rne(np.array(0 if np.isnan(t) else t)), -128, 127))
    x = (a * inv).astype(F32)
    x = np.where(np.isnan(x), F32(0), x)
    q = np.clip(_rne(x) + zp, -128, 127).astype(np.int8)
    return scale, zp, q


def normal(values: np.ndarray | float, what: str) -> np.ndarray:
    """The scales, given or derived, as fp32: isf_gemm_create refuses a plan where one is not a finite normal positive
    float (every kernel multiplies by them; AArch32's NEON would read a subnormal one as 0). ValueError names it."""
    v = np.asarray(values, dtype=F32)
    if not np.all((v >= FLT_MIN) & (v <= FLT_MAX)):
        raise ValueError(f"{what}: not a finite normal positive float, so isf_gemm_create refuses the plan")
    return v


def _per_channel(w_scales: np.ndarray, n: int) -> np.ndarray:
    s = normal(w_scales, "w_scales")
    return np.full(n, s[0], dtype=F32) if s.size == 1 else s


def no_subnormal(values: np.ndarray | tuple[float, float], what: str) -> np.ndarray:
    """The dynamic ops' fp32 bias and the fp32 clamp bounds as fp32: isf_gemm_create refuses a subnormal value
    (AArch32's NEON would read it as 0). ValueError names it."""
    v = np.asarray(values, dtype=F32)
    if np.any((v != 0) & (np.abs(v) < FLT_MIN)):
        raise ValueError(f"{what}: a subnormal value, so isf_gemm_create refuses the plan")
    return v


def _clamp_f32(x: np.ndarray, clamp: tuple[float, float] | None) -> np.ndarray:
    if clamp is None:
        return x
    lo, hi = no_subnormal(clamp, "clamp bounds")
    return np.where(np.isnan(x), x, np.minimum(np.maximum(x, lo), hi)).astype(F32)


def sums(a: np.ndarray, w_kn: np.ndarray, zero_points: np.ndarray) -> np.ndarray:
    """Σ_k (a − zp) · w exactly (int64), row zero points broadcast."""
    return (a.astype(np.int64) - zero_points.reshape(-1, 1)) @ w_kn.astype(np.int64)


@_overflow_is_a_result
def gemm_qs8(
    a: np.ndarray,
    w_kn: np.ndarray,
    p: QuantParams,
    bias: np.ndarray | None = None,
    clamp: tuple[int, int] = (-128, 127),
) -> np.ndarray:
    n = w_kn.shape[1]
    acc = sums(a, w_kn, np.array([p.a_zero_point])) + (0 if bias is None else np.asarray(bias, dtype=np.int64))
    a_scale, c_scale = normal(p.a_scale, "a_scale"), normal(p.c_scale, "c_scale")
    s = normal(
        ((a_scale * _per_channel(p.w_scales, n)).astype(F32) / c_scale).astype(F32), "s = a_scale·w_scale/c_scale"
    )
    f = (acc.astype(np.int32).astype(F32) * s).astype(F32)
    return np.clip(_rne(f) + p.c_zero_point, clamp[0], clamp[1]).astype(np.int8)


@_overflow_is_a_result
def gemm_qs8_f32(
    a: np.ndarray,
    w_kn: np.ndarray,
    p: QuantParams,
    bias: np.ndarray | None = None,
    clamp: tuple[float, float] | None = None,
) -> np.ndarray:
    n = w_kn.shape[1]
    acc = sums(a, w_kn, np.array([p.a_zero_point])) + (0 if bias is None else np.asarray(bias, dtype=np.int64))
    d = normal((normal(p.a_scale, "a_scale") * _per_channel(p.w_scales, n)).astype(F32), "d = a_scale·w_scale")
    return _clamp_f32((acc.astype(np.int32).astype(F32) * d).astype(F32), clamp)


@_overflow_is_a_result
def gemm_qd8_f32(
    a: np.ndarray,
    w_kn: np.ndarray,
    p: QuantParams,
    bias: np.ndarray | None = None,
    clamp: tuple[float, float] | None = None,
) -> np.ndarray:
    q, zps, scales = _quantized_rows(a)
    acc = sums(q, w_kn, zps).astype(np.int32).astype(F32)
    f = ((acc * scales).astype(F32) * _per_channel(p.w_scales, w_kn.shape[1])).astype(F32)
    if bias is not None:
        f = (f + no_subnormal(bias, "bias")).astype(F32)
    return _clamp_f32(f, clamp)


def _quantized_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = [quantize_row(row) for row in np.asarray(a, dtype=F32)]
    q = np.array([r[2] for r in rows], dtype=np.int8).reshape(a.shape)
    zps = np.array([r[1] for r in rows], dtype=np.int64)
    scales = np.array([r[0] for r in rows], dtype=F32).reshape(-1, 1)
    return q, zps, scales


@_overflow_is_a_result
def gemm_qd8_f32_qc4w(
    a: np.ndarray,
    w_kn: np.ndarray,
    p: QuantParams,
    bias: np.ndarray | None = None,
    clamp: tuple[float, float] | None = None,
) -> np.ndarray:
    """int4 W (values −8…7, one per element here): per channel or tensor as gemm_qd8_f32, or per block of k."""
    k, n = w_kn.shape
    if p.w_block == 0 or k <= p.w_block:
        return gemm_qd8_f32(a, w_kn, p, bias, clamp)
    q, zps, scales = _quantized_rows(a)
    blocks = -(-k // p.w_block)
    w_scales = normal(p.w_scales, "w_scales").reshape(n, blocks)
    total = np.zeros((a.shape[0], n), dtype=F32)
    for b in range(blocks):
        part = slice(b * p.w_block, min(k, (b + 1) * p.w_block))
        acc = sums(q[:, part], w_kn[part], zps).astype(np.int32).astype(F32)
        t = ((acc * scales).astype(F32) * w_scales[:, b]).astype(F32)
        total = t if b == 0 else (total + t).astype(F32)
    if bias is not None:
        total = (total + no_subnormal(bias, "bias")).astype(F32)
    return _clamp_f32(total, clamp)


def gemm_s4(a: np.ndarray, w_kn: np.ndarray) -> np.ndarray:
    """int8 A × int4 W → int32, exact (wrapping as the library's int32 does)."""
    return (a.astype(np.int64) @ w_kn.astype(np.int64)).astype(np.int32)


REFERENCE = {
    "gemm_qs8": gemm_qs8,
    "gemm_qs8_f32": gemm_qs8_f32,
    "gemm_qd8_f32": gemm_qd8_f32,
    "gemm_qd8_f32_qc4w": gemm_qd8_f32_qc4w,
}
