"""bench.report.sme: the SME section and its JSON on fabricated runs with known answers."""

from __future__ import annotations

from isaforge.bench.measure.qemu_count import PLAN, RunCount
from isaforge.bench.report import sme as sme_report
from isaforge.bench.report.figures import to_json
from isaforge.bench.report.libisaforge import markdown
from isaforge.bench.report.results import BenchResult
from isaforge.bench.scenarios.sme import SmeRow

SHAPE = "16x32x8"
MACS = 16 * 32 * 8


def run(kernel: str, variant: str, instructions: int, outer: int, hot: float, shape: str = SHAPE, **kw) -> RunCount:
    mnemonics = {"fmopa": outer} if outer else {"fmla": MACS // 4}
    return RunCount("gemm_f32", variant, kernel, shape, 128, MACS, MACS, compiler="clang", mode=PLAN,
                    instructions=instructions, macs_executed=MACS, mac_mnemonics=mnemonics,
                    hot_loop_instructions_per_mac=hot, **kw)  # fmt: skip


def rows(**kw) -> list[SmeRow]:
    baseline = run("gemm_f32_8x8_sve", "sve", 4096, 0, 0.375)
    return [
        SmeRow(run("gemm_f32_4x16_sme", "sme", 2048, 256, 0.171875, **kw), 16, 16, baseline),
        SmeRow(run("gemm_f32_4x16_sme", "sme", 1024, 128, 0.0859375), 32, 32, baseline),
    ]


def result(sme_rows: list[SmeRow]) -> BenchResult:
    return BenchResult("isaforge bench", ["clang"], [], [SHAPE], 128, ran_mca=False, sme=sme_rows)


def test_the_section_has_a_row_per_svl_beside_the_baseline():
    text = markdown(result(rows()), [])
    assert "## SME: executed instructions per streaming vector length (QEMU)" in text
    lines = [line for line in text.splitlines() if "`gemm_f32_4x16_sme`" in line]
    assert len(lines) == 2
    # 2048 / 4096 MACs, 256 of 2048 instructions outer products, the baseline's 4096 / 4096
    assert "| 16 | 16 | 0.5000 | — | 0.1719 | 12.5% | `gemm_f32_8x8_sve` | 1.000 | 0.375 |" in lines[0]
    assert "| 32 | 32 | 0.2500 | — | 0.0859 | 12.5% |" in lines[1]
    assert "In 2 of 2 runs" in text and "not cycles" in text


def test_a_wrong_run_is_marked_and_named():
    text = "\n".join(sme_report.markdown(rows(wrong="C[0][0] differs")))
    assert "0.5000 ✗" in text and "gemm_f32_4x16_sme 16x32x8 SVL 16 not (✗)" in text


def test_no_streaming_kernel_no_section():
    assert sme_report.markdown([]) == [] and "## SME" not in markdown(result([]), [])


def test_the_json_has_the_rows():
    data = to_json(result(rows()), [])["sme"]
    assert [(r["svl"], r["nr"], r["instructions_per_mac"]) for r in data] == [(16, 16, 0.5), (32, 32, 0.25)]
    assert data[0]["outer_product_share"] == 0.125 and data[0]["baseline_instructions_per_mac"] == 1.0
    assert data[0]["compiler"] == "clang" and data[0]["baseline_kernel"] == "gemm_f32_8x8_sve"


def test_rows_with_a_goal_say_whether_they_meet_it():
    """0.10 / 0.028 at SVL 16 / 32 for gemm_f32 at 256×256×256: 0.0977 meets the first, 0.0313 misses the second."""
    big = "256x256x256"
    goal_rows = [SmeRow(run("gemm_f32_8x8_sme2", "sme2", 400, 64, 0.08, big), 16, 8, None),
                 SmeRow(run("gemm_f32_8x8_sme2", "sme2", 128, 64, 0.02, big), 32, 16, None)]  # fmt: skip
    text = "\n".join(sme_report.markdown(goal_rows))
    assert "| 0.0977 | ≤ 0.1: met |" in text and "| 0.0312 | ≤ 0.028: **NOT met** |" in text
    ((title, met, detail),) = sme_report.goals(goal_rows)
    assert "gemm_f32 at 256x256x256" in title and met is False and "SVL 32: 0.0312" in detail
    assert sme_report.goals(rows()) == []  # no goal at 16×32×8


def test_an_ops_goal_is_judged_on_its_most_preferred_streaming_variant():
    """SME1's kernel beside SME2's: dispatch runs SME2's where it can, so its rows decide the goal."""
    big = "256x256x256"
    both = [SmeRow(run("gemm_f32_4x16_sme", "sme", 800, 64, 0.17, big), 16, 16, None),
            SmeRow(run("gemm_f32_8x8_sme2", "sme2", 400, 64, 0.08, big), 16, 8, None)]  # fmt: skip
    ((_title, met, detail),) = sme_report.goals(both)
    assert met is True and "gemm_f32_8x8_sme2" in detail and "gemm_f32_4x16_sme" not in detail
