"""Running llvm-mca-19 on a piece of assembler and reading its --json report: the simulated cycles, and how busy
each unit of the core's scheduling model is, in total and per instruction."""

from __future__ import annotations

import json
from dataclasses import dataclass

from isaforge.bench import run_tool
from isaforge.errors import IsaforgeError

LLVM_MCA = "llvm-mca-19"
ITERATIONS = 500


@dataclass(frozen=True)
class McaResult:
    iterations: int
    instructions: int
    total_cycles: int
    block_rthroughput: float
    units: tuple[str, ...]  # the scheduling model's units, e.g. N1UnitV0, N1UnitD.0 (unit 0 of the D group)
    pressure: tuple[float, ...]  # per unit, cycles per iteration
    by_insn: tuple[tuple[str, tuple[float, ...]], ...]  # (instruction, pressure per unit)

    @property
    def cycles_per_iteration(self) -> float:
        return self.total_cycles / self.iterations

    def unit_pressure(self) -> dict[str, float]:
        """Resource name (a unit, or a group of like units) → busiest unit's cycles per iteration."""
        out: dict[str, float] = {}
        for unit, p in zip(self.units, self.pressure, strict=True):
            name = resource_of(unit)
            out[name] = max(out.get(name, 0.0), p)
        return out


def resource_of(unit: str) -> str:
    return unit.partition(".")[0]


def _unit_name(raw: str) -> str:
    # LLVM 19 writes the index of a unit within its group as a raw character after the dot ("N1UnitD.\u0001").
    name, dot, index = raw.partition(".")
    return f"{name}.{ord(index)}" if dot and len(index) == 1 else raw


def parse_mca(text: str) -> McaResult:
    """llvm-mca's --json report of one code region: the summary, and resource pressure per iteration in total and per
    instruction (the row after the last instruction holds the totals)."""
    try:
        report = json.loads(text)
        region = report["CodeRegions"][0]
        units = tuple(_unit_name(r) for r in report["TargetInfo"]["Resources"])
        summary = region["SummaryView"]
        insns = region["Instructions"]
        cells = region["ResourcePressureView"]["ResourcePressureInfo"]
    except (json.JSONDecodeError, KeyError, IndexError, TypeError) as exc:
        raise IsaforgeError(f"llvm-mca --json output is not a report of one code region ({exc!r})") from None
    rows = [[0.0] * len(units) for _ in range(len(insns) + 1)]
    for cell in cells:
        rows[cell["InstructionIndex"]][cell["ResourceIndex"]] += float(cell["ResourceUsage"])
    return McaResult(
        int(summary["Iterations"]),
        int(summary["Instructions"]),
        int(summary["TotalCycles"]),
        float(summary["BlockRThroughput"]),
        units,
        tuple(rows[-1]),
        tuple((insn, tuple(row)) for insn, row in zip(insns, rows, strict=False)),
    )


def run_mca(source: str, core: str, mattr: str, iterations: int = ITERATIONS) -> McaResult:
    cmd = [LLVM_MCA, "--json", "-mtriple=aarch64", f"-mcpu={core}", f"-iterations={iterations}"]
    if mattr:
        cmd.append(f"-mattr={mattr}")
    return parse_mca(run_tool(cmd, f"llvm-mca on {core}", stdin=source))
