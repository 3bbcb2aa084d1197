"""The side-by-side report: its goals, the markdown section of docs/performance.md, JSON and the chart."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from isaforge.bench.measure import wholecall
from isaforge.bench.report import METHOD
from isaforge.bench.report.figures import pyplot
from isaforge.bench.report.results import Goal
from isaforge.bench.scenarios import peers
from isaforge.bench.scenarios.sidebyside import ENTRANTS, MISSING, PLAIN_OURS, PLAN, WRONG, CallRow, SideBySide

SHORT = {c.mcpu: c.label.removeprefix("Neoverse ").removeprefix("Cortex-") for c in wholecall.CORE_MODELS}
SHORT["neoverse-v2"] = "max"


def _where(r: CallRow) -> str:
    return f"{r.precision} {r.shape} {SHORT.get(r.core, r.core)}"


# -- goals: issue 33's (modeled, whole plan run) --------------------------------------------------------------------
N1_N2_V1 = ("neoverse-n1", "neoverse-n2", "neoverse-v1")


@dataclass(frozen=True)
class PeakGoal:
    """libisaforge's plan at ≥ `percent` of the core's modeled peak for the precision, at each shape and core."""

    precisions: tuple[str, ...]
    percent: float
    shapes: tuple[str, ...]
    cores: tuple[str, ...]


PEAK_GOALS = (
    PeakGoal(("fp32", "fp16"), 95.0, ("128x128x128", "256x256x64", "49x256x2304", "4x1024x1024"), N1_N2_V1),
    PeakGoal(("fp32", "fp16"), 90.0, ("64x64x64",), N1_N2_V1),
    PeakGoal(("bf16",), 80.0, ("128x128x128", "256x256x64"), ("neoverse-n2", "neoverse-v1")),  # bfmmla's cores
    PeakGoal(("qd8",), 75.0, ("49x256x2304",), N1_N2_V1),
    PeakGoal(("qd8",), 50.0, ("128x128x128",), N1_N2_V1),
)
PLAN_PEER_GOAL = 1.00  # libisaforge plan / the fastest right peer, every row


@dataclass(frozen=True)
class Baseline:
    """libisaforge plan's % of peak in a row of docs/performance.md at `commit`."""

    precision: str
    core: str
    percent: float
    commit: str


# "m = 1 stays where it is or better": the plan's 1x1024x1024 rows as docs/performance.md first showed them, fp32
# and fp16 at 26cb2c1 (the side by side's first run; its float calls had no bias nor clamp), qd8 at 7ff78e7 (the
# first run with qd8: 26cb2c1 had none; bias and clamp on).
M1_SHAPE = "1x1024x1024"
M1_BASELINE = (
    Baseline("fp32", "neoverse-n1", 80.1, "26cb2c1"),
    Baseline("fp32", "neoverse-n2", 87.9, "26cb2c1"),
    Baseline("fp32", "neoverse-v1", 71.2, "26cb2c1"),
    Baseline("fp16", "neoverse-n1", 85.8, "26cb2c1"),
    Baseline("fp16", "neoverse-n2", 83.6, "26cb2c1"),
    Baseline("fp16", "neoverse-v1", 73.3, "26cb2c1"),
    Baseline("qd8", "neoverse-n1", 66.0, "7ff78e7"),
    Baseline("qd8", "neoverse-n2", 32.3, "7ff78e7"),
    Baseline("qd8", "neoverse-v1", 24.4, "7ff78e7"),
)
# int4 weights against int8's: the plan's cycles at every shape and core of the run.
INT4_GOAL = ("qc4w", "qd8", 1.15)

# What each library's call is: the tables' captions and docs/bench.md.
_FLOAT_CALLS = (
    "libisaforge plan: a {op} plan run with a bias ({bias}) and a clamp whose bounds clip about 5 % of C at each "
    "end, fused into the kernels' stores. libisaforge isf_gemm: {plain}, C = A·B (the per-call API has no "
    "epilogue: less work)."
)
PEER_CALLS = {
    "fp32": _FLOAT_CALLS.format(op="gemm_f32", bias="fp32", plain="isf_gemm_f32")
    + " XNNPACK: its f32 fully-connected operator with the same bias and clamp. OpenBLAS, BLIS: sgemm, C = A·B "
    "(a BLAS has no bias nor clamp: they do less work than the plan and XNNPACK).",
    "fp16": _FLOAT_CALLS.format(op="gemm_f16", bias="binary16", plain="isf_gemm_f16")
    + " XNNPACK: its f16 fully-connected operator with the same bias and clamp (binary16 accumulation).",
    "bf16": _FLOAT_CALLS.format(op="gemm_bf16", bias="fp32, C's type", plain="isf_gemm_bf16")
    + " No packaged peer has bf16.",
    "qs8": "libisaforge: a gemm_qs8 plan (int8 A and W, int32 sums requantized to int8 C). XNNPACK: its qs8 "
    "fully-connected operator on the same operands, scale and zero point.",
    "qd8": "libisaforge: a gemm_qd8_f32 plan (fp32 A quantized per row inside the run, int8 weights with per-column "
    "scales, fp32 C with fp32 bias and clamp). XNNPACK (2022) has no dynamically quantized operator: its nearest, the "
    "qs8 fully-connected operator, stands in and does less work (A arrives as int8, no quantization pass; int8 C "
    "requantized with one scale, no fp32 dequantization, bias or float clamp).",
    "qc4w": "libisaforge: a gemm_qd8_f32_qc4w plan (as qd8, with int4 weights, two per byte). XNNPACK (2022) has no "
    "int4 weights nor dynamic quantization: its qs8 fully-connected operator stands in, on the same weight values "
    "(−8…7) held as int8, a byte each, and does less work as in qd8.",
}


def _where_list(rows: Sequence[str], more: int) -> str:
    return "; ".join(rows) + (f" and {more} more" if more > 0 else "")


def _peak_goal(result: SideBySide, compiler: str, goal: PeakGoal) -> Goal:
    cores = ", ".join(SHORT.get(c, c) for c in goal.cores)
    title = (
        f"libisaforge plan ≥ {goal.percent:.0f}% of the core's modeled peak at {', '.join(goal.shapes)}, "
        f"{'/'.join(goal.precisions)}, on {cores}"
    )
    cells = [(p, s, c) for p in goal.precisions for s in goal.shapes for c in goal.cores]
    run = [x for x in cells if x[0] in result.precisions and x[1] in result.shapes and x[2] in result.cores]
    if not run:
        return Goal(compiler, title, None, "not run")
    rows = [(x, result.find(*x, PLAN.label)) for x in run]
    misses = sorted(((x, r) for x, r in rows if r is None or r.percent_of_peak < goal.percent),
                    key=lambda xr: xr[1].percent_of_peak if xr[1] is not None else -1.0)  # fmt: skip
    shown = [
        f"{p} {s} {SHORT.get(c, c)} " + (f"{r.percent_of_peak:.1f}%" if r is not None and r.ranks else
                                           f"{r.status if r is not None else 'no row'}")
        for (p, s, c), r in misses[:12]
    ]  # fmt: skip
    detail = f"{len(rows) - len(misses)} of {len(rows)} pass" + (
        f"; below: {_where_list(shown, len(misses) - 12)}" if misses else ""
    )
    absent = len(cells) - len(run)
    if absent:
        detail += f"; {absent} of its {len(cells)} cells not in this run"
    return Goal(compiler, title, False if misses else (None if absent else True), detail)


def _int4_goal(result: SideBySide, compiler: str) -> Goal:
    int4, int8, most = INT4_GOAL
    title = f"{int4} plan ≤ {most:.2f}× the {int8} plan's modeled cycles at every shape and core"
    if int4 not in result.precisions or int8 not in result.precisions:
        return Goal(compiler, title, None, f"needs both {int4} and {int8} in --precisions")
    rows, misses = 0, []
    for shape in result.shapes:
        for core in result.cores:
            a, b = result.find(int4, shape, core, PLAN.label), result.find(int8, shape, core, PLAN.label)
            rows += 1
            where = f"{shape} {SHORT.get(core, core)}"
            if a is None or b is None or not a.ranks or not b.ranks:
                misses.append((float("inf"), f"{where} not measured right"))
            elif (q := a.cycles / b.cycles) > most:
                misses.append((q, f"{where} {q:.2f}×"))
    misses.sort(key=lambda x: -x[0])
    detail = f"{rows - len(misses)} of {rows} pass" + (
        f"; above: {_where_list([m for _, m in misses[:12]], len(misses) - 12)}" if misses else ""
    )
    return Goal(compiler, title, not misses, detail)


# -- ratio goals ---------------------------------------------------------------------------------------------------
def _ratio(result: SideBySide, ours: CallRow | None, modes: Sequence[str] | None) -> tuple[float, CallRow] | None:
    if ours is None or not ours.ranks:
        return None
    best = result.best_peer(ours.precision, ours.shape, ours.core, modes)
    return (ours.cycles / best.cycles, best) if best is not None else None


def ratio_rows(result: SideBySide, entrant: str, modes: Sequence[str] | None) -> list[tuple[CallRow, float, CallRow]]:
    """(ours, ours / best peer, that peer) for every cell with a peer to compare with."""
    out = []
    for r in result.rows:
        if r.entrant == entrant and (got := _ratio(result, r, modes)) is not None:
            out.append((r, *got))
    return out


def _ratio_goal(result: SideBySide, compiler: str, title: str, entrant: str, modes: Sequence[str] | None) -> Goal:
    rows = ratio_rows(result, entrant, modes)
    if not rows:
        return Goal(compiler, title, None, "no peer ran (see the section's first lines)")
    misses = sorted((x for x in rows if x[1] > PLAN_PEER_GOAL), key=lambda x: -x[1])
    worst = "; ".join(f"{_where(r)} {q:.2f}× ({p.entrant})" for r, q, p in misses[:12])
    more = f" and {len(misses) - 12} more" if len(misses) > 12 else ""
    best = min(rows, key=lambda x: x[1])
    detail = f"{len(rows) - len(misses)} of {len(rows)} pass (best {best[1]:.2f}× at {_where(best[0])})"
    return Goal(compiler, title, not misses, detail + (f"; above 1: {worst}{more}" if misses else ""))


def _m1_goal(result: SideBySide, compiler: str) -> Goal:
    commits = " and ".join(
        f"{'/'.join(dict.fromkeys(b.precision for b in M1_BASELINE if b.commit == c))} at {c}"
        for c in dict.fromkeys(b.commit for b in M1_BASELINE)
    )
    title = (
        f"m = 1 stays where it is or better: libisaforge plan's % of peak at {M1_SHAPE} ≥ its figure when the row "
        f"first appeared in docs/performance.md ({commits})"
    )
    run = [b for b in M1_BASELINE if b.precision in result.precisions and b.core in result.cores]
    if M1_SHAPE not in result.shapes or not run:
        return Goal(compiler, title, None, "not run")
    cells, misses = [], 0
    for b in run:
        r = result.find(b.precision, M1_SHAPE, b.core, PLAN.label)
        # The baseline is printed to 0.1 %: the figure is compared as printed.
        now = round(r.percent_of_peak, 1) if r is not None and r.ranks else None
        below = now is None or now < b.percent
        misses += below
        got = f"{now:.1f}%" if now is not None else (r.status if r is not None else "no row")
        cells.append(f"{'**' if below else ''}{b.precision} {SHORT.get(b.core, b.core)} {got} (was {b.percent:.1f}%)"
                     f"{'**' if below else ''}")  # fmt: skip
    detail = f"{len(run) - misses} of {len(run)} hold: " + "; ".join(cells)
    if absent := len(M1_BASELINE) - len(run):
        detail += f"; {absent} of its {len(M1_BASELINE)} cells not in this run"
    return Goal(compiler, title, False if misses else (None if absent else True), detail)


def goals(result: SideBySide, compiler: str) -> list[Goal]:
    plan_title = f"libisaforge plan / best peer ≤ {PLAN_PEER_GOAL:.2f} in modeled cycles"
    out = [
        _ratio_goal(result, compiler, plan_title, PLAN.label, None),
        _ratio_goal(
            result, compiler, "libisaforge isf_gemm / best per-call peer (OpenBLAS, BLIS) ≤ 1.00 in modeled cycles "
            "(all C = A·B: no per-call API has a bias or clamp)", PLAIN_OURS.label, [peers.PLAIN],
        ),
    ]  # fmt: skip
    out += [_peak_goal(result, compiler, g) for g in PEAK_GOALS]
    out.append(_m1_goal(result, compiler))
    out.append(_int4_goal(result, compiler))
    return out


# -- markdown -----------------------------------------------------------------------------------------------------
def _cell(r: CallRow | None) -> str:
    if r is None:
        return "—"
    if r.status == WRONG:
        return f"wrong ✗ ({r.cycles:,.0f})"
    if not r.ranks:
        return f"refused ({r.detail})"
    return f"{r.cycles:,.0f} · {r.percent_of_peak:.1f}% · {r.instructions_per_mac:.3f}"


def _ratio_cell(result: SideBySide, r: CallRow | None) -> str:
    got = _ratio(result, r, None)
    if got is None:
        return "—"
    q, peer = got
    return f"**{q:.2f}×** ({peer.entrant})" if q > 1.0 else f"{q:.2f}× ({peer.entrant})"


def _table(result: SideBySide, precision: str, core: str) -> list[str]:
    entrants = [e for e in ENTRANTS if any(r.entrant == e.label and r.precision == precision for r in result.rows)]
    head = ["M×N×K", *(e.label for e in entrants), "plan / best peer"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join([" :--- "] + [" ---: "] * (len(head) - 1)) + "|"]
    for shape in result.shapes:
        cells = [result.find(precision, shape, core, e.label) for e in entrants]
        plan = result.find(precision, shape, core, PLAN.label)
        lines.append("| " + " | ".join([shape, *map(_cell, cells), _ratio_cell(result, plan)]) + " |")
    return lines


def markdown(result: SideBySide, goal_rows: Sequence[Goal], command: str, versions: dict[str, str]) -> str:
    lines = ["## Side by side with OpenBLAS, BLIS and XNNPACK", ""]
    lines += [
        f"Produced by `{command}`. One call of each library, counted whole under QEMU and priced by llvm-mca-19 for "
        "each core; each cell: modeled cycles · % of the core's peak MAC rate for the precision · instructions per "
        "MAC; the ratio is libisaforge plan / the fastest right peer. How the calls are made, priced and checked, "
        f"and what the model leaves out: [docs/bench.md]({METHOD}), *Side by side*.",
        "",
        "Peers: " + ", ".join(f"{lib} {v}" for lib, v in versions.items()) + ".",
    ]
    for lib, why in result.missing.items():
        lines.append(f"**{lib} {MISSING}**: {why}.")
    lines += ["", "### Goals", "", "| Goal | Status | Figures |", "| :--- | :--- | :--- |"]
    lines += [f"| {g.title} | {g.status} | {g.detail} |" for g in goal_rows]
    lines += ["", "### The core's peak per precision", "", "| Core | " + " | ".join(result.precisions) + " |"]
    lines.append("| :--- |" + " :--- |" * len(result.precisions))
    for core in result.cores:
        cells = [f"{(peak := result.peaks[core][p]).macs_per_cycle:.1f} ({peak.stream})" for p in result.precisions]
        lines.append(f"| {SHORT.get(core, core)} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("MACs per cycle, and the stream llvm-mca measured it on (the best MAC form the core has).")
    for precision in result.precisions:
        for core in result.cores:
            lines += ["", f"### {precision}, {SHORT.get(core, core)} (`-mcpu={core}`)", ""]
            if precision in PEER_CALLS:
                lines += [f"*The calls:* {PEER_CALLS[precision]}", ""]
            lines += _table(result, precision, core)
    wrong = [r for r in result.rows if r.status == WRONG]
    if wrong:
        lines += ["", "Wrong results: " + "; ".join(f"{r.entrant} {_where(r)}: {r.detail}" for r in wrong)]
    return "\n".join(lines) + "\n"


def to_json(result: SideBySide, goal_rows: Sequence[Goal]) -> dict[str, object]:
    return {
        "shapes": result.shapes,
        "cores": result.cores,
        "precisions": result.precisions,
        "missing": result.missing,
        "peaks": {c: {p: peak.macs_per_cycle for p, peak in by.items()} for c, by in result.peaks.items()},
        "rows": [r.as_dict() for r in result.rows],
        "goals": [{"title": g.title, "status": g.status, "detail": g.detail} for g in goal_rows],
    }


def plot(result: SideBySide, path: Path) -> None:
    """Per precision: libisaforge plan / best peer (or, with no peer, % of peak) per core × shape, as a heat map."""
    plt = pyplot()
    fig, axes = plt.subplots(len(result.precisions), 1, figsize=(12, 3.2 * len(result.precisions)), squeeze=False)
    for ax, precision in zip(axes[:, 0], result.precisions, strict=True):
        grid, labels = [], []
        peerless = not any(result.best_peer(precision, s, c) for s in result.shapes for c in result.cores)
        for core in result.cores:
            row, text = [], []
            for shape in result.shapes:
                plan = result.find(precision, shape, core, PLAN.label)
                if peerless:
                    v = plan.percent_of_peak if plan is not None and plan.ranks else float("nan")
                    row.append(v / 100), text.append(f"{v:.0f}%")
                else:
                    got = _ratio(result, plan, None)
                    row.append(got[0] if got else float("nan")), text.append(f"{got[0]:.2f}" if got else "—")
            grid.append(row), labels.append(text)
        cmap, lo, hi = ("RdYlGn", 0.0, 1.0) if peerless else ("RdYlGn_r", 0.5, 1.5)
        ax.imshow(grid, cmap=cmap, vmin=lo, vmax=hi, aspect="auto")
        for i, text in enumerate(labels):
            for j, t in enumerate(text):
                ax.text(j, i, t, ha="center", va="center", fontsize=8)
        ax.set_xticks(range(len(result.shapes)), result.shapes, fontsize=8)
        ax.set_yticks(range(len(result.cores)), [SHORT.get(c, c) for c in result.cores], fontsize=8)
        what = "% of modeled peak (no peer)" if peerless else "libisaforge plan / best peer, modeled cycles"
        ax.set_title(f"{precision}: {what}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
