"""bench's plan runs: the log window that counts isf_gemm_run alone, useful MACs of 1-row matrix-instruction
kernels, the bulk kernel whose hot loop is the ideal, and the Plans section's rows, goals, markdown and JSON on
fabricated counts with known answers; then the command line's refusals and one quick real plan run under QEMU."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from isaforge.bench import plans, qemu_count, report
from isaforge.bench.mca import macs
from isaforge.bench.mca.objcode import Insn
from isaforge.bench.qemu_count import PLAIN, PLAN, PLAN_EPILOGUE, CodeRange, RunCount, Shape, StaticRunner
from isaforge.catalogue import load, parse_kernel_name
from isaforge.cli import main
from isaforge.errors import IsaforgeError
from tests.bench.test_qemu_count import SHAPE, log, runner

# A plan's create (0x1000), a helper both call (0x1800), the run (0x2000), destroy (0x3000), then a second run.
PLAN_LOG = """\
IN: isf_gemm_create
0x00001000:  d503201f  nop
0x00001004:  94000200  bl       #0x1800
Trace 0: 0x7f00 [00000000/0000000000001000/00000000/00000000] isf_gemm_create
IN: helper
0x00001800:  d503201f  nop
0x00001804:  d65f03c0  ret
Trace 0: 0x7f10 [00000000/0000000000001800/00000000/00000000] helper
IN: isf_gemm_run
0x00002000:  d503201f  nop
0x00002004:  94000200  bl       #0x1800
Trace 0: 0x7f20 [00000000/0000000000002000/00000000/00000000] isf_gemm_run
Trace 0: 0x7f10 [00000000/0000000000001800/00000000/00000000] helper
IN: isf_gemm_destroy
0x00003000:  d65f03c0  ret
Trace 0: 0x7f30 [00000000/0000000000003000/00000000/00000000] isf_gemm_destroy
Trace 0: 0x7f20 [00000000/0000000000002000/00000000/00000000] isf_gemm_run
"""


def test_the_window_counts_the_run_alone():
    got = qemu_count.parse_log(PLAN_LOG.splitlines(), window=(0x2000, 0x3000))
    assert dict(got.executions) == {0x2000: 1, 0x2004: 1, 0x1800: 1, 0x1804: 1}
    assert got.traces == 2 and got.window_opened and got.window_closed
    whole = qemu_count.parse_log(PLAN_LOG.splitlines())
    assert whole.traces == 6 and whole.executions[0x2000] == 2 and whole.executions[0x1800] == 2


def test_a_window_that_never_opens_counts_nothing():
    got = qemu_count.parse_log(PLAN_LOG.splitlines(), window=(0x4000, 0x3000))
    assert got.traces == 0 and not got.window_opened and not got.executions


def test_a_plan_tally_refuses_a_log_without_its_window():
    kernel = parse_kernel_name("gemm_f32_8x12_neon", load().ops)
    with pytest.raises(IsaforgeError, match="isf_gemm_run … isf_gemm_destroy window"):
        runner().tally(kernel, SHAPE, log(), PLAN)
    assert runner().tally(kernel, SHAPE, log(), PLAN, status=qemu_count.ISF_ERR_UNSUPPORTED).instructions == 0


def test_window_addresses_come_from_the_symbol_table():
    r = runner()
    with pytest.raises(IsaforgeError, match="no isf_gemm_run, isf_gemm_destroy"):
        r.window(PLAN)
    r.code = CodeRange(0x1000, 0x4000, ((0x2000, 0x2800, "isf_gemm_run"), (0x3000, 0x3100, "isf_gemm_destroy")))
    assert r.window(PLAN) == (0x2000, 0x3000) and r.window(PLAIN) is None


SMMLA = Insn(0x10, "smmla", ("v16.4s", "v0.16b", "v4.16b"))
BFMMLA_SVE = Insn(0x10, "bfmmla", ("z16.s", "z0.h", "z4.h"))
FMLA = Insn(0x10, "fmla", ("v16.4s", "v0.4s", "v4.s[0]"))


def kernel(name: str):
    return parse_kernel_name(name, load().ops)


def test_one_row_matrix_kernels_count_half_the_nominal_macs():
    assert qemu_count.useful_macs(kernel("gemm_s8_8x8x8_i8mm"), SMMLA, 128) == 32
    assert qemu_count.useful_macs(kernel("gemm_s8_1x8x8_i8mm"), SMMLA, 128) == 16
    assert qemu_count.useful_macs(kernel("gemm_bf16_1x4x4_svebf16"), BFMMLA_SVE, 256) == 16  # 32 nominal at 256b
    assert qemu_count.useful_macs(kernel("gemm_f32_1x12_neon"), FMLA, 128) == 4  # fmla lanes are all real
    assert qemu_count.useful_macs(None, SMMLA, 128) == 32


def test_padded_macs_do_not_round_m_up_when_a_row_kernel_takes_the_rest():
    full = kernel("gemm_f32_8x12_neon")
    assert qemu_count.padded_macs(full, Shape(49, 256, 2304), 128) == 56 * 264 * 2304
    assert qemu_count.padded_macs(full, Shape(49, 256, 2304), 128, row_kernel=True) == 49 * 264 * 2304
    assert qemu_count.padded_macs(full, Shape(1, 1024, 1024), 128, row_kernel=True) == 1 * 1032 * 1024


def matrix_runner() -> StaticRunner:
    """A runner whose build has the i8mm full kernel and its row kernel; the row kernel's loop: 4 smmla, 2 loads,
    a subs and the branch back (8 instructions for 4 × 16 useful MACs)."""
    r = runner()
    loop = [SMMLA, SMMLA, SMMLA, SMMLA, Insn(0x20, "ldr", ("q0", "[x1]")), Insn(0x24, "ldr", ("q4", "[x2]")),
            Insn(0x28, "subs", ("x0", "x0", "#1")), Insn(0x2C, "b.ne", ("0x10",), target=0x10)]  # fmt: skip
    loop = [Insn(0x10 + 4 * n, i.mnemonic, i.operands, target=i.target) for n, i in enumerate(loop)]
    r.functions = {"isf_ukernel_gemm_s8_8x8x8_i8mm": [], "isf_ukernel_gemm_s8_1x8x8_i8mm": loop}
    return r


def test_the_bulk_kernel_is_the_row_kernel_below_mr_and_the_full_one_above():
    r = matrix_runner()
    full, row = kernel("gemm_s8_8x8x8_i8mm"), kernel("gemm_s8_1x8x8_i8mm")
    assert r.row_kernel(full) == row
    assert r.loop_kernel(full, Shape(1, 1024, 1024)) == row
    assert r.loop_kernel(full, Shape(49, 256, 2304)) == full
    assert r.hot_loop_ideal(row) == pytest.approx(8 / 64)  # not 8 / 128: the zero row's MACs do not count
    assert runner().row_kernel(kernel("gemm_f32_8x12_neon")) is None  # no row kernel built: the full one


def test_a_row_kernel_run_counts_useful_macs_and_m_is_not_padded():
    """m = 1 through the row kernel: 8 k blocks, one loop iteration each (4 smmla = 64 useful MACs = 1·8·8)."""
    r = matrix_runner()
    body = r.functions["isf_ukernel_gemm_s8_1x8x8_i8mm"]
    r.insns = {i.addr: i for i in body}
    r.code = CodeRange(0x10, 0x30, ((0x10, 0x30, "isf_ukernel_gemm_s8_1x8x8_i8mm"),))
    ran = qemu_count.ExecLog(executions=Counter({i.addr: 8 for i in body}), window_opened=True, window_closed=True)
    rc = r.tally(kernel("gemm_s8_8x8x8_i8mm"), Shape(1, 8, 64), ran, PLAN)
    assert rc.macs_by_kernel == {"gemm_s8_1x8x8_i8mm": 512} and rc.macs_executed == 512
    assert rc.padded_macs == 512 and rc.mac_check == 1.0  # not 8 rows: the row kernel took the one row
    assert rc.loop_kernel == "gemm_s8_1x8x8_i8mm" and rc.over_hot_loop == pytest.approx(1.0)


def test_the_hot_loop_is_an_innermost_loop():
    """A jump back from out-of-line code to before the loop closes a range around it with more MACs: not a loop
    the kernel spends its time in."""
    fmla = [Insn(a, "fmla", ("v16.4s", "v0.4s", "v4.s[0]")) for a in (0x10, 0x14, 0x20, 0x24, 0x28)]
    code = [Insn(0x8, "cbz", ("x0", "0x30"), target=0x30), *fmla[:2], Insn(0x18, "b.ne", ("0x10",), target=0x10),
            Insn(0x1C, "ret", ()), *fmla[2:], Insn(0x2C, "b", ("0x8",), target=0x8)]  # fmt: skip
    code.sort(key=lambda i: i.addr)
    loop = macs.hot_loop(code, "fmla v.4s[i]")
    assert loop is not None and (loop.start, loop.end) == (0x10, 0x18)


def test_only_the_kernel_the_variant_runs_a_gemm_with_is_benchmarked():
    names = ["gemm_s8_1x8x8_i8mm", "gemm_s8_8x8x8_i8mm", "gemm_s8_4x4x16_neon", "gemm_s8_1x4x16_neon"]
    chosen = qemu_count.select([kernel(n) for n in names], None, None)
    assert [k.name for k in chosen] == ["gemm_s8_8x8x8_i8mm", "gemm_s8_4x4x16_neon"]


# -- the Plans section on fabricated counts -----------------------------------------------------------------------
def run(kernel_name: str, shape: str, mode: str, instructions: int, **kw) -> RunCount:
    k = kernel(kernel_name)
    m, n, depth = map(int, shape.split("x"))
    rc = RunCount(k.op, k.variant, k.name, shape, 128, m * n * depth, m * n * depth, compiler="clang", mode=mode,
                  instructions=instructions, macs_executed=m * n * depth, **kw)  # fmt: skip
    return rc


ROW = "gemm_f32_1x12_neon"


def fabricated() -> list[RunCount]:
    f32, s8 = "gemm_f32_8x12_neon", "gemm_s8_8x8x8_i8mm"
    return [
        run(f32, "256x256x64", PLAN, 1_000_000),
        run(f32, "256x256x64", PLAN_EPILOGUE, 1_015_000),  # +1.5 %: met
        run(s8, "256x256x64", PLAN, 200_000),
        run(s8, "256x256x64", PLAN_EPILOGUE, 210_000),  # +5 %: not met
        # 0.3125 per MAC in the hot loop; 1.2× and 1.05×: met
        run(f32, "1x1024x1024", PLAN, int(1.2 * 0.3125 * 2**20), loop_kernel="gemm_f32_1x12_neon",
            hot_loop_instructions_per_mac=0.3125, macs_by_kernel={"gemm_f32_1x12_neon": 2**20}),
        run(f32, "49x256x2304", PLAN, int(1.05 * 0.3125 * 49 * 256 * 2304), loop_kernel=f32,
            hot_loop_instructions_per_mac=0.3125, macs_by_kernel={f32: 48 * 256 * 2304, ROW: 256 * 2304}),
        # a row kernel the driver does not use yet: the plan of s8 at m = 1 runs 8× the MACs' worth
        run(s8, "1x1024x1024", PLAN, int(8 * 0.0371 * 2**20), loop_kernel=s8, hot_loop_instructions_per_mac=0.0371,
            macs_by_kernel={s8: 2**20}),
        run(s8, "49x256x2304", PLAN, 0, status=qemu_count.ISF_ERR_UNSUPPORTED),
        run(f32, "1x1024x1024", PLAIN, int(3.8234 * 2**20)),
    ]  # fmt: skip


def result(**kw) -> report.BenchResult:
    r = report.BenchResult("isaforge bench", ["clang"], [], [], 128, ran_mca=False, ran_plans=True,
                           plan_shapes=list(plans.SMALL_M_GOALS), **kw)  # fmt: skip
    r.qemu = fabricated()
    return r


def test_epilogue_overhead_rows_and_goal():
    rows = plans.epilogue_rows(fabricated(), ["clang"], "256x256x64")
    assert [(r.kernel, r.epilogue, round(r.overhead, 4), r.met) for r in rows] == [
        ("gemm_f32_8x12_neon", "bias + clamp", 0.015, True),
        ("gemm_s8_8x8x8_i8mm", "bias", 0.05, False),
    ]
    title, met, detail = plans.epilogue_goal(rows, "256x256x64")
    assert met is False and "≤ 2%" in title and detail.startswith("1 of 2 pass; worst gemm_s8_8x8x8_i8mm +5.00%")
    # fp32 C: 256·256 outputs, 4 per vector, FMAX + FMIN each: 32,768 of the plain plan's 1,000,000 instructions
    assert rows[0].floor == pytest.approx(0.032768) and rows[1].floor == 0.0
    assert "out of reach at this shape for gemm_f32_8x12_neon" in detail


def test_a_wrong_c_fails_the_goal_whatever_the_count():
    runs = fabricated()
    runs[1].wrong = "Case(...): C(0, 0) = 1.0, expected 3.0"  # a kernel that ignores the epilogue: cheap and wrong
    rows = plans.epilogue_rows(runs, ["clang"], "256x256x64")
    assert rows[0].overhead == pytest.approx(0.015) and rows[0].met is False
    _title, met, detail = plans.epilogue_goal(rows, "256x256x64")
    assert met is False and "wrong C" in detail and "gemm_f32_8x12_neon" in detail
    res = result()
    res.qemu = runs
    text = report.markdown(res, report.evaluate_goals(res))
    assert "**wrong C**: Case(...)" in text and "C was **wrong** (isaforge.gemmjob's oracle) in 1 of 8" in text


def test_small_m_rows_and_goals():
    rows = plans.small_m_rows(fabricated(), ["clang"], list(plans.SMALL_M_GOALS))
    got = {(r.kernel, r.shape): r for r in rows}
    assert got["gemm_f32_8x12_neon", "1x1024x1024"].ratio == pytest.approx(1.2, abs=1e-5)
    assert got["gemm_f32_8x12_neon", "1x1024x1024"].bulk_kernel == "gemm_f32_1x12_neon"
    assert got["gemm_s8_8x8x8_i8mm", "1x1024x1024"].met is False
    assert got["gemm_s8_8x8x8_i8mm", "49x256x2304"].why_not == "not supported by this build (status 3)"
    (m1, m1_met, m1_detail), (m49, m49_met, m49_detail) = plans.small_m_goals(rows)
    assert "1x1024x1024" in m1 and "1.30×" in m1 and m1_met is False
    assert m1_detail.startswith("1 of 2 pass; worst gemm_s8_8x8x8_i8mm 8.000×")
    assert "1.10×" in m49 and m49_met is True
    assert m49_detail.startswith("1 of 1 pass")
    assert "1 not counted (not supported by this build (status 3))" in m49_detail


def test_before_after_rows_read_an_earlier_runs_json(tmp_path: Path):
    earlier = tmp_path / "before.json"
    earlier.write_text(json.dumps({"command": "isaforge bench --shapes 1x1024x1024", "qemu": [
        {"compiler": "clang", "kernel": "gemm_f32_8x12_neon", "shape": "1x1024x1024", "instructions": 4_009_083,
         "useful_macs": 2**20}]}))  # fmt: skip
    before = plans.load_before(earlier)
    rows = plans.before_after_rows(fabricated(), ["clang"], ["1x1024x1024"], before)
    f32 = next(r for r in rows if r.kernel == "gemm_f32_8x12_neon")
    assert f32.before == pytest.approx(3.8234, abs=1e-4) and f32.plain == pytest.approx(3.8234, abs=1e-4)
    assert f32.plan == pytest.approx(0.375, abs=1e-5) and f32.plan_over_before == pytest.approx(0.375 / 3.8234, 1e-3)
    s8 = next(r for r in rows if r.kernel == "gemm_s8_8x8x8_i8mm")
    assert s8.before is None and s8.plan_over_before is None


def test_a_before_file_that_is_not_a_bench_json_is_one_error(tmp_path: Path):
    bad = tmp_path / "x.json"
    bad.write_text('{"qemu": [{"kernel": 1}]}')
    with pytest.raises(IsaforgeError, match="not the JSON of an earlier isaforge bench run"):
        plans.load_before(bad)


def test_the_report_has_the_plans_section_and_its_goals(tmp_path: Path):
    res = result()
    goals = report.evaluate_goals(res)
    statuses = [g.status for g in goals if "plan" in g.title]
    assert statuses == ["NOT met", "NOT met", "met"]
    text = report.markdown(res, goals)
    for heading in ("## Plans (QEMU)", "### Fused epilogue overhead, clang", "### Small M, clang",
                    "### Before / after, clang"):  # fmt: skip
        assert heading in text
    assert "| `gemm_s8_8x8x8_i8mm` | 256x256x64 | bias | 200,000 | 210,000 | +5.00% | +0.00% | **NOT met** |" in text
    assert "| `gemm_f32_8x12_neon` | 1x1024x1024 | — | 3.8234 | 0.3750 | — |" in text  # no --before: no before
    assert "Only aarch64 is benchmarked" in text
    # the plain table keeps the plain runs only
    assert text.count("| `gemm_f32_8x12_neon` | 1x1024x1024 | 4,009,") == 1
    data = report.to_json(res, goals)
    assert data["plans"]["epilogue"][1]["met"] is False
    assert {r["shape"] for r in data["plans"]["small_m"]} == set(plans.SMALL_M_GOALS)


def test_without_plans_their_goals_are_not_evaluated():
    res = result()
    res.ran_plans, res.qemu = False, [rc for rc in res.qemu if rc.mode == PLAIN]
    goals = [g for g in report.evaluate_goals(res) if "plan" in g.title]
    assert [g.status for g in goals] == ["not evaluated"] * 3 and "--no-plans" in goals[0].detail
    assert "## Plans" not in report.markdown(res, goals)


# -- the command line ---------------------------------------------------------------------------------------------
def one_line_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    return err


def test_two_epilogue_shapes_are_refused(capsys):
    err = one_line_error(capsys, ["bench", "--no-mca", "--epilogue-shape", "8x8x8,16x16x16"])
    assert "--epilogue-shape 8x8x8,16x16x16: give one shape" in err


def test_a_bad_before_file_is_refused(capsys, tmp_path: Path):
    missing = tmp_path / "none.json"
    err = one_line_error(capsys, ["bench", "--no-mca", "--before", str(missing)])
    assert f"--before {missing}" in err


@pytest.mark.slow  # a real QEMU bench run (15 s): in make ci; the plan runner itself is tested in test_gemm.py
def test_quick_real_plan_run(tmp_path, capsys):
    """One small plan of the neon fp32 kernel under QEMU, with and without its epilogue, end to end: the run alone
    is counted (no packing of W, no create), and nothing is allocated in it."""
    out = tmp_path / "bench.json"
    argv = ["bench", "--no-mca", "--ops", "f32", "--variants", "neon", "--shapes", "16x24x8",
            "--plan-shapes", "1x48x16", "--epilogue-shape", "16x24x8", "--json", str(out), "--quiet"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    data = json.loads(out.read_text())
    runs = {(r["shape"], r["mode"]): r for r in data["qemu"]}
    assert set(runs) == {("16x24x8", PLAIN), ("16x24x8", PLAN), ("16x24x8", PLAN_EPILOGUE), ("1x48x16", PLAN)}
    plain, plan, fused = (runs["16x24x8", m] for m in (PLAIN, PLAN, PLAN_EPILOGUE))
    assert "isf_gemm_run" in plan["by_function"] and "isf_gemm_create" not in plan["by_function"]
    assert not any(f.startswith("isf_pack_b") for f in plan["by_function"])  # W was packed at create
    assert plan["instructions"] < plain["instructions"] and plan["macs_executed"] == plain["macs_executed"]
    assert not {"malloc", "memalign", "free", "calloc"} & set(plan["calls_out"])
    assert fused["status"] == 0 and fused["mac_check_ok"], "the fused epilogue is not supported by this build"
    assert plain["wrong"] == plan["wrong"] == "" and fused["wrong"] == "", fused["wrong"]  # C checked by the oracle
    (row,) = data["plans"]["epilogue"]
    assert row["overhead"] == pytest.approx(fused["instructions"] / plan["instructions"] - 1)
    (small,) = data["plans"]["small_m"]
    assert small["shape"] == "1x48x16" and small["goal"] is None and small["ratio"] > 1.0
