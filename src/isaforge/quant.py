"""The quantized ops' numerics (include/isaforge/isaforge.h), in numpy, step for step: the oracle of the tests, and
what an engine can check libisaforge's gemm_qs8, gemm_qs8_f32 and gemm_qd8_f32 against. Every fp32 step is one
IEEE rounding in the header's order, so the results are the library's bytes, not approximations of them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

F32 = np.float32
MAX_K = 65793  # ISF_QUANT_MAX_K: floor((2^31 - 1) / (255 * 128))


@dataclass(frozen=True)
class QuantParams:
    """isf_quant_params: w_scales has 1 or n values."""

    w_scales: np.ndarray
    a_scale: float = 1.0
    a_zero_point: int = 0
    c_scale: float = 1.0
    c_zero_point: int = 0


def _rne(x: np.ndarray) -> np.ndarray:
    return np.rint(x.astype(np.float64))


def quantize_row(a: np.ndarray) -> tuple[np.float32, int, np.ndarray]:
    """isf_quantize_row: (scale, zero point, int8 values) of one fp32 row."""
    a = np.asarray(a, dtype=F32)
    finite = a[~np.isnan(a)]
    lo = min(F32(0), finite.min()) if finite.size else F32(0)
    hi = max(F32(0), finite.max()) if finite.size else F32(0)
    span = F32(hi - lo)
    span = F32(255) if span == 0 else span
    scale, inv = F32(span / F32(255)), F32(F32(255) / span)
    t = F32(lo * inv)
    zp = int(np.clip(-128 - _rne(np.array(0 if np.isnan(t) else t)), -128, 127))
    x = (a * inv).astype(F32)
    x = np.where(np.isnan(x), F32(0), x)
    q = np.clip(_rne(x) + zp, -128, 127).astype(np.int8)
    return scale, zp, q


def _per_channel(w_scales: np.ndarray, n: int) -> np.ndarray:
    s = np.asarray(w_scales, dtype=F32)
    return np.full(n, s[0], dtype=F32) if s.size == 1 else s


def _clamp_f32(x: np.ndarray, clamp: tuple[float, float] | None) -> np.ndarray:
    if clamp is None:
        return x
    lo, hi = F32(clamp[0]), F32(clamp[1])
    return np.where(np.isnan(x), x, np.minimum(np.maximum(x, lo), hi)).astype(F32)


def _sums(a: np.ndarray, w_kn: np.ndarray, zero_points: np.ndarray) -> np.ndarray:
    """Σ_k (a − zp) · w exactly (int64), row zero points broadcast."""
    return (a.astype(np.int64) - zero_points.reshape(-1, 1)) @ w_kn.astype(np.int64)


def gemm_qs8(
    a: np.ndarray,
    w_kn: np.ndarray,
    p: QuantParams,
    bias: np.ndarray | None = None,
    clamp: tuple[int, int] = (-128, 127),
) -> np.ndarray:
    n = w_kn.shape[1]
    acc = _sums(a, w_kn, np.array([p.a_zero_point])) + (0 if bias is None else np.asarray(bias, dtype=np.int64))
    s = ((F32(p.a_scale) * _per_channel(p.w_scales, n)).astype(F32) / F32(p.c_scale)).astype(F32)
    f = (acc.astype(np.int32).astype(F32) * s).astype(F32)
    return np.clip(_rne(f) + p.c_zero_point, clamp[0], clamp[1]).astype(np.int8)


def gemm_qs8_f32(
    a: np.ndarray,
    w_kn: np.ndarray,
    p: QuantParams,
    bias: np.ndarray | None = None,
    clamp: tuple[float, float] | None = None,
) -> np.ndarray:
    n = w_kn.shape[1]
    acc = _sums(a, w_kn, np.array([p.a_zero_point])) + (0 if bias is None else np.asarray(bias, dtype=np.int64))
    d = (F32(p.a_scale) * _per_channel(p.w_scales, n)).astype(F32)
    return _clamp_f32((acc.astype(np.int32).astype(F32) * d).astype(F32), clamp)


def gemm_qd8_f32(
    a: np.ndarray,
    w_kn: np.ndarray,
    p: QuantParams,
    bias: np.ndarray | None = None,
    clamp: tuple[float, float] | None = None,
) -> np.ndarray:
    rows = [quantize_row(row) for row in np.asarray(a, dtype=F32)]
    q = np.array([r[2] for r in rows]).reshape(a.shape)
    zps = np.array([r[1] for r in rows], dtype=np.int64)
    scales = np.array([r[0] for r in rows], dtype=F32).reshape(-1, 1)
    acc = _sums(q, w_kn, zps).astype(np.int32).astype(F32)
    f = ((acc * scales).astype(F32) * _per_channel(p.w_scales, w_kn.shape[1])).astype(F32)
    if bias is not None:
        f = (f + np.asarray(bias, dtype=F32)).astype(F32)
    return _clamp_f32(f, clamp)


REFERENCE = {"gemm_qs8": gemm_qs8, "gemm_qs8_f32": gemm_qs8_f32, "gemm_qd8_f32": gemm_qd8_f32}
