"""An engine's kernels priced per core (`isaforge bench --project`): the markdown table and the JSON, from the figures
alone. How a hot loop is priced is docs/bench.md's business; the report says what was priced, on what, with what."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from isaforge import ui
from isaforge.bench.measure.mca.analyse import NO_HOT_LOOP, NO_ISA, OK, CoreResult
from isaforge.bench.measure.mca.cores import SHORT_CORE
from isaforge.bench.scenarios.engine import EngineBuildResult, EngineResult


def cell(row: CoreResult, needs: frozenset[str], core_isa: list[str]) -> str:
    """One kernel on one core: % of peak and cycles per iteration; what the core lacks when it cannot run it."""
    if row.status == NO_ISA:
        return f"— no {'+'.join(sorted(needs - set(core_isa)))}"
    if row.status == NO_HOT_LOOP:
        return "no hot loop"
    cycles = f"{row.cycles_per_iteration:.2f} c/iter"
    return f"{row.percent_of_peak:.1f}% ({cycles})" if row.status == OK else cycles


def _table(result: EngineResult, build: EngineBuildResult) -> list[str]:
    rows = []
    for kl in build.loops:
        k = kl.kernel
        mine = {r.core: r for r in build.rows if r.kernel == k.name}
        loop = f"{len(kl.loop.body)} instr" if kl.loop else "not found"
        cells = [cell(mine[c], kl.features, result.core_isa.get(c, [])) for c in result.cores]
        rows.append([f"`{k.name}`", k.variant, f"`{kl.kind or '-'}`", loop, *cells])
    heads = ["Kernel", "Variant", "MAC kind", "Hot loop", *(SHORT_CORE.get(c, c) for c in result.cores)]
    return [ui.markdown_table(heads, rows, "llll" + "r" * len(result.cores))]


def markdown(result: EngineResult, command: str) -> str:
    out = [f"# {result.project}: hot loops per core", "", f"`{command}`", ""]
    out += [", ".join(f"{tool} {version}" for tool, version in result.tools.items()), ""]
    for build in result.builds:
        out += [f"## {build.compiler}", "", f"Build: `{build.builddir}`", ""]
        out += _table(result, build)
        out += ["", "Cells: % of the core's peak for the loop's MAC kind (llvm-mca cycles per loop iteration); "
                "cycles alone for a loop without MACs; `— no X`: the core lacks feature X, not priced. How the hot "
                "loop is found and priced: docs/bench.md in isaforge's sources."]  # fmt: skip
        if build.skipped:
            out += ["", "Not priced:", ""]
            out += [f"- `{s.kernel.name}`: {s.why}" for s in build.skipped]
        out.append("")
    return "\n".join(out)


def to_json(result: EngineResult, command: str) -> dict[str, Any]:
    return {
        "project": result.project,
        "command": command,
        "cores": result.cores,
        "core_isa": result.core_isa,
        "tools": result.tools,
        "builds": [
            {
                "compiler": b.compiler,
                "builddir": b.builddir,
                "kernels": [asdict(r) for r in b.rows],
                "peaks": [asdict(p) for p in b.peaks],
                "skipped": [{"kernel": s.kernel.name, "why": s.why} for s in b.skipped],
            }
            for b in result.builds
        ],
    }
