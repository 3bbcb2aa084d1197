"""Outcomes per cell and CPU model, read from pytest's JUnit XML, and when a run is ok."""

from __future__ import annotations

from isaforge.catalogue import load
from isaforge.matrix.report import closing_line
from isaforge.matrix.results import NATIVE, OTHER, CellResult, Tally, cpu_of, tally_junit
from tests.matrix.common import MATRIX, fake_run

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="x">
<testcase classname="a" name="test_x[aarch64-linux-gnu-gcc@cortex-a53-gemm_f32]" time="1.5"/>
<testcase classname="a" name="test_x[aarch64-linux-gnu-gcc@cortex-a710-gemm_f32]" time="2.0">
<failure message="no"/></testcase>
<testcase classname="a" name="test_y[aarch64-linux-gnu-gcc@max-64-gemm_s8]" time="0.5"/>
<testcase classname="a" name="test_y[aarch64-linux-gnu-gcc@max-64-gemm_f16]" time="0.5">
<skipped message="s"/></testcase>
<testcase classname="a" name="test_names[aarch64/neon/gemm_f32_8x12_neon.c]" time="0.01"/>
</testsuite></testsuites>
"""


def test_cpu_of_takes_the_longest_model_name_after_the_at() -> None:
    cpus = [c for models in load().cpus.values() for c in models]
    assert cpu_of("t[x@cortex-a710-gemm_f32]", cpus) == "cortex-a710"
    assert cpu_of("t[x@max]", cpus) == "max"
    assert cpu_of("t[x@neoverse-n1-1]", cpus) == "neoverse-n1"
    assert cpu_of("t[no-model]", cpus) is None


def test_junit_is_tallied_per_cpu_model_in_the_cells_order(tmp_path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(JUNIT)
    tally = tally_junit(path, MATRIX.cell("aarch64-linux-gnu-gcc-release"))
    assert list(tally) == ["cortex-a53", "cortex-a710", "max", OTHER]
    assert tally["cortex-a53"] == Tally(1, 0, 0, 1.5)
    assert tally["cortex-a710"].failed == 1 and not tally["cortex-a710"].ok
    assert (tally["max"].passed, tally["max"].skipped) == (1, 1)


def test_unavailable_cells_fail_the_run_unless_allowed_and_a_run_of_none_fails() -> None:
    host, arm = MATRIX.cell("host-gcc-release"), MATRIX.cell("arm-linux-gnueabihf-clang-release")
    passed = CellResult(host, "passed", per_cpu={NATIVE: Tally(3, 0, 0, 1.0)})
    missing = CellResult(arm, "unavailable", "clang-19 not found; run ci/install-toolchains.sh")
    assert not fake_run(passed, missing).ok
    assert fake_run(passed, missing, allow=True).ok
    assert not fake_run(missing, allow=True).ok
    assert "no cell could run here" in closing_line(fake_run(missing, allow=True))
    assert not fake_run(passed, CellResult(arm, "failed")).ok
