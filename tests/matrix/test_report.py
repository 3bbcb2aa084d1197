"""The summary of a run: a row per cell and CPU model, and the closing line."""

from __future__ import annotations

from isaforge.matrix.report import closing_line, summary_table
from isaforge.matrix.results import CellResult, Tally
from tests.matrix.common import MATRIX, fake_run


def test_the_summary_has_a_row_per_cell_and_cpu_model_and_says_why_a_cell_is_unavailable() -> None:
    cell = MATRIX.cell("arm-linux-gnueabihf-gcc-release")
    per_cpu = {"cortex-a7": Tally(5, 0, 0, 3.0), "max": Tally(4, 1, 0, 70.0)}
    ran = CellResult(cell, "failed", build_seconds=0.3, test_seconds=73.0, per_cpu=per_cpu)
    missing = CellResult(MATRIX.cell("arm-linux-gnueabihf-clang-release"), "unavailable", "clang-19 not found")
    text = summary_table(fake_run(ran, missing))
    lines = text.splitlines()
    assert lines[0].split() == ["cell", "cpu", "result", "passed", "failed", "skipped", "time"]
    assert lines[1].split() == ["arm-linux-gnueabihf-gcc-release", "(build)", "ok", "0.3s"]
    assert lines[2].split() == ["cortex-a7", "pass", "5", "0", "0", "3.0s"]
    assert lines[3].split() == ["max", "FAIL", "4", "1", "0", "1m10s"]
    assert lines[4].split()[:3] == ["arm-linux-gnueabihf-clang-release", "-", "unavailable:"]
    assert "clang-19 not found" in lines[4]
    closing = closing_line(fake_run(ran, missing))
    assert closing.startswith("matrix FAILED: 0 of 2 cells passed, 1 failed, 1 unavailable")
