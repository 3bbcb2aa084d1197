"""ui: the status line (in place on a terminal, plain lines elsewhere) and the tables every command prints."""

from __future__ import annotations

import io

from isaforge import ui


def test_text_tables_pad_columns_align_numbers_and_let_long_cells_overflow() -> None:
    rows = [["name", "result", "n"], ["a", "ok", "5"], ["longer", "a very long error message", "12"]]
    assert ui.text_table(rows, align="llr").splitlines() == [
        "name    result                      n",
        "a       ok                          5",
        "longer  a very long error message  12",
    ]
    lines = ui.text_table(rows, align="llr", indent="  ", overflow={1: 6}).splitlines()
    assert lines[1] == "  a       ok       5"
    assert lines[2] == "  longer  a very long error message  12"


def test_markdown_tables_mark_right_aligned_columns() -> None:
    text = ui.markdown_table(["Kernel", "Instr"], [["`k`", 3]], "lr")
    assert text.splitlines() == ["| Kernel | Instr |", "| :--- | ---: |", "| `k` | 3 |"]


def test_the_status_line_prints_only_steps_and_results_without_a_terminal() -> None:
    out = io.StringIO()
    status = ui.StatusLine(out, live=False, head=lambda: "[0/1]")
    status.step("job", "building")
    status.update("job", "42%")
    status.finish("job", "job: done")
    status.close()
    assert out.getvalue() == "job: building\njob: done\n"


def test_a_quiet_status_line_prints_nothing() -> None:
    out = io.StringIO()
    status = ui.StatusLine(out, live=True, quiet=True)
    status.step("job", "building")
    status.finish("job", "done")
    status.close()
    assert out.getvalue() == ""


def test_durations_read_as_seconds_minutes_or_hours() -> None:
    assert [ui.duration(s) for s in (4.24, 70, 7380)] == ["4.2s", "1m10s", "2h03m00s"]
