"""isaforge.gemmjob's oracle must catch what a kernel can get wrong: results written the way gemm_runner writes them
(status, guard, m×ldc block, guard), then spoiled one way at a time, must fail check_case with one line."""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from isaforge import gemmjob
from isaforge.catalogue import load
from isaforge.gemmjob import NO_EPILOGUE, Case, Epilogue, OpTypes

OPS = tuple(load().plain_ops())
CASE = Case(m=3, n=5, k=7, lda=9, ldb=6, ldc=8)  # padding after every row, the last one included

Spoil = Callable[[np.ndarray, np.ndarray], None]  # (flat result with guards, m×ldc view of C)


def runner_output(
    types: OpTypes, a: np.ndarray, b: np.ndarray, case: Case, spoil: Spoil | None, epilogue: Epilogue = NO_EPILOGUE
) -> bytes:
    """One case as a correct runner writes it (sentinel everywhere but the m×n window, which holds A·B, or, with an
    epilogue, clamp(A·B + bias) computed independently of the oracle), then `spoil`ed."""
    guard = gemmjob.guard_elements(types, case)
    count = 2 * guard + case.m * case.ldc
    flat = np.frombuffer(bytes([gemmjob.SENTINEL_BYTE]) * count * types.out_dtype.itemsize, types.out_dtype).copy()
    block = flat[guard:-guard].reshape(case.m, case.ldc)
    av, bv = (gemmjob.to_float64(types, x) for x in gemmjob.operand_views(a, b, case))
    window = av @ bv
    if epilogue.bias is not None:
        window = window + epilogue.bias[: case.n].astype(np.float64)
    if epilogue.clamp is not None:
        window = np.clip(window, *epilogue.clamp)
    block[:, : case.n] = window
    if spoil is not None:
        spoil(flat, block)
    return struct.pack("<i", 0) + flat.tobytes()


def check(
    op: str,
    tmp_path: Path,
    spoil: Spoil | None = None,
    status: int = 0,
    written: Epilogue = NO_EPILOGUE,
    checked: Epilogue = NO_EPILOGUE,
) -> str | None:
    """The case written with the `written` epilogue applied, checked by an oracle told `checked`."""
    types = gemmjob.op_types(op)
    a, b = gemmjob.random_operands(types, [CASE], seed=5)
    data = runner_output(types, a, b, CASE, spoil, written)
    path = tmp_path / "case.out"
    path.write_bytes(struct.pack("<i", status) + data[4:])
    (result,) = gemmjob.read_results(path, types, [CASE])
    per_case = gemmjob.check_case(types, "ref", a, b, CASE, result, checked)
    # The whole-batch check that test_gemm.py uses must reach the same verdict, with the same words.
    batch = gemmjob.Oracle(types, a, b, [CASE], checked).failures("ref", path)
    assert batch == ([per_case] if per_case else []), (batch, per_case)
    return per_case


def fails(op: str, tmp_path: Path, spoil: Spoil, *words: str) -> None:
    msg = check(op, tmp_path, spoil)
    assert msg is not None, "check_case accepted a spoiled result"
    assert "\n" not in msg and str(CASE) in msg, msg
    for word in words:
        assert word in msg, msg


@pytest.mark.parametrize("op", OPS)
def test_a_right_result_passes(op: str, tmp_path: Path) -> None:
    assert check(op, tmp_path) is None


@pytest.mark.parametrize("op", OPS)
def test_a_wrong_value_fails(op: str, tmp_path: Path) -> None:
    def spoil(_flat: np.ndarray, c: np.ndarray) -> None:
        c[2, 4] = c[2, 4] + 1 if c.dtype == np.int32 else c[2, 4] * 1.01 + 0.01

    fails(op, tmp_path, spoil, "C(")


@pytest.mark.parametrize("op", ["gemm_f32", "gemm_f16", "gemm_bf16"])
def test_a_nan_where_ieee_gives_a_finite_value_fails(op: str, tmp_path: Path) -> None:
    def spoil(_flat: np.ndarray, c: np.ndarray) -> None:
        c[1, 1] = np.nan

    fails(op, tmp_path, spoil, "NaN/Inf")


def test_a_refusal_status_fails(tmp_path: Path) -> None:
    msg = check("gemm_f32", tmp_path, status=3)
    assert msg is not None and "status 3" in msg


def flat_index(op: str, where: str) -> int:
    """Where, in the flat result with guards, each region outside C's m×n window starts or ends."""
    guard = gemmjob.guard_elements(gemmjob.op_types(op), CASE)
    c_end = guard + CASE.m * CASE.ldc
    return {
        "far_before": 0,
        "just_before": guard - 1,
        "first_row_padding": guard + CASE.n,
        "middle_row_padding": guard + CASE.ldc + CASE.ldc - 1,
        "last_row_padding": c_end - 1,
        "just_after": c_end,
        "far_after": c_end + guard - 1,
    }[where]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize(
    ("where", "words"),
    [
        ("far_before", "before C"),
        ("just_before", "before C"),
        ("first_row_padding", "padding between rows"),
        ("middle_row_padding", "padding between rows"),
        ("last_row_padding", "last row's padding"),
        ("just_after", "after the end"),
        ("far_after", "after the end"),
    ],
)
def test_a_write_outside_the_window_fails(op: str, where: str, words: str, tmp_path: Path) -> None:
    def spoil(flat: np.ndarray, _c: np.ndarray) -> None:
        flat[flat_index(op, where)] = 0

    fails(op, tmp_path, spoil, words)


def test_one_changed_byte_is_a_write(tmp_path: Path) -> None:
    """A kernel storing a narrower type than C's shows as one byte, not a whole element."""

    def spoil(flat: np.ndarray, _c: np.ndarray) -> None:
        flat.view(np.uint8)[flat_index("gemm_f32", "just_after") * 4 + 3] = 0

    fails("gemm_f32", tmp_path, spoil, "after the end", "byte 3")


def test_trailing_bytes_in_a_result_file_are_an_error(tmp_path: Path) -> None:
    types = gemmjob.op_types("gemm_s8")
    a, b = gemmjob.random_operands(types, [CASE], seed=5)
    path = tmp_path / "case.out"
    path.write_bytes(runner_output(types, a, b, CASE, None) + b"\0")
    with pytest.raises(ValueError, match="trailing"):
        gemmjob.read_results(path, types, [CASE])
    with pytest.raises(ValueError, match="trailing"):
        gemmjob.Oracle(types, a, b, [CASE]).failures("ref", path)


@pytest.mark.parametrize("op", OPS)
def test_the_batch_check_finds_one_wrong_case_among_many(op: str, tmp_path: Path) -> None:
    """Cases whose records end at offsets that are not multiples of 4 (binary16 C), the middle one spoiled: first a
    wrong value, then a write into its padding; each is named, and only that case."""
    types = gemmjob.op_types(op)
    cases = [Case(3, 5, 7, 9, 6, 7), Case(2, 3, 4, 4, 3, 5), Case(1, 1, 1, 1, 1, 1)]
    a, b = gemmjob.random_operands(types, cases, seed=2)
    oracle = gemmjob.Oracle(types, a, b, cases)

    def write(spoil: Spoil | None) -> Path:
        records = [runner_output(types, a, b, c, spoil if c is cases[1] else None) for c in cases]
        (path := tmp_path / "batch.out").write_bytes(b"".join(records))
        return path

    def bump(_flat: np.ndarray, c: np.ndarray) -> None:
        c[1, 2] = c[1, 2] + 1 if c.dtype == np.int32 else c[1, 2] * 1.01 + 0.01

    def pad(_flat: np.ndarray, c: np.ndarray) -> None:
        c[0, 4] = 0

    assert oracle.failures("ref", write(None)) == []
    (wrong,) = oracle.failures("ref", write(bump))
    assert str(cases[1]) in wrong and "C(1, 2)" in wrong, wrong
    (stray,) = oracle.failures("ref", write(pad))
    assert str(cases[1]) in stray and "padding between rows" in stray, stray


# -- plans and their epilogue -------------------------------------------------------------------------------------
def epilogue(op: str) -> Epilogue:
    return gemmjob.random_epilogue(gemmjob.op_types(op), CASE.n, seed=9, clamp=(-0.75, 1.5))


@pytest.mark.parametrize("op", OPS)
def test_an_epilogue_applied_passes_and_one_left_out_fails(op: str, tmp_path: Path) -> None:
    ep = epilogue(op)
    assert check(op, tmp_path, written=ep, checked=ep) is None
    assert check(op, tmp_path, written=NO_EPILOGUE, checked=ep) is not None, "a missing bias passed"
    assert check(op, tmp_path, written=ep, checked=NO_EPILOGUE) is not None, "an unexpected bias passed"
    if ep.clamp is not None:
        unclamped = Epilogue(ep.bias, None)
        assert check(op, tmp_path, written=unclamped, checked=ep) is not None, "a missing clamp passed"
        bias_only = check(op, tmp_path, written=Epilogue(None, ep.clamp), checked=ep)
        assert bias_only is not None, "a clamp without the bias passed"


def test_the_clamp_keeps_nan_and_turns_infinities_into_bounds() -> None:
    types = gemmjob.op_types("gemm_f16")
    x = np.array([np.nan, np.inf, -np.inf, 0.3, -0.3, 0.125])
    got = gemmjob.clamped(types, x, -0.1, 0.2)  # bounds rounded to binary16, as the plan rounds them
    assert np.isnan(got[0])
    assert got[1] == got[3] == float(np.float16(0.2)) and got[2] == got[4] == float(np.float16(-0.1))
    assert got[5] == 0.125


def test_an_int32_bias_wraps_modulo_2_to_the_32() -> None:
    assert gemmjob.wrap_int32(np.array([2.0**31, -(2.0**31) - 1, 5.0])).tolist() == [-(2.0**31), 2.0**31 - 1, 5.0]


def test_the_job_file_carries_the_plan_flag_bias_and_bounds(tmp_path: Path) -> None:
    types = gemmjob.op_types("gemm_f32")
    a, b = gemmjob.random_operands(types, [CASE], seed=1)
    ep = Epilogue(np.arange(6, dtype=np.float32), (-1.0, 2.0))
    path = tmp_path / "plan.job"
    gemmjob.write_job(path, types, a, b, [CASE], plan=True, epilogue=ep)
    data = path.read_bytes()
    flags = gemmjob.PLAN_FLAG | gemmjob.BIAS_FLAG | gemmjob.CLAMP_FLAG
    assert data[:16] == b"ISFJ" + struct.pack("<III", types.index, 1, flags)
    at = 32 + a.nbytes + b.nbytes
    assert struct.unpack_from("<Q", data, at) == (24,)
    assert np.array_equal(np.frombuffer(data, np.float32, 6, at + 8), ep.bias)
    assert struct.unpack_from("<ff", data, at + 32) == (-1.0, 2.0)
    assert len(data) == at + 40 + 6 * 8


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"epilogue": Epilogue(None, (0.0, 1.0))}, "needs plan"),
        ({"plan": True, "packed": True}, "choose one"),
        ({"plan": True, "epilogue": Epilogue(np.zeros(2, np.float32))}, "the widest case"),
    ],
)
def test_job_files_the_runner_would_refuse_are_not_written(kwargs: dict, words: str, tmp_path: Path) -> None:
    types = gemmjob.op_types("gemm_f32")
    a, b = gemmjob.random_operands(types, [CASE], seed=1)
    with pytest.raises(ValueError, match=words):
        gemmjob.write_job(tmp_path / "x.job", types, a, b, [CASE], **kwargs)
    assert not (tmp_path / "x.job").exists()


def test_an_int32_clamp_is_refused(tmp_path: Path) -> None:
    types = gemmjob.op_types("gemm_s8")
    a, b = gemmjob.random_operands(types, [CASE], seed=1)
    with pytest.raises(ValueError, match="integer output"):
        gemmjob.write_job(tmp_path / "x.job", types, a, b, [CASE], plan=True, epilogue=Epilogue(None, (0, 1)))


def test_the_bound_is_infinite_where_gamma_bounds_nothing() -> None:
    """binary16 accumulation over 2304 terms: (k+1)·2^-11 > 1, so γ is no bound (it would be negative)."""
    types = gemmjob.op_types("gemm_f16")
    av, bv = np.ones((2, 2304)), np.ones((2304, 3))
    narrow = load().ops["gemm_f16"].narrow_accumulation[0]
    assert np.all(np.isinf(gemmjob.error_bound(types, narrow, av, bv, 2304)))
    assert np.all(np.isfinite(gemmjob.error_bound(types, narrow, av[:, :1000], bv[:1000], 1000)))
