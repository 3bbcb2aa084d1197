"""The performance goals, checked against one run's figures: the hot loops' share of peak, the instruction ratios
between variants, the fp32 kernel's distance from its hot loop, and the plans' and quantized plans' goals."""

from __future__ import annotations

from isaforge.bench.measure.mca.analyse import GOAL_PERCENT, NO_ISA, OK, CoreResult
from isaforge.bench.measure.mca.cores import SHORT_CORE
from isaforge.bench.measure.qemu_count import RunCount
from isaforge.bench.report import plans, quantized, sme
from isaforge.bench.report.results import BenchResult, Goal

RATIO_GOAL = 0.55
IDEAL_TOLERANCE = 0.10
GOAL_SHAPE = "128x128x128"
S8_GOAL_SHAPE = "256x256x64"  # the i8mm-vs-dotprod goal's shape: s8 GEMMs whose K fills whole i8mm tiles
IDEAL_SHAPE = "256x256x64"


def _run(result: BenchResult, compiler: str, op: str, variant: str, shape: str) -> RunCount | None:
    for rc in result.plain:
        if (rc.op, rc.variant, rc.shape, rc.compiler) == (op, variant, shape, compiler):
            return rc
    return None


def _ratio_goal(
    result: BenchResult, compiler: str, title: str, num: tuple[str, str], den: tuple[str, str], shape: str = GOAL_SHAPE
) -> Goal:
    if not result.ran_qemu:
        return Goal(compiler, title, None, "QEMU counts were not run (--no-qemu)")
    a = _run(result, compiler, num[0], num[1], shape)
    b = _run(result, compiler, den[0], den[1], shape)
    if a is None or b is None:
        return Goal(compiler, title, None, f"needs {num[1]} {num[0]} and {den[1]} {den[0]} at {shape}")
    ratio = a.instructions / b.instructions
    loops = a.hot_loop_instructions_per_mac / b.hot_loop_instructions_per_mac
    kern = a.kernel_instructions / b.kernel_instructions
    detail = (
        f"{a.instructions:,} / {b.instructions:,} instructions = {ratio:.2f}× "
        f"(micro-kernels alone {kern:.2f}×, hot loops alone {loops:.2f}×; packing and driver are "
        f"{a.packing_share:.0%} of {a.kernel} and {b.packing_share:.0%} of {b.kernel})"
    )
    return Goal(compiler, title, ratio <= RATIO_GOAL, detail)


def evaluate_goals(result: BenchResult) -> list[Goal]:
    goals = []
    for compiler in result.compilers:
        title = f"every hot loop ≥ {GOAL_PERCENT:.0f}% of modeled peak on each modeled core with its ISA"
        if not result.ran_mca:
            goals.append(Goal(compiler, title, None, "llvm-mca was not run (--no-mca)"))
        else:
            rows = [r for r in result.mca if r.compiler == compiler and r.status != NO_ISA]
            misses = [r for r in rows if not r.meets_goal]
            if misses:
                per_kernel: dict[str, list[CoreResult]] = {}
                for r in misses:
                    per_kernel.setdefault(r.kernel, []).append(r)
                parts = []
                for kernel, rs in per_kernel.items():
                    found = [r for r in rs if r.status == OK]
                    cores = ", ".join(SHORT_CORE[r.core] for r in found)
                    if found:
                        lo, hi = min(r.percent_of_peak for r in found), max(r.percent_of_peak for r in found)
                        span = f"{lo:.1f}%" if f"{lo:.1f}" == f"{hi:.1f}" else f"{lo:.1f}–{hi:.1f}%"
                        parts.append(f"{kernel} {span} ({cores})")
                    if len(found) < len(rs):
                        parts.append(f"{kernel}: hot loop not found")
                detail = f"{len(rows) - len(misses)} of {len(rows)} pass; below: " + "; ".join(parts)
            else:
                lowest = min(rows, key=lambda r: r.percent_of_peak, default=None)
                detail = f"all {len(rows)} pass" + (
                    f" (lowest {lowest.percent_of_peak:.1f}%, {lowest.kernel} on {lowest.core})" if lowest else ""
                )
            goals.append(Goal(compiler, title, not misses if rows else None, detail))
        goals.append(
            _ratio_goal(
                result,
                compiler,
                f"i8mm GEMM ≤ {RATIO_GOAL}× the executed instructions of dotprod GEMM at {S8_GOAL_SHAPE} (s8)",
                ("gemm_s8", "i8mm"),
                ("gemm_s8", "dotprod"),
                S8_GOAL_SHAPE,
            )
        )
        goals.append(
            _ratio_goal(
                result,
                compiler,
                f"bf16 (bfmmla) GEMM ≤ {RATIO_GOAL}× the executed instructions of fp16 (fmla .8h) GEMM at 128³",
                ("gemm_bf16", "bf16"),
                ("gemm_f16", "fp16"),
            )
        )
        title = f"fp32 NEON {IDEAL_SHAPE} instructions per MAC within {IDEAL_TOLERANCE:.0%} of the hot-loop ideal"
        rc = _run(result, compiler, "gemm_f32", "neon", IDEAL_SHAPE) if result.ran_qemu else None
        if rc is None or not rc.hot_loop_instructions_per_mac:
            goals.append(Goal(compiler, title, None, f"needs the neon gemm_f32 QEMU count at {IDEAL_SHAPE}"))
        else:
            ideal = rc.hot_loop_instructions_per_mac
            over = rc.instructions_per_mac / ideal - 1
            base = ideal * rc.useful_macs  # instructions if only the hot loop ran, on the useful MACs
            padding = ideal * (rc.padded_macs - rc.useful_macs) / base
            tiles = (rc.kernel_instructions - ideal * rc.padded_macs) / base
            packing = (rc.instructions - rc.kernel_instructions) / base
            detail = (
                f"{rc.instructions_per_mac:.4f} executed vs {ideal:.4f} in the hot loop (+{over:.0%}): "
                f"packing and driver +{packing:.0%}, kernel code outside the hot loop (tile set-up and stores) "
                f"+{tiles:.0%}, edge-tile padding +{padding:.0%}"
            )
            goals.append(Goal(compiler, title, over <= IDEAL_TOLERANCE, detail))
        goals += _plan_goals(result, compiler)
        for q in (q for q in result.quantized if q.compiler == compiler):
            goals += [Goal(compiler, title, met, detail) for title, met, detail in quantized.goals(q)]
        sme_rows = [r for r in result.sme if r.run.compiler == compiler]
        goals += [Goal(compiler, title, met, detail) for title, met, detail in sme.goals(sme_rows)]
    return goals


def _plan_goals(result: BenchResult, compiler: str) -> list[Goal]:
    runs = [rc for rc in result.qemu if rc.compiler == compiler]
    ep = plans.epilogue_rows(runs, [compiler], result.epilogue_shape)
    small = plans.small_m_rows(runs, [compiler], result.plan_shapes)
    found = [plans.epilogue_goal(ep, result.epilogue_shape), *plans.small_m_goals(small)]
    if not result.ran_plans:
        why = "QEMU counts were not run (--no-qemu)" if not result.ran_qemu else "plans were not run (--no-plans)"
        return [Goal(compiler, title, None, why) for title, _met, _detail in found]
    return [Goal(compiler, title, met, detail) for title, met, detail in found]
