"""The libraries engines use today (OpenBLAS, BLIS, XNNPACK: Debian's arm64 packages) and libisaforge, each called
once through a small C harness under QEMU, so that one whole call can be compared with another.

The harnesses (this folder: harness.h documents the protocol) are cross-compiled with aarch64-linux-gnu-gcc and
`-no-pie`, so the addresses llvm-nm reads are those the run executes, and linked dynamically against Debian's
multiarch libc6:arm64: QEMU runs them without `-L`, the ELF interpreter /lib/ld-linux-aarch64.so.1 and the libraries
coming from the host's own arm64 multiarch directories. libisaforge's harness links a Build's libisaforge.a.

A run checks its result with gemmjob's oracle: the float bound of the library's accumulation type (binary16 for
XNNPACK's f16 operator, which accumulates in binary16), the exact int32 for libisaforge's gemm_s8, for XNNPACK's
requantized qs8 clamp(round_half_even(acc·scale) + zero point) within ±1 (its fixed-point requantization rounds
its own way), and for libisaforge's gemm_qs8 plan isaforge.quant's formula byte for byte (its fp32 steps are
specified, so there is no rounding of its own to allow for).

Precisions fp32, fp16 and bf16 carry the epilogue of an engine's fully-connected layer: a bias in C's type (fp32;
binary16 for fp16) and a clamp that bites (bounds at the 5 % and 95 % quantiles of A·B + bias, as the dynamic
precisions choose theirs: qplans.biting_clamp). The calls that can fuse them take them (libisaforge's plan,
XNNPACK's fully-connected operators) and are held to clamp(A·B + bias); the per-call APIs cannot (OpenBLAS's and
BLIS's sgemm, libisaforge's isf_gemm_*), so they compute C = A·B, less work, and are held to that.

Precision qs8 is int8 A and B with requantized int8 C for every library; int8 is the same inputs with C as the
library gives it (libisaforge: int32; XNNPACK, which has no int32 output: the qs8 call again).

Precisions qd8 and qc4w are the dynamically quantized GEMMs (fp32 A quantized per row inside the call, int8 or int4
weights with per-column scales, fp32 C with bias and clamp): libisaforge's gemm_qd8_f32 and gemm_qd8_f32_qc4w plans,
operands from bench.qplans (the quantized section's) and C held to isaforge.quant byte for byte. Debian's XNNPACK
(2022) has neither a dynamically quantized nor an int4 operator: in those rows it makes its qs8 call, a stand-in
that does less work (A arrives as int8, no quantization pass; int8 C, no fp32 dequantization, bias or float clamp;
for qc4w the same int8 weights, values in −8…7, at a byte each), checked as its qs8 row is.
"""

from __future__ import annotations

import math
import os
import shutil
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from isaforge import gemmjob, process, qemu, quant
from isaforge.bench import require, run_tool
from isaforge.bench.measure.executable import LIBRARY, LLVM_NM, parse_nm
from isaforge.bench.scenarios import qplans
from isaforge.bench.scenarios.shapes import Shape
from isaforge.builds import Build
from isaforge.catalogue import REFERENCE, load, parse_kernel_name
from isaforge.errors import IsaforgeError

HERE = Path(__file__).resolve().parent
ARCH = "aarch64"
CC = "aarch64-linux-gnu-gcc"
CC_PACKAGE = "gcc-aarch64-linux-gnu"
QEMU = "qemu-aarch64"
INTERPRETER = Path("/lib/ld-linux-aarch64.so.1")  # from libc6:arm64; QEMU runs the harnesses without -L
INSTALL_HINT = "bash ci/install-toolchains.sh --peers"
LOG_FLAGS = ("-d", "in_asm,exec,nochain")
BEGIN, END = "isf_bench_begin", "isf_bench_end"  # the window: [entry of BEGIN, entry of END)

PRECISIONS = ("fp32", "fp16", "bf16", "int8", "qs8", "qd8", "qc4w")
PLAIN, PREPACKED = "plain", "prepacked"
MODES = (PLAIN, PREPACKED)
PRECISION_OPS = {"fp32": "gemm_f32", "fp16": "gemm_f16", "bf16": "gemm_bf16", "int8": "gemm_s8", "qs8": "gemm_qs8",
                 "qd8": "gemm_qd8_f32", "qc4w": "gemm_qd8_f32_qc4w"}  # fmt: skip
FLOAT_EPILOGUE = ("fp32", "fp16", "bf16")  # their input file carries a bias [n] in C's type and a clamp
INT8_INPUTS = ("int8", "qs8")  # the precisions whose input file carries a requantization (scale, zero point)
# fp32 A quantized per row inside the call; their input file carries B's column scales, the bias and the clamp.
DYNAMIC = ("qd8", "qc4w")
INT4_WEIGHTS = ("qc4w",)
INT8_RMS = 74.0  # the root mean square of uniform int8 operands (int4 ones: INT8_RMS / 16)

MAGIC, VERSION = b"ISFP", 1
# Output element codes (harness.h's isf_bench_element) and their numpy types.
F32, F16, I32, I8 = 1, 2, 3, 4
ELEMENTS: dict[int, np.dtype] = {F32: np.dtype("<f4"), F16: np.dtype("<f2"), I32: np.dtype("<i4"), I8: np.dtype("i1")}
ELEMENT_NAMES = {F32: "f32", F16: "binary16", I32: "int32", I8: "int8 (requantized)"}

ARM64_LIB = "/usr/lib/aarch64-linux-gnu"
OPENBLAS_LIB = f"{ARM64_LIB}/openblas-serial"
OPENBLAS_INCLUDE = "/usr/include/aarch64-linux-gnu/openblas-serial"
BLIS_LIB = f"{ARM64_LIB}/blis-serial"
BLIS_INCLUDE = "/usr/include/aarch64-linux-gnu/blis-serial"
ISAFORGE = "isaforge"


@dataclass(frozen=True)
class Peer:
    """One library: where Debian puts it and what its harness offers. `requires` lists the (package, file) pairs
    its harness cannot be built without; `narrow` the precisions it accumulates in binary16; `requantized` those
    whose output is requantized int8 (held to ±1 of the exact requantization), `exact` those of them held to
    isaforge.quant's gemm_qs8 byte for byte; `prepacked_only` the precisions it offers prepacked only; `stands_in`
    (precision, the precision of the call it makes instead) where it has no such operation and its nearest call
    stands in (the report says so); `epilogue` the float precisions whose prepacked call applies the input's bias
    and clamp (a plain call, a per-call API, has no epilogue: it computes C = A·B)."""

    library: str
    package: str  # the Debian package that installs it ("" for libisaforge: built from this tree)
    source: str  # its harness file in this folder
    include_dirs: tuple[str, ...]
    link: tuple[str, ...]
    requires: tuple[tuple[str, str], ...]
    precisions: tuple[str, ...]
    modes: tuple[str, ...]
    narrow: tuple[str, ...] = ()
    requantized: tuple[str, ...] = ()
    exact: tuple[str, ...] = ()
    prepacked_only: tuple[str, ...] = ()
    stands_in: tuple[tuple[str, str], ...] = ()
    epilogue: tuple[str, ...] = ()

    def applies_epilogue(self, precision: str, mode: str) -> bool:
        """Whether its call for (precision, mode) computes clamp(A·B + bias) rather than A·B."""
        return precision in self.epilogue and mode == PREPACKED

    def call(self, precision: str) -> str:
        """The precision of the call the harness makes for `precision` (itself, unless a stand-in)."""
        return dict(self.stands_in).get(precision, precision)

    def offers(self, precision: str, mode: str) -> bool:
        if precision in self.prepacked_only and mode != PREPACKED:
            return False
        return precision in self.precisions and mode in self.modes

    def pairs(self) -> list[tuple[str, str]]:
        return [(p, m) for p in self.precisions for m in self.modes if self.offers(p, m)]

    def element(self, precision: str) -> int:
        """The output element code its harness writes for `precision`."""
        if self.call(precision) in self.requantized:
            return I8
        out = gemmjob.op_types(PRECISION_OPS[self.call(precision)]).out_dtype
        return next(code for code, dtype in ELEMENTS.items() if dtype == out)


PEERS: dict[str, Peer] = {
    "openblas": Peer(
        "openblas",
        "libopenblas-serial-dev:arm64",
        "openblas.c",
        (OPENBLAS_INCLUDE,),
        (f"-L{OPENBLAS_LIB}", "-lopenblas", f"-Wl,-rpath,{OPENBLAS_LIB}"),
        (
            ("libopenblas-serial-dev:arm64", f"{OPENBLAS_INCLUDE}/cblas.h"),
            ("libopenblas-serial-dev:arm64", f"{OPENBLAS_LIB}/libopenblas.so"),
        ),
        ("fp32",),
        (PLAIN,),
    ),
    "blis": Peer(
        "blis",
        "libblis-serial-dev:arm64",
        "blis.c",
        (BLIS_INCLUDE,),
        (f"-L{BLIS_LIB}", "-lblis", f"-Wl,-rpath,{BLIS_LIB}"),
        (
            ("libblis-serial-dev:arm64", f"{BLIS_INCLUDE}/blis.h"),
            ("libblis-serial-dev:arm64", f"{BLIS_LIB}/libblis.so"),
        ),
        ("fp32",),
        (PLAIN,),
    ),
    "xnnpack": Peer(
        "xnnpack",
        "libxnnpack-dev:arm64",
        "xnnpack.c",
        (),
        # libXNNPACK.so needs libcpuinfo and libpthreadpool: -rpath-link lets the cross linker find them there.
        (f"-L{ARM64_LIB}", "-lXNNPACK", f"-Wl,-rpath-link,{ARM64_LIB}"),
        (
            ("libxnnpack-dev:arm64", "/usr/include/xnnpack.h"),
            ("libxnnpack-dev:arm64", f"{ARM64_LIB}/libXNNPACK.so"),
            ("libpthreadpool-dev:arm64", "/usr/include/pthreadpool.h"),
            ("libcpuinfo-dev:arm64", f"{ARM64_LIB}/libcpuinfo.so"),
        ),
        ("fp32", "fp16", "int8", "qs8", *DYNAMIC),
        (PREPACKED,),
        narrow=("fp16",),
        requantized=("int8", "qs8"),
        stands_in=tuple((p, "qs8") for p in DYNAMIC),
        epilogue=("fp32", "fp16"),
    ),
    # The quantized precisions as plans (the quantized ops have no one-call function).
    ISAFORGE: Peer(
        ISAFORGE,
        "",
        "isaforge.c",
        (),
        (),
        (),
        PRECISIONS,
        MODES,
        requantized=("qs8",),
        exact=("qs8",),
        prepacked_only=("qs8", *DYNAMIC),
        epilogue=FLOAT_EPILOGUE,
    ),
}


def peer(library: str) -> Peer:
    if library not in PEERS:
        raise IsaforgeError(f"unknown peer library {library!r}; choose one of: {', '.join(PEERS)}")
    return PEERS[library]


def available(library: str) -> str | None:
    """None when the library's harness can be built here, else one line naming the package that is missing."""
    for package, path in peer(library).requires:
        if not Path(path).is_file():
            return f"{library}: {package} is not installed ({INSTALL_HINT})"
    return None


# -- building -----------------------------------------------------------------------------------------------------
def build_harness(library: str, workdir: Path, build: Build | None = None) -> Path:
    """The library's harness, cross-compiled into `workdir`; libisaforge's links `build`'s libisaforge.a."""
    p = peer(library)
    if (missing := available(library)) is not None:
        raise IsaforgeError(missing)
    if shutil.which(CC) is None:
        raise IsaforgeError(f"{CC} not found; install the Debian package {CC_PACKAGE} (bash ci/install-toolchains.sh)")
    include_dirs, link = list(p.include_dirs), list(p.link)
    name = f"peer-{library}"
    if library == ISAFORGE:
        if build is None:
            raise IsaforgeError("the isaforge harness links a build of libisaforge: pass one (builds.ensure_built)")
        if build.arch_name != ARCH:
            raise IsaforgeError(f"the peer harnesses run on {ARCH}; {build.name} is a build for {build.arch_name}")
        lib = build.directory / LIBRARY
        if not lib.is_file():
            raise IsaforgeError(f"{lib} is missing; build {build.name} first (isaforge build)")
        include_dirs.append(str(build.root / "include"))
        link += [str(lib), "-pthread"]
        name += f"-{build.name}"
    workdir.mkdir(parents=True, exist_ok=True)
    exe = workdir / name
    # -isystem: the libraries' own headers are not ours to hold to -Wextra (blis.h is not clean under it).
    cmd = [CC, "-std=c11", "-O2", "-no-pie", "-Wall", "-Wextra", f"-I{HERE}"]
    cmd += [f"-isystem{d}" for d in include_dirs]
    cmd += [str(HERE / "harness.c"), str(HERE / p.source), "-o", str(exe), *link]
    process.run(cmd, what=f"build of the {library} harness", log=workdir / f"{name}.log")
    return exe


def markers(exe: Path) -> tuple[int, int]:
    """The entry addresses of isf_bench_begin and isf_bench_end in the (non-PIE) harness."""
    text = run_tool([LLVM_NM, "-S", "--defined-only", str(exe)], f"symbols of {exe.name}")
    found = {name: addr for addr, _size, kind, name in parse_nm(text) if kind in "tT"}
    missing = [m for m in (BEGIN, END) if m not in found]
    if missing:
        raise IsaforgeError(f"{exe.name} has no {' or '.join(missing)} in its symbol table (stripped?)")
    return found[BEGIN], found[END]


# -- operands and files -------------------------------------------------------------------------------------------
def operands(library: str, precision: str, shape: Shape, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """A [m][k] and B [k][n] in the precision's wire type (gemmjob.random_operands). Requantized int8 weights stay
    in [-127, 127], as TFLite's int8 scheme requires of weights (XNNPACK's kernels without sdot may sum two products
    of -128·-128 in int16); libisaforge's qs8 gets the same, so its qs8 row computes what XNNPACK's does. A call
    standing in for an int4 precision gets weights in −8…7 (int8's shifted right by 4), the values int4 holds.
    The dynamic precisions' own calls take dynamic_problem's operands instead."""
    call = peer(library).call(precision)
    types = gemmjob.op_types(PRECISION_OPS[call])
    case = gemmjob.Case(shape.m, shape.n, shape.k, shape.k, shape.n, shape.n)
    a, b = gemmjob.random_operands(types, [case], seed)
    if call in peer(library).requantized:
        b = np.maximum(b, -127).astype(b.dtype)
    if precision in INT4_WEIGHTS:
        b = (b >> 4).astype(b.dtype)
    return a[: shape.m * shape.k].reshape(shape.m, shape.k), b[: shape.k * shape.n].reshape(shape.k, shape.n)


def dynamic_problem(precision: str, shape: Shape, seed: int = 1) -> qplans.Problem:
    """A dynamic precision's operands as the quantized section draws them (fp32 A, int8 or int4 weights, per-column
    scales, fp32 bias), with a clamp that bites (qplans.clamped)."""
    return qplans.clamped(qplans.problem(PRECISION_OPS[precision], shape, seed))


def float_epilogue(precision: str, a: np.ndarray, b: np.ndarray, seed: int = 1) -> gemmjob.Epilogue:
    """A float precision's bias (C's type, gemmjob.random_epilogue) and a clamp that bites on A·B + bias
    (qplans.biting_clamp), its bounds in C's type so that every library clamps to the same values (gemm_f16's plan
    and XNNPACK's f16 operator round them to binary16)."""
    types = gemmjob.op_types(PRECISION_OPS[precision])
    bias = gemmjob.random_epilogue(types, b.shape[1], seed, clamp=None).bias
    av, bv = (gemmjob.to_float64(types, x) for x in (a, b))
    lo, hi = qplans.biting_clamp(gemmjob.exact_result(types, av, bv, gemmjob.Epilogue(bias)))
    return gemmjob.Epilogue(bias, (float(types.out_dtype.type(lo)), float(types.out_dtype.type(hi))))


def requantization(k: int, weight_rms: float = INT8_RMS) -> tuple[float, int]:
    """Scale and zero point for requantized int8 output: random int8 products have a standard deviation near
    74² (uniform on [-128, 127]; 74 · weight_rms for other weights), so acc·scale spreads over about ±60 and its
    tails reach the clamp."""
    return float(np.float32(60.0 / (INT8_RMS * weight_rms * math.sqrt(k)))), -3


def quant_params(scale: float, zero_point: int) -> quant.QuantParams:
    """The gemm_qs8 parameters libisaforge's harness gives its plan (isaforge.c): scales 1 and zero point 0 for A
    and W, and C's scale the output scale XNNPACK is given, 1 / scale in fp32, so (a_scale · w_scale) / c_scale is
    the same multiplier."""
    c_scale = np.float32(1.0) / np.float32(scale)
    return quant.QuantParams(np.array([1.0], np.float32), c_scale=float(c_scale), c_zero_point=zero_point)


def write_input(
    path: Path,
    precision: str,
    a: np.ndarray,
    b: np.ndarray,
    scale: float = 1.0,
    zero_point: int = 0,
    epilogue: gemmjob.Epilogue = gemmjob.NO_EPILOGUE,
) -> None:
    """The harness's input file: header, then A [m][k] and B [k][n] in the precision's wire type; for the float
    precisions then the bias [n] in C's type and the clamp's two fp32 bounds (harness.h)."""
    extra = b""
    if precision in FLOAT_EPILOGUE:
        if epilogue.bias is None or epilogue.clamp is None:
            raise ValueError(f"{precision}: the input needs a bias and a clamp (float_epilogue)")
        bias_type = gemmjob.op_types(PRECISION_OPS[precision]).out_dtype.newbyteorder("<")
        extra = np.asarray(epilogue.bias, bias_type).tobytes() + np.asarray(epilogue.clamp, "<f4").tobytes()
    path.write_bytes(_input_bytes(precision, a, b, scale, zero_point) + extra)


def write_dynamic_input(path: Path, precision: str, p: qplans.Problem) -> None:
    """A dynamic precision's input file: header, fp32 A, int8 B (int4 values one per byte), then B's column scales,
    the fp32 bias and the clamp's two bounds (harness.h)."""
    if p.params is None or p.bias is None or p.clamp is None:
        raise ValueError(f"{precision}: the problem needs column scales, a bias and a clamp")
    n = p.w_kn.shape[1]
    scales = np.broadcast_to(np.asarray(p.params.w_scales, "<f4"), (n,))
    extra = scales.tobytes() + np.asarray(p.bias, "<f4").tobytes() + np.asarray(p.clamp, "<f4").tobytes()
    path.write_bytes(_input_bytes(precision, p.a, p.w_kn) + extra)


def _input_bytes(precision: str, a: np.ndarray, b: np.ndarray, scale: float = 1.0, zero_point: int = 0) -> bytes:
    m, k = a.shape
    k_b, n = b.shape
    if k_b != k:
        raise ValueError(f"A is {m}×{k} but B is {k_b}×{n}")
    header = MAGIC + struct.pack("<IIIIfi", VERSION, m, n, k, scale, zero_point)
    if precision in DYNAMIC:
        a_wire, b_wire = np.dtype("<f4"), np.dtype("i1")
    else:
        a_wire = b_wire = gemmjob.op_types(PRECISION_OPS[precision]).in_dtype.newbyteorder("<")
    return header + np.ascontiguousarray(a, a_wire).tobytes() + np.ascontiguousarray(b, b_wire).tobytes()


@dataclass(frozen=True)
class PeerOutput:
    status: int
    element: int
    c: np.ndarray  # [m][n] in ELEMENTS[element]
    guards_intact: bool


def read_output(path: Path, m: int, n: int) -> PeerOutput:
    data = path.read_bytes()
    if len(data) < 8:
        raise IsaforgeError(f"{path} is too short for a harness output ({len(data)} bytes)")
    status, element = struct.unpack_from("<iI", data)
    if element not in ELEMENTS:
        raise IsaforgeError(f"{path}: unknown element code {element}")
    dtype = ELEMENTS[element]
    expected = 8 + m * n * dtype.itemsize + 4
    if len(data) != expected:
        raise IsaforgeError(f"{path} has {len(data)} bytes; {m}×{n} {ELEMENT_NAMES[element]} makes {expected}")
    c = np.frombuffer(data, dtype, m * n, 8).reshape(m, n)
    (intact,) = struct.unpack_from("<I", data, expected - 4)
    return PeerOutput(status, element, c, intact == 1)


# -- the oracle ---------------------------------------------------------------------------------------------------
def requantized_expected(a: np.ndarray, b: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """clamp(round_half_even(A·B·scale) + zero point) to [-128, 127], from the exact int32 accumulator."""
    acc = a.astype(np.int64) @ b.astype(np.int64)
    return np.clip(np.rint(acc * np.float64(np.float32(scale))) + zero_point, -128, 127).astype(np.int64)


def _check_requantized(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, exact: bool, scale: float, zero_point: int, prefix: str
) -> str:
    if exact:
        want = quant.gemm_qs8(a, b, quant_params(scale, zero_point))
        differ = c != want
        if not differ.any():
            return ""
        at = tuple(int(i) for i in np.argwhere(differ)[0])
        return f"{prefix}C{at} = {c[at]}, expected {want[at]} exactly (isaforge.quant.gemm_qs8)"
    expected = requantized_expected(a, b, scale, zero_point)
    got = c.astype(np.int64)
    off = np.abs(got - expected) > 1
    if not off.any():
        return ""
    bad = tuple(int(i) for i in np.argwhere(off)[0])
    return f"{prefix}C{bad} = {got[bad]}, expected {expected[bad]} ± 1 (clamp(round(acc·scale) + zero point))"


def check(
    precision: str,
    a: np.ndarray,
    b: np.ndarray,
    out: PeerOutput,
    *,
    element: int,
    narrow: bool = False,
    exact: bool = False,
    scale: float = 1.0,
    zero_point: int = 0,
    epilogue: gemmjob.Epilogue = gemmjob.NO_EPILOGUE,
    label: str = "",
) -> str:
    """'' when `out` is right, else one line saying what is wrong (guard damage first: it is the worse). `element`
    is the output type the library should have written; `narrow`: it accumulates in binary16; `exact`: requantized
    int8 must be isaforge.quant.gemm_qs8's bytes (libisaforge's gemm_qs8), not within ±1; `epilogue`: the bias and
    clamp the call applied (float C = clamp(A·B + bias))."""
    prefix = f"{label}: " if label else ""
    if bad := _envelope(out, element, prefix):
        return bad
    if element == I8:
        return _check_requantized(a, b, out.c, exact, scale, zero_point, prefix)
    op = PRECISION_OPS[precision]
    narrow_variants = load().ops[op].narrow_accumulation
    variant = narrow_variants[0] if narrow and narrow_variants else REFERENCE
    types = gemmjob.op_types(op)
    return gemmjob.check_matrix(types, variant, a, b, out.c, epilogue, label=label or precision) or ""


def check_dynamic(p: qplans.Problem, out: PeerOutput, label: str = "") -> str:
    """'' when a dynamic precision's fp32 C is isaforge.quant's bytes for `p` (its clamp included), else one line."""
    prefix = f"{label}: " if label else ""
    if bad := _envelope(out, F32, prefix):
        return bad
    return f"{prefix}{bad}" if (bad := qplans.compare(p, out.c.tobytes())) else ""


def _envelope(out: PeerOutput, element: int, prefix: str) -> str:
    """What is wrong before C's values are looked at: guard damage (the worse), the library's error, C's type."""
    if not out.guards_intact:
        return f"{prefix}wrote outside C: the 64 guard bytes before or after it are damaged"
    if out.status != 0:
        return f"{prefix}status {out.status} (the library's error): C not checked"
    if out.element != element:
        return f"{prefix}C came as {ELEMENT_NAMES[out.element]}, expected {ELEMENT_NAMES[element]}"
    return ""


# -- running ------------------------------------------------------------------------------------------------------
def qemu_command(exe: Path, cpu: str, args: Sequence[str] = (), log: Path | None = None) -> list[str]:
    """qemu-aarch64 -cpu CPU [-d in_asm,exec,nochain -D LOG] EXE ARGS; no -L: the host's multiarch libc6:arm64 is
    the guest's."""
    load().cpu_features(ARCH, cpu)  # unknown model: one line naming the valid ones
    require(QEMU)
    if not INTERPRETER.exists():
        raise IsaforgeError(f"{INTERPRETER} is missing: the peer harnesses need libc6:arm64 ({INSTALL_HINT})")
    logging = [*LOG_FLAGS, "-D", str(log)] if log is not None else []
    return [QEMU, "-cpu", cpu, *logging, str(exe), *args]


@dataclass(frozen=True)
class PeerRun:
    library: str
    precision: str
    mode: str
    shape: str
    cpu: str
    status: int  # 0, else the library's error code
    wrong: str  # '' when the result passed the oracle
    log: Path | None  # QEMU's log of the run, when asked for
    detail: str = ""  # what the library chose, as its harness says ("core=neoversen1", "kernel=…")
    element: str = ""
    epilogue: bool = False  # the call applied a bias and a clamp (Peer.applies_epilogue; the dynamic ones always)


def _accumulates_narrow(p: Peer, precision: str, detail: str) -> bool:
    if precision in p.narrow:
        return True
    if p.library != ISAFORGE or not detail.startswith("kernel="):
        return False
    kernel = parse_kernel_name(detail.removeprefix("kernel="), load().ops)
    return kernel.variant in load().ops[kernel.op].narrow_accumulation


def run(
    library: str,
    exe: Path,
    precision: str,
    mode: str,
    shape: Shape,
    cpu: str,
    workdir: Path,
    log: Path | None = None,
    seed: int = 1,
    timeout: float = qemu.DEFAULT_TIMEOUT,
) -> PeerRun:
    """One call of `library` through its harness `exe` under `cpu`, checked by the oracle. A harness that fails
    (not the library: its status is in the result) is a one-line IsaforgeError naming the kept log."""
    p = peer(library)
    if not p.offers(precision, mode):
        offered = ", ".join(f"{pr} {mo}" for pr, mo in p.pairs())
        raise IsaforgeError(f"{library} does not offer {precision} {mode} (it offers: {offered})")
    call = p.call(precision)
    stem = f"{library}-{precision}-{mode}-{shape.label}-{cpu.replace(',', '_').replace('=', '-')}"
    inp, outp = workdir / f"{stem}.in", workdir / f"{stem}.out"
    dynamic = dynamic_problem(call, shape, seed) if call in DYNAMIC else None
    epilogue = gemmjob.NO_EPILOGUE
    if dynamic is not None:
        write_dynamic_input(inp, call, dynamic)
    else:
        a, b = operands(library, precision, shape, seed)
        weight_rms = INT8_RMS / 16 if precision in INT4_WEIGHTS else INT8_RMS
        scale, zero_point = requantization(shape.k, weight_rms) if call in INT8_INPUTS else (1.0, 0)
        if call in FLOAT_EPILOGUE:
            epilogue = float_epilogue(call, a, b, seed)
        write_input(inp, call, a, b, scale, zero_point, epilogue)
    cmd = qemu_command(exe, cpu, [call, mode, str(inp), str(outp)], log)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QEMU_", "ISAFORGE_"))}
    what = f"the {library} harness ({precision} {mode}, {shape.label}) under {cpu}"
    result = process.run(cmd, what=what, env=env, timeout=timeout, log=workdir / f"{stem}.qemu.log")
    words = (result.stdout.strip().splitlines() or [""])[-1].split(maxsplit=1)
    detail = words[1] if len(words) == 2 and words[0] == library else ""
    out = read_output(outp, shape.m, shape.n)
    label = f"{library} {precision} {mode} {shape.label} on {cpu}"
    applied = dynamic is not None or p.applies_epilogue(call, mode)
    if dynamic is not None:
        wrong = check_dynamic(dynamic, out, label)
    else:
        wrong = check(
            call, a, b, out, element=p.element(precision), narrow=_accumulates_narrow(p, call, detail),
            exact=call in p.exact, scale=scale, zero_point=zero_point,
            epilogue=epilogue if applied else gemmjob.NO_EPILOGUE, label=label,
        )  # fmt: skip
    if not wrong:
        for path in (inp, outp):
            path.unlink()
    element_name = ELEMENT_NAMES[out.element]
    return PeerRun(library, precision, mode, shape.label, cpu, out.status, wrong, log, detail, element_name, applied)
