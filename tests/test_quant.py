"""isaforge.quant, the numpy statement of the quantized ops' numerics: the row quantization's documented properties
(zero exact, the error within half a step, ties to even, NaN as zero) and the requantization's saturation."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge import quant


def test_a_row_quantizes_with_zero_exact_and_half_a_step_of_error() -> None:
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(257) * 7).astype(np.float32)
    a[5] = 0.0
    scale, zp, q = quant.quantize_row(a)
    assert -128 <= zp <= 127 and q[5] == zp
    assert q.min() == -128 and q.max() == 127  # the row's ends reach the int8 ends
    error = np.abs((q.astype(np.float64) - zp) * scale - a)
    assert error.max() <= scale * 0.5 + 1e-6 * np.abs(a).max()


def test_rows_of_one_sign_of_zeros_and_of_nan() -> None:
    assert quant.quantize_row(np.zeros(4, np.float32))[:2] == (np.float32(1.0), -128)
    scale, zp, q = quant.quantize_row(np.array([0.0, 1.0, 2.0], np.float32))
    assert scale == np.float32(2 / 255) and zp == -128 and q.tolist() == [-128, 0, 127]  # 127.5 → 128
    _, zp, q = quant.quantize_row(np.array([np.nan, -1.0, 1.0], np.float32))
    assert q[0] == zp


def test_requantization_saturates_at_both_ends_and_rounds_ties_to_even() -> None:
    a = np.array([[1, -1, 3]], np.int8)
    w = np.array([[1, 127, -128]], np.int8).T.reshape(3, 1) * np.ones((1, 1), np.int8)
    p = quant.QuantParams(np.array([1.0], np.float32), a_scale=1.0, c_scale=1.0, c_zero_point=0)
    assert quant.gemm_qs8(a, w, p).tolist() == [[-128]]  # 1 − 127 − 384 = −510
    half = quant.QuantParams(np.array([0.5], np.float32), a_scale=1.0, c_scale=1.0)
    one = np.array([[1]], np.int8)
    assert quant.gemm_qs8(one, np.array([[5]], np.int8), half).tolist() == [[2]]  # 2.5 → 2
    assert quant.gemm_qs8(one, np.array([[7]], np.int8), half).tolist() == [[4]]  # 3.5 → 4
    assert quant.gemm_qs8(one * 127, np.array([[127]], np.int8), half, bias=np.array([10**6])).tolist() == [[127]]


def test_rows_whose_span_is_below_255_flt_min_quantize_as_zero_rows() -> None:
    least = np.float32(255 * 2.0**-126)
    scale, zp, q = quant.quantize_row(np.array([0.0, least], np.float32))  # scale FLT_MIN: still a row of values
    assert scale == np.float32(2.0**-126) and zp == -128 and q.tolist() == [-128, 127]
    below = [
        [0.0, np.nextafter(least, np.float32(0))],
        [-1e-38, 1e-38],  # span below 255 / FLT_MAX: 255 / span would be +Inf
        [2.0**-149, -(2.0**-140)],
    ]
    for row in below:
        scale, zp, q = quant.quantize_row(np.array(row, np.float32))
        assert (scale, zp, q.tolist()) == (np.float32(1.0), -128, [-128, -128]), row


def test_scales_that_are_not_finite_normal_floats_are_refused_as_the_library_does() -> None:
    a8, af, w = np.zeros((1, 2), np.int8), np.ones((1, 2), np.float32), np.ones((2, 1), np.int8)
    huge = quant.QuantParams(np.array([2.0**100], np.float32), a_scale=2.0**100)
    with pytest.raises(ValueError, match="s = "):
        quant.gemm_qs8(a8, w, huge)  # s = +Inf, and acc + bias = 0
    with pytest.raises(ValueError, match="d = "):
        quant.gemm_qs8_f32(a8, w, huge)
    with pytest.raises(ValueError, match="s = "):
        quant.gemm_qs8(a8, w, quant.QuantParams(np.array([2.0**-30], np.float32), a_scale=2.0**-100))  # subnormal
    subnormal_w = quant.QuantParams(np.array([2.0**-135], np.float32), a_scale=2.0**20)  # products normal
    for op, ref in quant.REFERENCE.items():
        with pytest.raises(ValueError, match="w_scales"):
            ref(af if op.startswith("gemm_qd8") else a8, w, subnormal_w)
    one = quant.QuantParams(np.array([1.0], np.float32))
    with pytest.raises(ValueError, match="bias"):
        quant.gemm_qd8_f32(af, w, one, bias=np.array([2.0**-130], np.float32))
    with pytest.raises(ValueError, match="clamp"):
        quant.gemm_qs8_f32(a8, w, one, clamp=(-(2.0**-127), 1.0))
    edges = quant.QuantParams(np.array([2.0**-126, quant.FLT_MAX], np.float32))
    assert quant.gemm_qs8(a8, np.ones((2, 2), np.int8), edges).tolist() == [[0, 0]]
    assert quant.gemm_qd8_f32(af, np.ones((2, 2), np.int8), edges, bias=np.zeros(2, np.float32)).shape == (1, 2)
