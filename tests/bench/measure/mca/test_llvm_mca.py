"""llvm-mca-19's --json report read back (saved from a real run), then the real tool."""

from __future__ import annotations

import pytest

from isaforge.bench.measure.mca import analyse, macs
from isaforge.bench.measure.mca.llvm_mca import parse_mca
from isaforge.errors import IsaforgeError
from tests.bench.measure.mca.common import F32, kernel_loop, saved_mca


def test_parse_saved_llvm_mca_output_of_a_loop():
    result = saved_mca("mca_f32_8x12_neon_n1.json")
    assert (result.iterations, result.instructions, result.total_cycles) == (500, 15000, 6011)
    assert result.cycles_per_iteration == pytest.approx(12.022)
    assert result.block_rthroughput == 12.0
    assert result.units[:3] == ("N1UnitB", "N1UnitD.0", "N1UnitD.1")  # a group's units, numbered
    assert {"N1UnitV0", "N1UnitV1"} <= set(result.units)
    units = result.unit_pressure()
    assert units["N1UnitV0"] == units["N1UnitV1"] == 12.0
    assert len(result.by_insn) == 30 and result.by_insn[-1][0].startswith("b.ne")
    assert sum(row[result.units.index("N1UnitV0")] for _, row in result.by_insn) == 12.0
    assert analyse.explain(result, "fmla v.4s[i]") == "N1UnitV0/N1UnitV1 busy 12.00 of 12.02 cycles"


def test_real_peak_is_the_models_issue_rate():
    kl = kernel_loop("clang_gemm_f32_8x12_neon.objdump", F32)
    assert kl.loop is not None and kl.kind is not None
    stream = macs.reference_stream(kl.loop.body, kl.kind)
    n1 = analyse.measure_peak(stream, "neoverse-n1", "+neon")  # two 128-bit FP pipes
    v2 = analyse.measure_peak(stream, "neoverse-v2", "+neon")  # four
    assert n1.issue_rate == pytest.approx(2.0, rel=0.01)
    assert v2.issue_rate == pytest.approx(4.0, rel=0.01)
    assert n1.cycles == pytest.approx(saved_mca("mca_ref_fmla_4s_n1.json").cycles_per_iteration)


def test_output_that_is_not_a_report_is_one_line():
    with pytest.raises(IsaforgeError) as err:
        parse_mca("Iterations: 500\n")
    assert "llvm-mca --json output" in str(err.value) and "\n" not in str(err.value)
