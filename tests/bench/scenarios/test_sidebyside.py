"""The side by side: ratios against the fastest right peer, a wrong result never ranking, the goals and the report on
fabricated rows with known answers; then one real run of every installed library under QEMU, priced by llvm-mca,
through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from isaforge.bench.measure import wholecall
from isaforge.bench.report import sidebyside as peer_report
from isaforge.bench.scenarios import peers, sidebyside
from isaforge.bench.scenarios.shapes import Shape
from isaforge.bench.scenarios.sidebyside import OK, PLAIN_OURS, PLAN, REFUSED, WRONG, CallRow, SideBySide
from isaforge.cli import main
from isaforge.errors import IsaforgeError

N1 = "neoverse-n1"


def row(entrant: str, cycles: float, status: str = OK, shape: str = "64x64x64", precision: str = "fp32") -> CallRow:
    return CallRow(precision, shape, N1, entrant, status, macs=64**3, cycles=cycles, instructions=100_000,
                   peak_macs_per_cycle=8.0)  # fmt: skip


def fabricated(*rows: CallRow) -> SideBySide:
    return SideBySide(["64x64x64"], [N1], ["fp32"], list(rows))


def test_percent_of_peak_and_instructions_per_mac() -> None:
    r = row(PLAN.label, 64**3 / 4)  # 4 MACs a cycle of a peak of 8
    assert r.percent_of_peak == pytest.approx(50.0)
    assert r.instructions_per_mac == pytest.approx(100_000 / 64**3)


def test_a_wrong_peer_never_ranks_however_fast() -> None:
    result = fabricated(row(PLAN.label, 1000), row("XNNPACK", 10, WRONG), row("OpenBLAS", 900))
    assert result.best_peer("fp32", "64x64x64", N1).entrant == "OpenBLAS"
    (ours, ratio, peer), *_ = peer_report.ratio_rows(result, PLAN.label, None)
    assert (ours.cycles, peer.entrant) == (1000, "OpenBLAS") and ratio == pytest.approx(1000 / 900)
    assert "wrong ✗" in peer_report._cell(result.rows[1])
    assert result.rows[1].percent_of_peak == 0.0


def test_the_per_call_ratio_compares_with_per_call_peers_only() -> None:
    result = fabricated(row(PLAIN_OURS.label, 1000), row("XNNPACK", 500), row("BLIS", 2000))
    (_, ratio, peer), *_ = peer_report.ratio_rows(result, PLAIN_OURS.label, [peers.PLAIN])
    assert peer.entrant == "BLIS" and ratio == pytest.approx(0.5)


def test_goals_name_each_cell_above_one_and_count_the_passes() -> None:
    result = fabricated(row(PLAN.label, 1200), row("XNNPACK", 1000), row(PLAIN_OURS.label, 900), row("BLIS", 1000))
    plan_goal, plain_goal = peer_report.goals(result, "clang")[:2]
    assert plan_goal.met is False and "0 of 1 pass" in plan_goal.detail and "1.20× (XNNPACK)" in plan_goal.detail
    assert plain_goal.met is True and "1 of 1 pass" in plain_goal.detail


def test_peak_goal_counts_the_goal_cores_and_shapes_only() -> None:
    rows = [row(PLAN.label, 64**3 / 8 / 0.95, shape="128x128x128"), row(PLAN.label, 64**3 / 8 / 0.5, shape="1x2x3")]
    result = SideBySide(["128x128x128", "1x2x3"], [N1], ["fp32"], rows)
    goal = next(g for g in peer_report.goals(result, "clang") if "≥ 95%" in g.title)
    # the one cell run passes; the goal's other cells (shapes, N2, V1, fp16) were not run, so it is not judged met
    assert goal.met is None and goal.detail == "1 of 1 pass; 23 of its 24 cells not in this run", goal.detail


def test_a_refused_call_shows_the_status_and_does_not_rank() -> None:
    r = row("XNNPACK", 0, REFUSED)
    r.detail = "status 5"
    assert peer_report._cell(r) == "refused (status 5)"
    assert fabricated(row(PLAN.label, 10), r).best_peer("fp32", "64x64x64", N1) is None


def test_the_quantized_precisions_are_priced_against_int8s_peak() -> None:
    assert sidebyside.parse_precisions("int8,qs8,qd8,qc4w") == ["int8", "qs8", "qd8", "qc4w"]
    assert {"qs8", "qd8", "qc4w"} <= set(sidebyside.DEFAULT_PRECISIONS.split(","))
    for precision in ("qs8", "qd8", "qc4w"):
        assert sidebyside.core_peak(N1, precision) == wholecall.core_peak(N1, "int8")


def test_bad_selections_are_one_line_errors() -> None:
    with pytest.raises(IsaforgeError, match="unknown precision 'fp64'"):
        sidebyside.parse_precisions("fp32,fp64")
    with pytest.raises(IsaforgeError, match="unknown core 'cortex-a53'"):
        sidebyside.parse_cores("neoverse-n1,cortex-a53")


def test_the_command_line_refuses_a_bad_core_before_building(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--peers", "--no-mca", "--no-qemu", "--peer-cores", "cortex-a53"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown core 'cortex-a53'" in err[0]


@pytest.mark.peers
def test_every_installed_library_side_by_side_under_qemu(tmp_path: Path) -> None:
    """One small awkward shape, fp32, int8, qs8, qd8 and qc4w, on N1: every library that is installed runs, passes
    the oracle (fp32 with bias and clamp where the call takes them) and gets modeled cycles; one that is not is named
    with its package. qs8 has its table: libisaforge's
    gemm_qs8 plan beside XNNPACK; qd8 and qc4w theirs, with XNNPACK's stand-in said to be one."""
    out, js, png = tmp_path / "p.md", tmp_path / "p.json", tmp_path / "p.png"
    argv = ["bench", "--peers", "--no-mca", "--no-qemu", "--peer-shapes", "5x17x33", "--peer-cores", N1,
            "--precisions", "fp32,int8,qs8,qd8,qc4w", "--markdown", str(out), "--json", str(js), "--plot", str(png),
            "--quiet"]  # fmt: skip
    assert main(argv) == 0
    data = json.loads(js.read_text())["peers"]
    ran = {r["entrant"] for r in data["rows"]}
    expected = {e.label for e in sidebyside.ENTRANTS if e.library not in data["missing"]}
    assert ran == expected and {PLAN.label, PLAIN_OURS.label} <= ran
    for library, why in data["missing"].items():
        assert peers.available(library) == why
    for r in data["rows"]:
        assert r["status"] == OK, r
        assert r["cycles"] > 0 and r["instructions"] > 0
        if r["entrant"] in (PLAN.label, PLAIN_OURS.label):  # vector MACs only (peers' scalar edges are not counted)
            assert r["macs_executed"] >= 5 * 17 * 33  # padding lanes may add, never remove
    qs8 = {r["entrant"] for r in data["rows"] if r["precision"] == "qs8"}
    assert qs8 == {PLAN.label} | ({"XNNPACK"} if "xnnpack" not in data["missing"] else set())
    assert data["peaks"][N1]["qs8"] == data["peaks"][N1]["int8"]
    text = out.read_text()
    assert "## Side by side with OpenBLAS, BLIS and XNNPACK" in text and "### int8, N1" in text
    table = text.split("### qs8, N1")[1].split("###")[0]
    head = next(line for line in table.splitlines() if line.startswith("| M×N×K"))
    assert "libisaforge plan" in head and "libisaforge isf_gemm" not in head and "OpenBLAS" not in head, head
    assert "| 5x17x33 |" in table and "wrong" not in table
    for precision in ("qd8", "qc4w"):
        ran = {r["entrant"] for r in data["rows"] if r["precision"] == precision}
        assert ran == {PLAN.label} | ({"XNNPACK"} if "xnnpack" not in data["missing"] else set()), precision
        table = text.split(f"### {precision}, N1")[1].split("###")[0]
        assert "stands in" in table and "| 5x17x33 |" in table and "wrong" not in table
    # fp32: bias and clamp in the plan's and XNNPACK's calls, none in the per-call APIs', and the caption says so
    fused = {r["entrant"] for r in data["rows"] if r["precision"] == "fp32" and r["epilogue"]}
    assert fused == {PLAN.label} | ({"XNNPACK"} if "xnnpack" not in data["missing"] else set())
    assert "OpenBLAS, BLIS: sgemm, C = A·B" in text.split("### fp32, N1")[1].split("###")[0]
    int4 = next(g for g in data["goals"] if g["title"].startswith("qc4w plan ≤ 1.15×"))
    assert int4["status"] in ("met", "NOT met") and int4["detail"].startswith(("1 of 1 pass", "0 of 1 pass"))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.peers
def test_a_library_missing_is_reported_not_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    real = peers.available
    monkeypatch.setattr(peers, "available", lambda lib: "blis: gone" if lib == "blis" else real(lib))
    from isaforge import builds  # noqa: PLC0415

    build = builds.build_for("aarch64-linux-gnu", "clang")
    builds.ensure_built(build)
    result = sidebyside.collect(build, [Shape(2, 3, 4)], [sidebyside.core_model(N1)], ["fp32"])
    assert result.missing["blis"] == "blis: gone"
    assert "**blis not installed**: blis: gone." in peer_report.markdown(result, [], "cmd", {})
