"""bench's plan runs: the log window that counts isf_gemm_run alone, useful MACs of 1-row matrix-instruction
kernels, the bulk kernel whose hot loop is the ideal, and the Plans section's rows, goals, markdown and JSON on
fabricated counts with known answers; then the command line's refusals and one quick real plan run under QEMU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from isaforge.bench.measure import qemu_count
from isaforge.bench.measure.qemu_count import PLAIN, PLAN, PLAN_EPILOGUE, RunCount
from isaforge.bench.report import plans
from isaforge.bench.report.figures import to_json
from isaforge.bench.report.goals import evaluate_goals
from isaforge.bench.report.libisaforge import markdown
from isaforge.bench.report.results import BenchResult
from isaforge.catalogue import load, parse_kernel_name
from isaforge.cli import main
from isaforge.errors import IsaforgeError


def kernel(name: str):
    return parse_kernel_name(name, load().ops)


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


def result(**kw) -> BenchResult:
    r = BenchResult("isaforge bench", ["clang"], [], [], 128, ran_mca=False, ran_plans=True,
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
    text = markdown(res, evaluate_goals(res))
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
    goals = evaluate_goals(res)
    statuses = [g.status for g in goals if "plan" in g.title]
    assert statuses == ["NOT met", "NOT met", "met"]
    text = markdown(res, goals)
    for heading in ("## Plans (QEMU)", "### Fused epilogue overhead, clang", "### Small M, clang",
                    "### Before / after, clang"):  # fmt: skip
        assert heading in text
    assert "| `gemm_s8_8x8x8_i8mm` | 256x256x64 | bias | 200,000 | 210,000 | +5.00% | +0.00% | **NOT met** |" in text
    assert "| `gemm_f32_8x12_neon` | 1x1024x1024 | — | 3.8234 | 0.3750 | — |" in text  # no --before: no before
    assert "Only aarch64 is benchmarked" in text
    # the plain table keeps the plain runs only
    assert text.count("| `gemm_f32_8x12_neon` | 1x1024x1024 | 4,009,") == 1
    data = to_json(res, goals)
    assert data["plans"]["epilogue"][1]["met"] is False
    assert {r["shape"] for r in data["plans"]["small_m"]} == set(plans.SMALL_M_GOALS)


def test_without_plans_their_goals_are_not_evaluated():
    res = result()
    res.ran_plans, res.qemu = False, [rc for rc in res.qemu if rc.mode == PLAIN]
    goals = [g for g in evaluate_goals(res) if "plan" in g.title]
    assert [g.status for g in goals] == ["not evaluated"] * 3 and "--no-plans" in goals[0].detail
    assert "## Plans" not in markdown(res, goals)


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
