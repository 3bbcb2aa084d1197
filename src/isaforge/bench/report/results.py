"""What one `isaforge bench` run of libisaforge found: the figures the goals, the markdown and the JSON are made from,
and the goals' verdicts."""

from __future__ import annotations

from dataclasses import dataclass, field

from isaforge.bench.measure.mca.analyse import CoreResult, KernelLoop, Peak
from isaforge.bench.measure.qemu_count import PLAIN, RunCount
from isaforge.bench.report import plans
from isaforge.bench.scenarios.qplans import QuantResult
from isaforge.bench.scenarios.sme import SmeRow


@dataclass
class HotLoop:
    """A kernel's hot loop as found in one build's object code."""

    compiler: str
    kernel: str
    kind: str | None
    start: int | None  # offsets from the function's entry
    end: int | None
    instructions: int
    mac_instructions: int
    macs_at_128: int  # per iteration, SVE at 128-bit

    @classmethod
    def of(cls, compiler: str, kl: KernelLoop) -> HotLoop:
        loop = kl.loop
        return cls(
            compiler,
            kl.kernel.name,
            kl.kind,
            loop.start - kl.function_start if loop else None,
            loop.end - kl.function_start if loop else None,
            len(loop.body) if loop else 0,
            kl.loop_mac_instructions,
            kl.loop_macs(128),
        )


@dataclass
class BenchResult:
    command: str
    compilers: list[str]
    cores: list[str]
    shapes: list[str]
    sve_bits: int
    tools: dict[str, str] = field(default_factory=dict)
    core_map: list[dict[str, str]] = field(default_factory=list)
    core_isa: dict[str, list[str]] = field(default_factory=dict)
    peaks: dict[str, list[Peak]] = field(default_factory=dict)  # per compiler
    hot_loops: list[HotLoop] = field(default_factory=list)
    mca: list[CoreResult] = field(default_factory=list)
    qemu: list[RunCount] = field(default_factory=list)
    ran_mca: bool = True
    ran_qemu: bool = True
    seconds: float = 0.0
    ran_plans: bool = False
    plan_shapes: list[str] = field(default_factory=list)
    epilogue_shape: str = plans.DEFAULT_EPILOGUE_SHAPE
    before: plans.Before | None = None
    quantized: list[QuantResult] = field(default_factory=list)  # per compiler, when quantized ops were chosen
    sme: list[SmeRow] = field(default_factory=list)  # the streaming kernels' runs per SVL (none built: empty)

    @property
    def plain(self) -> list[RunCount]:
        """The one-call API's runs (the plan runs are in the Plans section)."""
        return [rc for rc in self.qemu if rc.mode == PLAIN]


@dataclass
class Goal:
    compiler: str
    title: str
    met: bool | None  # None: not evaluated (the run left out what it needs)
    detail: str

    @property
    def status(self) -> str:
        return {True: "met", False: "NOT met", None: "not evaluated"}[self.met]
