"""Batches of GEMM problems for tests/kernels/gemm_runner.c, and the float64 oracle that checks its answers.

One job file holds one A and one B buffer shared by every case (each case reads a leading submatrix with its own
leading dimensions), so thousands of shapes cost one QEMU start.

A job may run its cases through a plan (PLAN_FLAG: isf_gemm_create with the case's B as ISF_WEIGHTS_KN weights,
then isf_gemm_run) and give the plan an epilogue (Epilogue: a bias of C's element type, of which each case takes
its first n values, and a clamp [lo, hi] for float outputs); check_case applies the same epilogue to the oracle.

Result file (the format is documented at the top of tests/kernels/gemm_runner.c too), per case: i32 status, then
G guard elements, the m×ldc block of C, G guard elements, with G = guard_elements(): room for a whole 8-row tile
of the widest SVE vectors landing past either end. Everything outside C's m×n window must still hold the sentinel
byte 0xA5 the runner filled it with; check_case names the first place that does not.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from isaforge.catalogue import load

SENTINEL_BYTE = 0xA5
F32_UNIT_ROUNDOFF = 2.0**-24
F16_UNIT_ROUNDOFF = 2.0**-11
PACKED_FLAG = 1
GUARD_PAGES_FLAG = 2
PLAN_FLAG = 4  # through isf_gemm_create + isf_gemm_run
BIAS_FLAG = 8  # plan only: u64 bias bytes and the bias follow B in the job
CLAMP_FLAG = 16  # plan only: f32 lo, f32 hi follow (the bias): ISF_GEMM_CLAMP to [lo, hi]
GUARD_ROWS = 8
GUARD_TAIL_BYTES = 512


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
    """How an op's operands travel: `in_dtype`/`out_dtype` are the wire types, the catalogue dtypes' `numpy`
    (bfloat16 travels as its uint16 bits)."""

    op: str
    index: int
    in_dtype: np.dtype
    out_dtype: np.dtype
    bfloat16: bool  # the inputs are bfloat16 bits


def op_types(op: str) -> OpTypes:
    spec = load().ops[op]
    return OpTypes(op, spec.index, np.dtype(spec.a.numpy), np.dtype(spec.c.numpy), spec.a.kind == "bfloat16")


@dataclass(frozen=True)
class Epilogue:
    """What a plan applies to C on top of A·W: `bias` (C's element type, at least n values; each case uses its
    first n) and `clamp` (lo, hi), float outputs only. Applied as the kernels do: C = clamp(A·W + bias)."""

    bias: np.ndarray | None = None
    clamp: tuple[float, float] | None = None

    def __bool__(self) -> bool:
        return self.bias is not None or self.clamp is not None


NO_EPILOGUE = Epilogue()


def random_epilogue(types: OpTypes, n: int, seed: int, clamp: tuple[float, float] | None = (-2.5, 3.0)) -> Epilogue:
    """A bias of n values exactly representable in C's type, and (float outputs only) `clamp`: bounds that cut
    both tails of A·B + bias for the standard-normal operands random_operands makes."""
    rng = np.random.default_rng(seed)
    if types.out_dtype == np.int32:
        return Epilogue(rng.integers(-(2**20), 2**20, n, dtype=np.int32), None)
    return Epilogue(rng.standard_normal(n).astype(types.out_dtype), clamp)


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 → bfloat16 bits by truncation (the values used are exactly representable)."""
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def to_float64(types: OpTypes, x: np.ndarray) -> np.ndarray:
    if types.bfloat16:
        return (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return x.astype(np.float64)


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
    a, b = rng.standard_normal(a_len), rng.standard_normal(b_len)
    if types.bfloat16:
        return bf16_bits(a), bf16_bits(b)
    return a.astype(types.in_dtype), b.astype(types.in_dtype)


def plant_non_finite(types: OpTypes, a: np.ndarray, b: np.ndarray, case: Case) -> None:
    """A NaN in A's row 0 and an infinity in B's last column, so whole rows and columns must turn non-finite."""
    nan, inf = (0x7FC0, 0x7F80) if types.bfloat16 else (np.nan, np.inf)
    a[case.k - 1] = nan
    b[(case.k - 1) * case.ldb + case.n - 1] = inf


def write_job(
    path: Path,
    types: OpTypes,
    a: np.ndarray,
    b: np.ndarray,
    cases: list[Case],
    packed: bool = False,
    guard_pages: bool = False,
    plan: bool = False,
    epilogue: Epilogue = NO_EPILOGUE,
) -> None:
    """`guard_pages`: the runner puts every operand in its own mapping, ending exactly at a PROT_NONE page.
    `plan`: the cases run through a plan, with `epilogue` (which needs a plan)."""
    if epilogue and not plan:
        raise ValueError("an epilogue needs plan=True")
    if packed and plan:
        raise ValueError("packed and plan are two different paths: choose one")
    if epilogue.clamp is not None and types.out_dtype == np.int32:
        raise ValueError(f"{types.op} has integer output: no clamp")
    flags = (PACKED_FLAG if packed else 0) | (GUARD_PAGES_FLAG if guard_pages else 0) | (PLAN_FLAG if plan else 0)
    tail = b""
    if epilogue.bias is not None:
        bias = np.ascontiguousarray(epilogue.bias, types.out_dtype)
        if bias.size < max((c.n for c in cases), default=0):
            raise ValueError(f"the bias has {bias.size} values; the widest case needs n")
        flags |= BIAS_FLAG
        tail += struct.pack("<Q", bias.nbytes) + bias.tobytes()
    if epilogue.clamp is not None:
        flags |= CLAMP_FLAG
        tail += struct.pack("<ff", *epilogue.clamp)
    header = b"ISFJ" + struct.pack("<III", types.index, len(cases), flags) + struct.pack("<QQ", a.nbytes, b.nbytes)
    table = np.array([[c.m, c.n, c.k, c.lda, c.ldb, c.ldc] for c in cases], dtype="<u8")
    path.write_bytes(header + a.tobytes() + b.tobytes() + tail + table.tobytes())


@dataclass(frozen=True)
class Result:
    """One case as the runner wrote it: C is the raw m×ldc block, `before`/`after` the guard elements."""

    status: int
    before: np.ndarray
    c: np.ndarray
    after: np.ndarray


def guard_elements(types: OpTypes, case: Case) -> int:
    return GUARD_ROWS * case.ldc + GUARD_TAIL_BYTES // types.out_dtype.itemsize


def read_results(path: Path, types: OpTypes, cases: list[Case]) -> list[Result]:
    data = path.read_bytes()
    out = []
    pos = 0
    for c in cases:
        (status,) = struct.unpack_from("<i", data, pos)
        pos += 4
        guard = guard_elements(types, c)
        count = 2 * guard + c.m * c.ldc
        flat = np.frombuffer(data, types.out_dtype, count, pos)
        out.append(Result(status, flat[:guard], flat[guard:-guard].reshape(c.m, c.ldc), flat[-guard:]))
        pos += count * types.out_dtype.itemsize
    if pos != len(data):
        raise ValueError(f"result file has {len(data) - pos} trailing bytes")
    return out


def operand_views(a: np.ndarray, b: np.ndarray, c: Case) -> tuple[np.ndarray, np.ndarray]:
    av = np.lib.stride_tricks.as_strided(a, (c.m, c.k), (c.lda * a.itemsize, a.itemsize))
    bv = np.lib.stride_tricks.as_strided(b, (c.k, c.n), (c.ldb * b.itemsize, b.itemsize))
    return av, bv


def unit_roundoff(types: OpTypes, variant: str) -> float:
    """The unit roundoff of the variant's accumulation (see error_bound)."""
    if variant in load().ops[types.op].narrow_accumulation:
        return F16_UNIT_ROUNDOFF
    return 2 * F32_UNIT_ROUNDOFF if types.bfloat16 else F32_UNIT_ROUNDOFF


def error_bound(
    types: OpTypes, variant: str, av: np.ndarray, bv: np.ndarray, k: int, bias: np.ndarray | None = None
) -> np.ndarray:
    """|computed − exact| ≤ γ(t+1)·Σ|terms| (+ the final rounding to binary16), γ(j) = j·u/(1 − j·u), over the t
    terms summed: the k products, and the bias when there is one (one more addition, in the output type).

    Every float variant sums k products in its accumulation type — fused or not, in any order, split into Kc
    blocks — so the classic recursive-summation bound holds for all, with u the unit roundoff of that type:
    2^-24 for fp32; 2^-11 for the variants the catalogue lists under the op's `narrow_accumulation`; bfloat16
    matrix instructions (BFMMLA) may round to odd inside, so bf16 gets u = 2^-23. A clamp moves no two values
    further apart, so the bound holds after it too. Past (t+1)·u ≥ 1 (binary16 sums of 2047 terms or more) γ
    bounds nothing: the bound is infinite there, and only the NaN/Inf pattern is checked.
    """
    u = unit_roundoff(types, variant)
    terms = k + (bias is not None)
    j = (terms + 1) * u
    if j >= 1:
        return np.full((av.shape[0], bv.shape[1]), np.inf)
    magnitude = np.abs(av) @ np.abs(bv)
    value = av @ bv
    if bias is not None:
        magnitude, value = magnitude + np.abs(bias), value + bias
    bound = j / (1 - j) * magnitude + np.finfo(np.float32).tiny
    if types.out_dtype == np.float16:
        bound = bound + F16_UNIT_ROUNDOFF * (np.abs(value) + bound) + 2.0**-25
    return bound


def _same_non_finite(result: np.ndarray, exact: np.ndarray) -> bool:
    finite = np.isfinite(exact)
    if not np.array_equal(np.isnan(result), np.isnan(exact)):
        return False
    return bool(np.array_equal(result[np.isinf(exact)], exact[np.isinf(exact)]) and np.all(np.isfinite(result[finite])))


def _wrong_int(label: str, result: np.ndarray, exact: np.ndarray) -> str | None:
    if np.array_equal(result, exact):
        return None
    bad = tuple(int(i) for i in np.argwhere(result != exact)[0])
    return f"{label}: C{bad} = {result[bad]:.0f}, expected {exact[bad]:.0f}"


def _finite_bound(types: OpTypes, variant: str, av: np.ndarray, bv: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """error_bound for the finite results: no NaN or Inf reaches those, so they count as zero in the magnitudes."""
    fa, fb = np.where(np.isfinite(av), av, 0.0), np.where(np.isfinite(bv), bv, 0.0)
    with np.errstate(invalid="ignore"):
        return error_bound(types, variant, fa, fb, av.shape[1], bias)


def exact_result(types: OpTypes, av: np.ndarray, bv: np.ndarray, epilogue: Epilogue) -> np.ndarray:
    """C as float64 from float64 A and B: A·B + bias, wrapped modulo 2^32 for int32 C, clamped for float C."""
    bias = _bias_row(types, bv.shape[1], epilogue)
    with np.errstate(invalid="ignore", over="ignore"):
        exact = av @ bv if bias is None else av @ bv + bias
    if types.out_dtype == np.int32:
        return wrap_int32(exact)
    return exact if epilogue.clamp is None else clamped(types, exact, *epilogue.clamp)


def _wrong_float(types: OpTypes, variant: str, label: str, av: np.ndarray, bv: np.ndarray, result: np.ndarray,
                 exact: np.ndarray, bias: np.ndarray | None) -> str | None:  # fmt: skip
    if not _same_non_finite(result, exact):
        return f"{label}: NaN/Inf pattern differs from IEEE arithmetic"
    finite = np.isfinite(exact)
    with np.errstate(invalid="ignore"):
        err = np.where(finite, np.abs(result - exact), 0.0)
        bound = np.where(finite, _finite_bound(types, variant, av, bv, bias), 1.0)
    if np.all(err <= bound):
        return None
    bad = tuple(int(i) for i in np.argwhere(err > bound)[0])
    got, want = float(result[bad]), float(exact[bad])
    return f"{label}: C{bad} = {got!r}, expected {want!r} (error {err[bad]:.3g} > bound {bound[bad]:.3g})"


def _first_overwrite(x: np.ndarray) -> int | None:
    """Byte offset of the first byte that no longer holds the sentinel."""
    raw = np.ascontiguousarray(x).view(np.uint8)
    changed = np.flatnonzero(raw != SENTINEL_BYTE)
    return int(changed[0]) if changed.size else None


def stray_write(c: Case, result: Result) -> str | None:
    """Where the result was written outside C's m×n window, or None."""
    regions = (
        ("before C (leading guard), byte {} of it", result.before),
        ("into the padding between rows (ldc > n), byte {} of rows 0..m-2's padding", result.c[:-1, c.n :]),
        ("into the last row's padding, byte {} of it", result.c[-1, c.n :]),
        ("after the end of C (trailing guard), byte {} of it", result.after),
    )
    for where, region in regions:
        if (at := _first_overwrite(region)) is not None:
            return f"{c}: wrote {where.format(at)}"
    return None


def _bias_row(types: OpTypes, n: int, epilogue: Epilogue) -> np.ndarray | None:
    """The first n bias values as float64 (bfloat16 ops have fp32 C, so their bias is fp32 too)."""
    if epilogue.bias is None:
        return None
    return np.asarray(epilogue.bias[:n], types.out_dtype).astype(np.float64)


def clamped(types: OpTypes, x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """FMAX then FMIN, as the kernels clamp: NaN stays NaN, ±Inf become the bounds; the bounds in C's type."""
    lo, hi = (float(np.asarray(v, np.float32).astype(types.out_dtype)) for v in (lo, hi))
    return np.minimum(np.maximum(x, lo), hi)


def wrap_int32(x: np.ndarray) -> np.ndarray:
    """Exact integers (as float64) reduced modulo 2^32 into int32's range, as int32 additions wrap."""
    as_int = np.rint(x).astype(np.int64)
    return ((as_int + 2**31) % 2**32 - 2**31).astype(np.float64)


def check_case(
    types: OpTypes,
    variant: str,
    a: np.ndarray,
    b: np.ndarray,
    c: Case,
    result: Result,
    epilogue: Epilogue = NO_EPILOGUE,
) -> str | None:
    """None when the result is right, else one line saying what is wrong (stray writes first: they are worse).
    The oracle is clamp(A·B + bias) for a plan's `epilogue`."""
    if (stray := stray_write(c, result)) is not None:
        return stray
    if result.status != 0:
        return f"{c}: status {result.status}"
    av, bv = operand_views(a, b, c)
    return check_matrix(types, variant, av, bv, result.c[:, : c.n], epilogue, label=str(c))


def check_matrix(
    types: OpTypes,
    variant: str,
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    epilogue: Epilogue = NO_EPILOGUE,
    label: str = "",
) -> str | None:
    """The oracle on a plain result: C [m][n] as computed from A [m][k] and B [k][n], all in the op's wire types
    (for other programs than gemm_runner, which have no guard elements or leading dimensions). None when right,
    else one line starting with `label`."""
    av, bv = (to_float64(types, x) for x in (a, b))
    exact, got = exact_result(types, av, bv, epilogue), c.astype(np.float64)
    if types.out_dtype == np.int32:
        return _wrong_int(label, got, exact)
    return _wrong_float(types, variant, label, av, bv, got, exact, _bias_row(types, bv.shape[1], epilogue))


class Oracle:
    """The oracle of one job, computed once and held against the result file of every kernel that runs the job.

    A kernel's results are first checked all at once (one comparison over every case's window and one over every
    byte that must still hold the sentinel); only a batch that fails there goes case by case through check_case,
    which names what is wrong. The exact values are computed once per job, the error bounds once per unit roundoff.
    """

    def __init__(
        self, types: OpTypes, a: np.ndarray, b: np.ndarray, cases: list[Case], epilogue: Epilogue = NO_EPILOGUE
    ) -> None:
        self.types, self.a, self.b, self.cases, self.epilogue = types, a, b, cases, epilogue
        self._layout()
        # C's rows depend on A's rows alone: the cases that share k, n and the leading dimensions of A and B share
        # one product of the most rows any of them has, and each takes its first m rows (a sweep of 9537 shapes
        # has 561 such groups).
        tallest: dict[tuple[int, int, int, int], Case] = {}
        for c in cases:
            key = (c.k, c.lda, c.n, c.ldb)
            if key not in tallest or c.m > tallest[key].m:
                tallest[key] = c
        self._views = {key: tuple(to_float64(types, x) for x in operand_views(a, b, c)) for key, c in tallest.items()}
        self.exact = self._per_case(
            {key: exact_result(types, av, bv, epilogue) for key, (av, bv) in self._views.items()}
        )
        self._bounds: dict[float, np.ndarray] = {}

    def _per_case(self, by_group: dict[tuple[int, int, int, int], np.ndarray]) -> np.ndarray:
        """Every case's m×n window, in the result file's order, from its group's rows."""
        return np.concatenate([by_group[(c.k, c.lda, c.n, c.ldb)][: c.m].ravel() for c in self.cases])

    def _layout(self) -> None:
        """Where each case's status and C window sit in the result file, and which bytes must hold the sentinel."""
        size = self.types.out_dtype.itemsize
        status, window = [], []
        pos = 0  # in bytes
        for c in self.cases:
            status.append(pos)
            guard = guard_elements(self.types, c)
            first = (pos + 4) // size + guard  # C's first element, in elements
            window.append((first + np.arange(c.m)[:, None] * c.ldc + np.arange(c.n)).ravel())
            pos += 4 + (2 * guard + c.m * c.ldc) * size
        self.file_bytes = pos
        # A status may sit at any even offset (binary16 C): its 4 bytes are gathered one by one.
        self.status_bytes = (np.array(status, dtype=np.int64)[:, None] + np.arange(4)).ravel()
        self.window = np.concatenate(window) if window else np.zeros(0, np.int64)
        self.sentinel = np.ones(pos, bool)
        self.sentinel[self.status_bytes] = False
        self.sentinel[(self.window[:, None] * size + np.arange(size)).ravel()] = False

    def _bound(self, variant: str) -> np.ndarray:
        u = unit_roundoff(self.types, variant)
        if u not in self._bounds:
            self._bounds[u] = self._per_case(
                {
                    key: _finite_bound(self.types, variant, av, bv, _bias_row(self.types, bv.shape[1], self.epilogue))
                    for key, (av, bv) in self._views.items()
                }
            )
        return self._bounds[u]

    def _all_right(self, variant: str, data: bytes) -> bool:
        raw = np.frombuffer(data, np.uint8)
        if np.any(raw[self.sentinel] != SENTINEL_BYTE):
            return False
        if np.any(raw[self.status_bytes] != 0):  # any non-zero byte is a refusal
            return False
        got = np.frombuffer(data, self.types.out_dtype, len(data) // self.types.out_dtype.itemsize)[self.window]
        got = got.astype(np.float64)
        if self.types.out_dtype == np.int32:
            return bool(np.array_equal(got, self.exact))
        if not _same_non_finite(got, self.exact):
            return False
        finite = np.isfinite(self.exact)
        return bool(np.all(np.abs(got[finite] - self.exact[finite]) <= self._bound(variant)[finite]))

    def failures(self, variant: str, path: Path) -> list[str]:
        """One line per wrong case of the result file `path`, the cases that wrote outside C first (the worse news)."""
        data = path.read_bytes()
        if len(data) != self.file_bytes:
            read_results(path, self.types, self.cases)  # says what is wrong with the file's length
            raise ValueError(f"result file has {len(data)} bytes, {self.file_bytes} expected")
        if self._all_right(variant, data):
            return []
        results = list(zip(self.cases, read_results(path, self.types, self.cases), strict=True))
        stray = [stray_write(c, got) for c, got in results]
        strays = [msg for msg in stray if msg]
        wrong = [
            msg
            for outside, (c, got) in zip(stray, results, strict=True)
            if outside is None and (msg := check_case(self.types, variant, self.a, self.b, c, got, self.epilogue))
        ]
        if not strays + wrong:
            raise AssertionError("the batch check and check_case disagree: a bug in gemmjob.Oracle")
        return strays + wrong
