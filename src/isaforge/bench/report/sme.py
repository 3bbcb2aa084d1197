"""The SME section of the bench report: the streaming kernels' plan runs per streaming vector length, their executed
instructions per MAC beside those of the best non-SME kernel on the same emulated `max`. Takes bench.scenarios.sme's
rows; runs nothing. How the figures are counted, and what they do not say: docs/bench.md."""

from __future__ import annotations

from collections.abc import Sequence

from isaforge import ui
from isaforge.bench.report import METHOD
from isaforge.bench.scenarios.sme import SmeRow

HEADS = ["Build", "Op", "Kernel", "Shape", "SVL (bytes)", "NR", "Instr/MAC (run)", "Instr/MAC (hot loop)",
         "Outer products", "Non-SME kernel", "Its instr/MAC (run)", "Its instr/MAC (hot loop)"]  # fmt: skip


def _row(r: SmeRow) -> list[str]:
    rc, b = r.run, r.baseline
    mark = "" if rc.mac_check_ok and not rc.wrong else " ✗"
    return [
        rc.compiler, rc.op, f"`{rc.kernel}`", rc.shape, str(r.svl), str(r.nr), f"{rc.instructions_per_mac:.3f}{mark}",
        f"{rc.hot_loop_instructions_per_mac:.3f}", f"{100 * r.outer_product_share:.1f}%",
        f"`{b.kernel}`" if b else "—", f"{b.instructions_per_mac:.3f}" if b else "—",
        f"{b.hot_loop_instructions_per_mac:.3f}" if b else "—",
    ]  # fmt: skip


def _sanity(rows: Sequence[SmeRow]) -> str:
    bad = [r for r in rows if not r.run.mac_check_ok or r.run.wrong]
    said = f"In {len(rows) - len(bad)} of {len(rows)} runs the outer products executed exactly the MACs of M·N·K "
    said += "rounded up to whole MR×NR tiles (rows past MR predicated off, not counted) and C was right"
    if bad:
        said += ": " + ", ".join(f"{r.run.kernel} {r.run.shape} SVL {r.svl}" for r in bad) + " not (✗)"
    return said + "."


def markdown(rows: Sequence[SmeRow]) -> list[str]:
    """The section's lines; none when no streaming kernel was run."""
    if not rows:
        return []
    out = ["## SME: executed instructions per streaming vector length (QEMU)", ""]
    out += [
        "One plan run (isf_gemm_run alone, the weights packed at create, A's packing included) per streaming kernel, "
        "shape and SVL under the SME QEMU's `-cpu max,sme_fa64=off,sme-default-vector-length=SVL`, beside the same "
        "plan run on the op's best non-SME kernel on `max` (SVE at 128 bits). llvm-mca has no SME model: these are "
        f"executed instructions, not cycles, and an outer product is one multi-cycle instruction ([docs/bench.md]"
        f"({METHOD})). Outer products: their share of all instructions executed in libisaforge during the run.",
        "",
    ]
    out += [ui.markdown_table(HEADS, [_row(r) for r in rows], "lllllrrrrlrr"), ""]
    return [*out, _sanity(rows), ""]


def to_json(rows: Sequence[SmeRow]) -> list[dict[str, object]]:
    return [{"compiler": r.run.compiler, **r.as_dict()} for r in rows]
