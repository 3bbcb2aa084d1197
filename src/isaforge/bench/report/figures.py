"""libisaforge's bench figures as JSON and as a bar chart of % of peak per kernel and core."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from isaforge.bench.measure.mca.analyse import GOAL_PERCENT, OK
from isaforge.bench.report import plans, quantized, sme
from isaforge.bench.report.results import BenchResult, Goal
from isaforge.errors import IsaforgeError


def to_json(result: BenchResult, goals: Sequence[Goal]) -> dict[str, object]:
    peaks = {
        c: [{**asdict(p), "issue_rate": p.issue_rate, "macs_per_cycle": p.macs_per_cycle} for p in ps]
        for c, ps in result.peaks.items()
    }
    return {
        "command": result.command,
        "compilers": result.compilers,
        "cores": result.cores,
        "shapes": result.shapes,
        "sve_bits": result.sve_bits,
        "tools": result.tools,
        "core_map": result.core_map,
        "core_isa": result.core_isa,
        "peaks": peaks,
        "hot_loops": [asdict(h) for h in result.hot_loops],
        "mca": [{**asdict(r), "meets_goal": r.meets_goal} for r in result.mca],
        "qemu": [rc.as_dict() for rc in result.qemu],
        "plans": plans.to_json(result.qemu, result.compilers, result.plan_shapes, result.epilogue_shape, result.before)
        if result.ran_plans
        else None,
        "quantized": [quantized.to_json(q) for q in result.quantized],
        "sme": sme.to_json(result.sme),
        "goals": [{**asdict(g), "status": g.status} for g in goals],
        "seconds": round(result.seconds, 1),
    }


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (chosen before pyplot loads), or a one-line error naming the extra."""
    try:  # optional dependency
        import matplotlib as mpl  # noqa: PLC0415

        mpl.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError as exc:
        raise IsaforgeError("--plot needs matplotlib; install it with pip install 'isaforge[bench]'") from exc
    return plt


def plot(result: BenchResult, path: Path) -> None:
    """Bar chart: % of modeled peak per kernel, one bar per core, one panel per compiler."""
    plt = pyplot()
    if not result.ran_mca:
        raise IsaforgeError("--plot shows the llvm-mca figures; drop --no-mca")
    fig, axes = plt.subplots(len(result.compilers), 1, figsize=(13, 4.5 * len(result.compilers)), squeeze=False)
    width = 0.8 / max(1, len(result.cores))
    for ax, compiler in zip(axes[:, 0], result.compilers, strict=True):
        kernels = [h.kernel for h in result.hot_loops if h.compiler == compiler]
        for n, core in enumerate(result.cores):
            values = []
            for kernel in kernels:
                r = next((r for r in result.mca if (r.compiler, r.kernel, r.core) == (compiler, kernel, core)), None)
                values.append(r.percent_of_peak if r is not None and r.status == OK else 0.0)
            xs = [i + (n - (len(result.cores) - 1) / 2) * width for i in range(len(kernels))]
            ax.bar(xs, values, width, label=core)
        ax.axhline(GOAL_PERCENT, color="black", linestyle="--", linewidth=1, label=f"goal {GOAL_PERCENT:.0f}%")
        ax.set_xticks(range(len(kernels)), kernels, rotation=30, ha="right", fontsize=8)
        ax.set_ylim(0, 125)
        ax.set_yticks(range(0, 101, 20))
        ax.set_ylabel("% of modeled peak")
        ax.set_title(f"Hot-loop efficiency (llvm-mca-19), {compiler}; missing bar: core lacks the ISA")
        ax.legend(fontsize=8, ncol=len(result.cores) + 1, loc="upper center")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
