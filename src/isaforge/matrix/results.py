"""What a matrix run found: test outcomes per cell and CPU model, read from the JUnit XML pytest writes for each
cell (pytest's machine-readable report, not its console text)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from isaforge.catalogue import load
from isaforge.matrix.definition import Cell

NATIVE = "native"  # the "CPU model" column of a host cell
OTHER = "(other)"  # tests of a cross cell that run on no CPU model (name checks, ...)


@dataclass
class Tally:
    """Test outcomes and time of one cell on one CPU model (or the cell's build step)."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.passed > 0


@dataclass
class CellResult:
    cell: Cell
    status: str  # passed | failed | unavailable | build failed
    detail: str = ""
    build_seconds: float = 0.0
    test_seconds: float = 0.0
    per_cpu: dict[str, Tally] = field(default_factory=dict)
    junit: Path | None = None
    log: Path | None = None

    @property
    def ok(self) -> bool:
        return self.status == "passed"


def cpu_of(test_name: str, cpus: Sequence[str]) -> str | None:
    """The CPU model in a test id such as `test_x[aarch64-linux-gnu-gcc@cortex-a53-gemm_f32]`, or None."""
    params = test_name.partition("[")[2]
    at = params.find("@")
    if at < 0:
        return None
    rest = params[at + 1 :]
    for cpu in sorted(cpus, key=len, reverse=True):
        if rest.startswith(cpu) and rest[len(cpu) : len(cpu) + 1] in ("", "-", "]", ","):
            return cpu
    return None


def tally_junit(path: Path, cell: Cell) -> dict[str, Tally]:
    """Per CPU model (NATIVE for the host, OTHER for tests on no model), from pytest's JUnit XML; empty when pytest
    left none or a truncated one (killed while writing it)."""
    try:
        cases = list(ET.parse(path).getroot().iter("testcase"))
    except (OSError, ET.ParseError):
        return {}
    every_cpu = [cpu for models in load().cpus.values() for cpu in models]
    out: dict[str, Tally] = {}
    for case in cases:
        cpu = NATIVE if cell.is_host else cpu_of(case.get("name", ""), every_cpu) or OTHER
        t = out.setdefault(cpu, Tally())
        t.seconds += float(case.get("time", "0") or 0)
        if case.find("failure") is not None or case.find("error") is not None:
            t.failed += 1
        elif case.find("skipped") is not None:
            t.skipped += 1
        else:
            t.passed += 1
    order = [*cell.cpus, NATIVE, OTHER]
    return dict(sorted(out.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


@dataclass
class Run:
    results: list[CellResult]
    seconds: float
    allow_unavailable: bool

    @property
    def ok(self) -> bool:
        ran = [r for r in self.results if r.status != "unavailable"]
        if not ran:
            return False
        return all(r.ok or (r.status == "unavailable" and self.allow_unavailable) for r in self.results)
