"""What a matrix run prints: one line per finished cell, the summary table per cell × CPU model, the closing line."""

from __future__ import annotations

from isaforge import ui
from isaforge.matrix.results import CellResult, Run, Tally

BUILD_ROW = "(build)"
LONG_RESULT = 24  # a longer result (an unavailable reason, a build error) runs past its column


def describe(result: CellResult) -> str:
    """One line for a finished cell: its verdict, test counts and times."""
    if result.status in ("unavailable", "build failed"):
        return f"{result.status}: {result.detail}"
    total = Tally()
    for t in result.per_cpu.values():
        total.passed += t.passed
        total.failed += t.failed
        total.skipped += t.skipped
    counts = f"{total.passed} passed, {total.failed} failed, {total.skipped} skipped"
    extra = f" ({result.detail})" if result.detail else ""
    took = f"build {ui.duration(result.build_seconds)}, tests {ui.duration(result.test_seconds)}"
    return f"{result.status}: {counts}{extra}, {took}"


def summary_rows(run: Run) -> list[list[str]]:
    rows = [["cell", "cpu", "result", "passed", "failed", "skipped", "time"]]
    for r in run.results:
        if r.status == "unavailable":
            rows.append([r.cell.name, "-", f"unavailable: {r.detail}", "", "", "", ""])
            continue
        built = "ok" if r.status != "build failed" else f"FAILED: {r.detail}"
        rows.append([r.cell.name, BUILD_ROW, built, "", "", "", ui.duration(r.build_seconds)])
        for cpu, t in r.per_cpu.items():
            result = "pass" if t.ok else ("FAIL" if t.failed else "skip")
            rows.append(["", cpu, result, str(t.passed), str(t.failed), str(t.skipped), ui.duration(t.seconds)])
        if r.status == "failed" and r.detail:
            rows.append(["", "-", f"FAIL: {r.detail}", "", "", "", ui.duration(r.test_seconds)])
    return rows


def summary_table(run: Run) -> str:
    """The summary rows, counts and times right-aligned."""
    return ui.text_table(summary_rows(run), align="lllrrrr", overflow={2: LONG_RESULT})


def closing_line(run: Run) -> str:
    by = {s: sum(r.status == s for r in run.results) for s in ("passed", "failed", "build failed", "unavailable")}
    failed = by["failed"] + by["build failed"]
    parts = [
        f"{by['passed']} of {len(run.results)} cells passed",
        f"{failed} failed",
        f"{by['unavailable']} unavailable",
    ]
    verdict = "ok" if run.ok else "FAILED"
    if by["unavailable"] == len(run.results):
        note = " (no cell could run here)"
    elif by["unavailable"]:
        note = " (allowed)" if run.allow_unavailable else " (--allow-unavailable to accept)"
    else:
        note = ""
    return f"matrix {verdict}: {', '.join(parts)}{note}; wall time {ui.duration(run.seconds)}"
