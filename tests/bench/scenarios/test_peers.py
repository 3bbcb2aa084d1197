"""bench.peers: every harness (OpenBLAS, BLIS, XNNPACK from Debian's arm64 packages; libisaforge from its aarch64
clang build) computes awkward shapes right under QEMU in every precision and mode it offers, refuses the others, and
has its window markers; the oracle (pure Python) catches damaged results."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from isaforge import builds, gemmjob, quant
from isaforge.bench.measure import qemu_log
from isaforge.bench.scenarios import peers
from isaforge.bench.scenarios.shapes import Shape
from isaforge.errors import IsaforgeError

SHAPES = (Shape(5, 7, 9), Shape(1, 17, 33))  # edges in every direction; m = 1 is the decoding case
CASES = [(lib, prec, mode) for lib, p in peers.PEERS.items() for prec, mode in p.pairs()]


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Callable[[str], Path]:
    """harness(library) → its executable, built once per module; skips where the library is not installed."""
    workdir = tmp_path_factory.mktemp("peers")
    built: dict[str, Path] = {}

    def get(library: str) -> Path:
        if library not in built:
            if (missing := peers.available(library)) is not None:
                pytest.skip(missing)
            build = None
            if library == peers.ISAFORGE:  # never skipped: this tree builds it
                build = builds.build_for("aarch64-linux-gnu", "clang")
                builds.ensure_built(build)
            built[library] = peers.build_harness(library, workdir, build)
        return built[library]

    return get


@pytest.mark.peers
@pytest.mark.parametrize(("library", "precision", "mode"), CASES, ids=["-".join(c) for c in CASES])
def test_harness_computes_right(harness, tmp_path, library, precision, mode):
    exe = harness(library)
    for shape in SHAPES:
        run = peers.run(library, exe, precision, mode, shape, "max", tmp_path)
        assert (run.status, run.wrong) == (0, ""), run
        assert run.element == peers.ELEMENT_NAMES[peers.peer(library).element(precision)]
        # right against clamp(A·B + bias) where the call takes the epilogue, against A·B where it cannot; a
        # stand-in's call is another precision's (XNNPACK's qd8 and qc4w rows: its requantized qs8 call)
        p = peers.peer(library)
        fused = p.applies_epilogue(p.call(precision), mode) or p.call(precision) in peers.DYNAMIC
        assert run.epilogue == fused, run


@pytest.mark.peers
def test_xnnpack_fp32_on_neoverse_n1_with_its_window_in_the_log(harness, tmp_path):
    """A real core model, logged as the whole-call bench logs it: the window the markers open and close is there."""
    exe = harness("xnnpack")
    log = tmp_path / "qemu.log"
    run = peers.run("xnnpack", exe, "fp32", peers.PREPACKED, SHAPES[0], "neoverse-n1", tmp_path, log=log)
    assert (run.status, run.wrong, run.log) == (0, "", log)
    begin, end = peers.markers(exe)
    with log.open(errors="replace") as fh:
        parsed = qemu_log.parse_log(fh, (begin, end))
    assert parsed.window_opened and parsed.window_closed
    assert parsed.traces > 10  # the measured call's blocks, not just the marker's own


@pytest.mark.peers
def test_openblas_dispatches_by_core_model(harness, tmp_path):
    exe = harness("openblas")
    run = peers.run("openblas", exe, "fp32", peers.PLAIN, SHAPES[0], "neoverse-n1", tmp_path)
    assert (run.status, run.wrong, run.detail) == (0, "", "core=neoversen1")


@pytest.mark.peers
@pytest.mark.parametrize("library", list(peers.PEERS))
def test_markers_exist_in_order(harness, library):
    begin, end = peers.markers(harness(library))
    assert 0 < begin < end


REFUSED = [("openblas", "fp16", "plain"), ("blis", "fp32", "prepacked"), ("xnnpack", "fp32", "plain"),
           ("xnnpack", "bf16", "prepacked"), ("isaforge", "qs8", "plain"), ("openblas", "qs8", "plain")]  # fmt: skip


@pytest.mark.peers
@pytest.mark.parametrize(("library", "precision", "mode"), REFUSED)
def test_a_pair_not_offered_is_refused_in_one_line(harness, tmp_path, library, precision, mode):
    exe = harness(library)
    cmd = peers.qemu_command(exe, "max", [precision, mode, str(tmp_path / "in"), str(tmp_path / "out")])
    proc = peers.process.run(cmd, check=False)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{library} does not offer {precision} {mode}" in lines[0], proc.stderr
    assert not (tmp_path / "out").exists()
    with pytest.raises(IsaforgeError, match=f"{library} does not offer {precision} {mode}"):
        peers.run(library, exe, precision, mode, SHAPES[0], "max", tmp_path)


@pytest.mark.peers
def test_the_harness_sees_a_damaged_guard_byte(harness, tmp_path, monkeypatch):
    """The harness's own guard check, end to end: told to, it flips the byte right after C once the call is done."""
    monkeypatch.setenv("ISF_BENCH_SELFTEST", "guard")
    run = peers.run(peers.ISAFORGE, harness(peers.ISAFORGE), "fp32", peers.PLAIN, SHAPES[0], "max", tmp_path)
    assert "guard bytes" in run.wrong


@pytest.mark.peers
def test_a_qs8_output_one_step_off_is_wrong_for_libisaforge(harness, tmp_path, monkeypatch):
    """libisaforge's gemm_qs8 is held to isaforge.quant byte for byte: the harness, told to, flips the lowest bit
    of C's first byte (one step, which XNNPACK's ±1 would allow), and the run is wrong; untouched, it is right on a
    core whose kernel differs from max's."""
    exe = harness(peers.ISAFORGE)
    right = peers.run(peers.ISAFORGE, exe, "qs8", peers.PREPACKED, SHAPES[0], "neoverse-n1", tmp_path)
    assert (right.status, right.wrong, right.element) == (0, "", "int8 (requantized)")
    assert right.detail.startswith("kernel=gemm_s8_") and right.detail.endswith("_dotprod"), right.detail
    monkeypatch.setenv("ISF_BENCH_SELFTEST", "c")
    run = peers.run(peers.ISAFORGE, exe, "qs8", peers.PREPACKED, SHAPES[0], "neoverse-n1", tmp_path)
    assert run.status == 0 and "C(0, 0) = " in run.wrong and "exactly (isaforge.quant.gemm_qs8)" in run.wrong, run


# -- the oracle, pure Python --------------------------------------------------------------------------------------
def output(c: np.ndarray, element: int, status: int = 0, intact: bool = True) -> peers.PeerOutput:
    return peers.PeerOutput(status, element, c, intact)


def test_a_damaged_float_result_is_wrong():
    a, b = peers.operands("openblas", "fp32", SHAPES[0])
    right = (a.astype(np.float64) @ b).astype(np.float32)
    assert peers.check("fp32", a, b, output(right, peers.F32), element=peers.F32) == ""
    bad = right.copy()
    bad[3, 4] += np.float32(1e-3)
    wrong = peers.check("fp32", a, b, output(bad, peers.F32), element=peers.F32, label="damaged")
    assert wrong.startswith("damaged: C(") and "error 0.001 > bound" in wrong, wrong
    assert "guard bytes" in peers.check("fp32", a, b, output(right, peers.F32, intact=False), element=peers.F32)
    assert "status 6" in peers.check("fp32", a, b, output(right, peers.F32, status=6), element=peers.F32)
    assert "expected f32" in peers.check("fp32", a, b, output(right.astype(np.float16), peers.F16), element=peers.F32)


def test_binary16_accumulation_gets_the_narrow_bound_only_when_it_is_narrow():
    a, b = peers.operands("xnnpack", "fp16", Shape(4, 8, 64))
    exact = a.astype(np.float64) @ b.astype(np.float64)
    # an error far past binary16 rounding of the output (u = 2^-11) yet within γ(65) at u = 2^-11
    off = exact + 8 * 2.0**-11 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    c = off.astype(np.float16)
    assert peers.check("fp16", a, b, output(c, peers.F16), element=peers.F16, narrow=True) == ""
    assert "bound" in peers.check("fp16", a, b, output(c, peers.F16), element=peers.F16, narrow=False)


def test_a_damaged_int32_result_is_wrong():
    a, b = peers.operands(peers.ISAFORGE, "int8", SHAPES[1])
    right = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
    assert peers.check("int8", a, b, output(right, peers.I32), element=peers.I32) == ""
    bad = right.copy()
    bad[0, 16] += 1
    wrong = peers.check("int8", a, b, output(bad, peers.I32), element=peers.I32)
    assert wrong.endswith(f"= {bad[0, 16]}, expected {right[0, 16]}"), wrong


def test_requantized_int8_is_held_to_one_step():
    shape = Shape(6, 40, 33)
    a, b = peers.operands("xnnpack", "int8", shape)
    assert b.min() >= -127 and a.min() == -128  # weights in TFLite's range, activations in the full one
    scale, zp = peers.requantization(shape.k)
    right = peers.requantized_expected(a, b, scale, zp)
    assert (right == 127).any() or (right == -128).any(), "the scale should reach the clamp somewhere"
    assert np.ptp(right) > 60, "the scale should spread the outputs"
    kw = {"element": peers.I8, "scale": scale, "zero_point": zp}
    c = right.astype(np.int8)
    assert peers.check("int8", a, b, output(c, peers.I8), **kw) == ""
    inner = np.argwhere((right > -127) & (right < 126))[0]
    nudged = c.copy()
    nudged[tuple(inner)] += 1
    assert peers.check("int8", a, b, output(nudged, peers.I8), **kw) == ""
    nudged[tuple(inner)] += 1
    assert f"C{tuple(int(i) for i in inner)}" in peers.check("int8", a, b, output(nudged, peers.I8), **kw)


def test_libisaforge_qs8_is_held_to_the_byte():
    shape = Shape(6, 40, 33)
    a, b = peers.operands(peers.ISAFORGE, "qs8", shape)
    assert b.min() >= -127  # the same weights XNNPACK's qs8 gets
    scale, zp = peers.requantization(shape.k)
    p = peers.quant_params(scale, zp)
    assert p.c_scale == np.float32(1) / np.float32(scale) and (p.a_scale, p.a_zero_point, p.c_zero_point) == (1, 0, zp)
    right = quant.gemm_qs8(a, b, p)
    assert np.abs(right.astype(np.int64) - peers.requantized_expected(a, b, scale, zp)).max() <= 1
    kw = {"element": peers.I8, "scale": scale, "zero_point": zp}
    assert peers.check("qs8", a, b, output(right, peers.I8), exact=True, **kw) == ""
    inner = tuple(int(i) for i in np.argwhere((right > -127) & (right < 126))[0])
    nudged = right.copy()
    nudged[inner] += 1
    assert peers.check("qs8", a, b, output(nudged, peers.I8), **kw) == ""  # XNNPACK's ±1 lets it through
    wrong = peers.check("qs8", a, b, output(nudged, peers.I8), exact=True, **kw)
    assert f"C{inner} = {nudged[inner]}, expected {right[inner]} exactly" in wrong, wrong


def test_qs8_is_requantized_for_every_library_that_offers_it():
    for library, p in peers.PEERS.items():
        if any(prec == "qs8" for prec, _mode in p.pairs()):
            assert p.element("qs8") == peers.I8, library
    assert peers.PEERS[peers.ISAFORGE].element("int8") == peers.I32  # int8 stays libisaforge's int32 gemm_s8
    assert peers.PEERS[peers.ISAFORGE].exact == ("qs8",) and not peers.PEERS["xnnpack"].exact
    assert (peers.ISAFORGE, "qs8", peers.PLAIN) not in CASES and ("xnnpack", "qs8", peers.PREPACKED) in CASES


def test_input_and_output_files_round_trip(tmp_path):
    a, b = peers.operands(peers.ISAFORGE, "int8", SHAPES[0])
    path = tmp_path / "in"
    peers.write_input(path, "int8", a, b, 0.5, 7)
    data = path.read_bytes()
    assert data[:4] == b"ISFP" and len(data) == 28 + 5 * 9 + 9 * 7
    assert np.array_equal(np.frombuffer(data, "i1", 45, 28), a.ravel())
    out = tmp_path / "out"
    c = np.arange(35, dtype="<f4").reshape(5, 7)
    out.write_bytes(np.array([0, peers.F32], "<i4").tobytes() + c.tobytes() + np.array([1], "<u4").tobytes())
    got = peers.read_output(out, 5, 7)
    assert (got.status, got.element, got.guards_intact) == (0, peers.F32, True) and np.array_equal(got.c, c)
    with pytest.raises(IsaforgeError, match="bytes"):
        peers.read_output(out, 5, 8)


def test_missing_pieces_are_named(monkeypatch, tmp_path):
    missing = dataclasses.replace(peers.PEERS["blis"], requires=(("libblis-serial-dev:arm64", str(tmp_path / "x")),))
    monkeypatch.setitem(peers.PEERS, "blis", missing)
    line = peers.available("blis")
    assert line == "blis: libblis-serial-dev:arm64 is not installed (bash ci/install-toolchains.sh --peers)"
    with pytest.raises(IsaforgeError, match="libblis-serial-dev:arm64 is not installed"):
        peers.build_harness("blis", tmp_path)
    assert peers.available(peers.ISAFORGE) is None
    monkeypatch.setattr(peers, "INTERPRETER", tmp_path / "ld-linux-aarch64.so.1")
    with pytest.raises(IsaforgeError, match="libc6:arm64"):
        peers.qemu_command(tmp_path / "exe", "max")
    with pytest.raises(IsaforgeError, match="unknown peer library"):
        peers.peer("mkl")


def test_qemu_command_has_no_sysroot_and_logs_on_request(monkeypatch, tmp_path):
    # The command's form, whether or not libc6:arm64 (make bench installs it) is on this machine.
    interpreter = tmp_path / "ld-linux-aarch64.so.1"
    interpreter.touch()
    monkeypatch.setattr(peers, "INTERPRETER", interpreter)
    exe = tmp_path / "exe"
    assert peers.qemu_command(exe, "neoverse-n1", ["fp32"]) == ["qemu-aarch64", "-cpu", "neoverse-n1", str(exe), "fp32"]
    logged = peers.qemu_command(exe, "max", [], tmp_path / "log")
    assert logged == ["qemu-aarch64", "-cpu", "max", "-d", "in_asm,exec,nochain", "-D", str(tmp_path / "log"), str(exe)]


# -- the dynamically quantized precisions (qd8, qc4w) ------------------------------------------------------------
@pytest.mark.parametrize("precision", peers.DYNAMIC)
def test_a_dynamic_result_is_held_to_isaforge_quant_with_a_clamp_that_bites(precision):
    p = peers.dynamic_problem(precision, Shape(6, 40, 33))
    assert p.op == peers.PRECISION_OPS[precision] and p.a.dtype == np.float32 and p.clamp is not None
    lo, hi = p.w_kn.min(), p.w_kn.max()
    assert (lo, hi) == ((-8, 7) if precision == "qc4w" else (-127, 127))
    right = quant.REFERENCE[p.op](p.a, p.w_kn, p.params, p.bias, p.clamp)
    assert (right == np.float32(p.clamp[0])).sum() >= 6 and (right == np.float32(p.clamp[1])).sum() >= 6
    assert peers.check_dynamic(p, output(right, peers.F32)) == ""
    inner = tuple(int(i) for i in np.argwhere((right > p.clamp[0]) & (right < p.clamp[1]))[0])
    one_ulp = right.copy()
    one_ulp[inner] = np.nextafter(right[inner], np.float32(np.inf))
    wrong = peers.check_dynamic(p, output(one_ulp, peers.F32), label="nudged")
    assert wrong.startswith("nudged: 1 elements differ from isaforge.quant's") and f"C[{inner[0]}][{inner[1]}]" in wrong
    unclamped = quant.REFERENCE[p.op](p.a, p.w_kn, p.params, p.bias, None)
    assert "differ" in peers.check_dynamic(p, output(unclamped, peers.F32))
    assert "guard bytes" in peers.check_dynamic(p, output(right, peers.F32, intact=False))
    assert "expected f32" in peers.check_dynamic(p, output(right.astype(np.int32), peers.I32))


def test_xnnpack_stands_in_for_the_dynamic_precisions_with_its_qs8_call():
    """XNNPACK (2022) has no dynamically quantized or int4 operator: its rows are its qs8 call, said to be a stand-in,
    on int8 A and, for qc4w, the values int4 holds; libisaforge makes its own dynamic calls, as plans only."""
    xnn, ours = peers.PEERS["xnnpack"], peers.PEERS[peers.ISAFORGE]
    assert [xnn.call(p) for p in peers.DYNAMIC] == ["qs8", "qs8"] and xnn.call("fp32") == "fp32"
    assert [xnn.element(p) for p in peers.DYNAMIC] == [peers.I8, peers.I8]
    assert [ours.call(p) for p in peers.DYNAMIC] == list(peers.DYNAMIC)
    assert [ours.element(p) for p in peers.DYNAMIC] == [peers.F32, peers.F32]
    assert [(prec, mode) for prec, mode in ours.pairs() if prec in peers.DYNAMIC] == [
        ("qd8", peers.PREPACKED), ("qc4w", peers.PREPACKED)]  # fmt: skip
    a, b = peers.operands("xnnpack", "qc4w", Shape(3, 64, 200))
    assert a.dtype == b.dtype == np.int8 and (b.min(), b.max()) == (-8, 7) and a.min() < -8
    a8, b8 = peers.operands("xnnpack", "qd8", Shape(3, 64, 200))
    assert np.array_equal(a, a8) and b8.min() == -127
    # int4 weights get a scale 16× larger, so their requantized C still spreads over int8
    assert peers.requantization(200, peers.INT8_RMS / 16)[0] == pytest.approx(16 * peers.requantization(200)[0])


def test_a_dynamic_input_file_carries_scales_bias_and_clamp(tmp_path):
    shape = Shape(5, 7, 9)
    p = peers.dynamic_problem("qc4w", shape)
    path = tmp_path / "in"
    peers.write_dynamic_input(path, "qc4w", p)
    data = path.read_bytes()
    at = 28 + 4 * 5 * 9
    assert len(data) == at + 9 * 7 + 4 * (7 + 7 + 2)
    assert np.array_equal(np.frombuffer(data, "<f4", 45, 28).reshape(5, 9), p.a)
    assert np.array_equal(np.frombuffer(data, "i1", 63, at).reshape(9, 7), p.w_kn)
    extra = np.frombuffer(data, "<f4", 16, at + 63)
    assert np.array_equal(extra[:7], p.params.w_scales) and np.array_equal(extra[7:14], p.bias)
    assert tuple(extra[14:]) == p.clamp
    with pytest.raises(ValueError, match="a clamp"):
        peers.write_dynamic_input(path, "qc4w", dataclasses.replace(p, clamp=None))


@pytest.mark.peers
@pytest.mark.parametrize("precision", peers.DYNAMIC)
def test_a_dynamic_output_one_bit_off_is_wrong_for_libisaforge(harness, tmp_path, monkeypatch, precision):
    """The dynamic plans are held to isaforge.quant byte for byte: right on a real core (its kernel: dotprod), and
    wrong when the harness flips the lowest bit of C's first byte."""
    exe = harness(peers.ISAFORGE)
    right = peers.run(peers.ISAFORGE, exe, precision, peers.PREPACKED, SHAPES[0], "neoverse-n1", tmp_path)
    assert (right.status, right.wrong, right.element) == (0, "", "f32")
    assert right.detail.endswith("_dotprod"), right.detail
    monkeypatch.setenv("ISF_BENCH_SELFTEST", "c")
    run = peers.run(peers.ISAFORGE, exe, precision, peers.PREPACKED, SHAPES[0], "neoverse-n1", tmp_path)
    assert run.status == 0 and "differ from isaforge.quant's, first C[0][0]" in run.wrong, run


# -- the float precisions' bias and clamp ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class FloatCase:
    a: np.ndarray
    b: np.ndarray
    epilogue: gemmjob.Epilogue
    types: gemmjob.OpTypes

    def exact(self, epilogue: gemmjob.Epilogue) -> np.ndarray:
        """C in float64 for `epilogue`, as C's type holds it."""
        av, bv = (gemmjob.to_float64(self.types, x) for x in (self.a, self.b))
        return gemmjob.exact_result(self.types, av, bv, epilogue)


def float_case(precision: str, shape: Shape) -> FloatCase:
    a, b = peers.operands(peers.ISAFORGE, precision, shape)
    return FloatCase(a, b, peers.float_epilogue(precision, a, b), gemmjob.op_types(peers.PRECISION_OPS[precision]))


@pytest.mark.parametrize("precision", peers.FLOAT_EPILOGUE)
def test_a_float_epilogue_has_a_bias_of_cs_type_and_a_clamp_that_bites(precision):
    shape = Shape(8, 40, 64)
    case = float_case(precision, shape)
    ep, types = case.epilogue, case.types
    assert ep.bias is not None and ep.clamp is not None and ep.bias.dtype == types.out_dtype
    assert ep.bias.shape == (40,) and np.unique(ep.bias).size > 30
    lo, hi = ep.clamp
    assert all(float(types.out_dtype.type(x)) == x for x in (lo, hi))  # the same bounds for every library
    c = case.exact(ep)
    total = shape.m * shape.n
    for bound in (lo, hi):  # about 5 % of C on each bound
        assert 0.02 * total <= (c == bound).sum() <= 0.08 * total, (bound, (c == bound).sum())


@pytest.mark.parametrize("precision", peers.FLOAT_EPILOGUE)
def test_a_float_result_is_held_to_the_epilogue_its_call_applied(precision):
    case = float_case(precision, Shape(6, 24, 48))
    a, b, ep, out_type = case.a, case.b, case.epilogue, case.types.out_dtype
    element = peers.PEERS[peers.ISAFORGE].element(precision)
    fused = output(case.exact(ep).astype(out_type), element)
    plain = output(case.exact(gemmjob.NO_EPILOGUE).astype(out_type), element)
    assert peers.check(precision, a, b, fused, element=element, epilogue=ep) == ""
    assert peers.check(precision, a, b, plain, element=element) == ""
    assert "bound" in peers.check(precision, a, b, plain, element=element, epilogue=ep)  # skipped the epilogue
    assert "bound" in peers.check(precision, a, b, fused, element=element)  # applied one it was not asked for
    unclamped = output(case.exact(gemmjob.Epilogue(ep.bias)).astype(out_type), element)
    assert "bound" in peers.check(precision, a, b, unclamped, element=element, epilogue=ep)


def test_prepacked_calls_take_the_epilogue_and_per_call_apis_cannot():
    takes = {(lib, prec, mode) for lib, prec, mode in CASES if peers.peer(lib).applies_epilogue(prec, mode)}
    assert takes == {
        (peers.ISAFORGE, "fp32", peers.PREPACKED), (peers.ISAFORGE, "fp16", peers.PREPACKED),
        (peers.ISAFORGE, "bf16", peers.PREPACKED), ("xnnpack", "fp32", peers.PREPACKED),
        ("xnnpack", "fp16", peers.PREPACKED),
    }  # fmt: skip


def test_a_float_input_file_carries_the_bias_in_cs_type_and_the_clamp(tmp_path):
    a, b = peers.operands(peers.ISAFORGE, "fp16", SHAPES[0])
    ep = peers.float_epilogue("fp16", a, b)
    path = tmp_path / "in"
    peers.write_input(path, "fp16", a, b, epilogue=ep)
    data = path.read_bytes()
    at = 28 + 2 * (5 * 9 + 9 * 7)
    assert len(data) == at + 2 * 7 + 4 * 2
    assert np.array_equal(np.frombuffer(data, "<f2", 7, at), ep.bias)
    assert tuple(np.frombuffer(data, "<f4", 2, at + 14)) == ep.clamp
    with pytest.raises(ValueError, match="a bias and a clamp"):
        peers.write_input(path, "fp32", *peers.operands("openblas", "fp32", SHAPES[0]))
