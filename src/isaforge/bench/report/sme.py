"""The SME section of the bench report: the streaming kernels' plan runs per streaming vector length, their executed
instructions per MAC beside those of the best non-SME kernel on the same emulated `max`. Takes bench.scenarios.sme's
rows; runs nothing. How the figures are counted, and what they do not say: docs/bench.md."""

from __future__ import annotations

from collections.abc import Sequence

from isaforge import ui
from isaforge.bench.report import METHOD
from isaforge.bench.scenarios.sme import SmeRow
from isaforge.catalogue import load

HEADS = ["Build", "Op", "Kernel", "Shape", "SVL (bytes)", "NR", "Instr/MAC (run)", "Goal", "Instr/MAC (hot loop)",
         "Outer products", "Non-SME kernel", "Its instr/MAC (run)", "Its instr/MAC (hot loop)"]  # fmt: skip

# Issue 32's goals: executed instructions per MAC of a whole plan run at SVL 16 / 32 / 64 bytes, the figures the best
# public SME2 kernels reach on the same emulator.
GOALS: dict[tuple[str, str], dict[int, float]] = {
    ("gemm_f32", "256x256x256"): {16: 0.10, 32: 0.028, 64: 0.0083},
    ("gemm_f32", "1x1024x1024"): {16: 0.34, 32: 0.17, 64: 0.084},
    **{(op, "256x256x256"): {16: 0.058, 32: 0.017, 64: 0.0054} for op in ("gemm_f16", "gemm_bf16")},
    **{(op, "1x1024x1024"): {16: 0.17, 32: 0.085, 64: 0.043} for op in ("gemm_f16", "gemm_bf16")},
    **{(op, "256x256x256"): {16: 0.074, 32: 0.037, 64: 0.027} for op in ("gemm_qd8_f32", "gemm_qd8_f32_qc4w")},
    **{(op, "1x1024x1024"): {16: 0.086, 32: 0.046, 64: 0.026} for op in ("gemm_qd8_f32", "gemm_qd8_f32_qc4w")},
}


def goal_of(r: SmeRow) -> float | None:
    return GOALS.get((r.run.op, r.run.shape), {}).get(r.svl)


def met(r: SmeRow) -> bool | None:
    """At or below the goal with C right and every MAC executed; None: no goal for the row."""
    goal = goal_of(r)
    ok = r.run.mac_check_ok and not r.run.wrong
    return None if goal is None else ok and r.run.instructions_per_mac <= goal


def goals(rows: Sequence[SmeRow]) -> list[tuple[str, bool | None, str]]:
    """One goal per op and shape of the table above that the rows cover: every SVL of it met by the op's kernel of the
    most preferred streaming variant."""
    out = []
    for (op, shape), per_svl in GOALS.items():
        mine = [r for r in rows if (r.run.op, r.run.shape) == (op, shape) and r.svl in per_svl]
        if not mine:
            continue
        # the goal is the op's SME path: the kernels of the variant dispatch prefers (SME2's over SME1's)
        best = max(load().variant(r.run.variant).rank for r in mine)
        mine = [r for r in mine if load().variant(r.run.variant).rank == best]
        title = (
            f"SME plan run, {op} at {shape}: executed instructions per MAC ≤ "
            + " / ".join(f"{g}" for g in per_svl.values())
            + f" at SVL {' / '.join(map(str, per_svl))} bytes"
        )
        detail = ", ".join(f"SVL {r.svl}: {r.run.instructions_per_mac:.4f} ({r.run.kernel})" for r in mine)
        out.append((title, all(met(r) for r in mine), detail))
    return out


def _row(r: SmeRow) -> list[str]:
    rc, b = r.run, r.baseline
    mark = "" if rc.mac_check_ok and not rc.wrong else " ✗"
    goal = goal_of(r)
    verdict = "—" if goal is None else f"≤ {goal}: {'met' if met(r) else '**NOT met**'}"
    return [
        rc.compiler, rc.op, f"`{rc.kernel}`", rc.shape, str(r.svl), str(r.nr), f"{rc.instructions_per_mac:.4f}{mark}",
        verdict, f"{rc.hot_loop_instructions_per_mac:.4f}", f"{100 * r.outer_product_share:.1f}%",
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
    out += [ui.markdown_table(HEADS, [_row(r) for r in rows], "lllllrrlrrlrr"), ""]
    return [*out, _sanity(rows), ""]


def to_json(rows: Sequence[SmeRow]) -> list[dict[str, object]]:
    return [{"compiler": r.run.compiler, **r.as_dict()} for r in rows]
