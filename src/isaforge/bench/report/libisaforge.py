"""libisaforge's bench report as markdown: the goals, the cores and peaks, the hot loops, the executed
instructions, the plans and the quantized plans. Per-run facts only: how each figure is measured is docs/bench.md."""

from __future__ import annotations

from collections.abc import Sequence

from isaforge import ui
from isaforge.bench.measure.mca.analyse import GOAL_PERCENT, NO_HOT_LOOP, NO_ISA, OK, CoreResult, Peak
from isaforge.bench.measure.mca.cores import CORES, SHORT_CORE, SVE_BITS
from isaforge.bench.measure.qemu_count import PLAIN, RunCount
from isaforge.bench.report import METHOD, plans, quantized, sme
from isaforge.bench.report.results import BenchResult, Goal


def _pct_cell(r: CoreResult | None) -> str:
    if r is None:
        return ""
    if r.status == NO_ISA:
        return "—"
    if r.status == NO_HOT_LOOP:
        return "hot loop not found"
    if r.status != OK:
        return f"{r.cycles_per_iteration:.2f} cycles/iter, no peak"
    mark = "" if r.meets_goal else " ✗"
    return f"{r.percent_of_peak:.1f}% ({r.macs_per_cycle:.1f}){mark}"


def _mca_section(result: BenchResult, compiler: str) -> list[str]:
    out = [f"### Hot loops, {compiler}", ""]
    loops = [h for h in result.hot_loops if h.compiler == compiler]
    rows = []
    for h in loops:
        cells = [next((r for r in result.mca if (r.compiler, r.kernel, r.core) == (compiler, h.kernel, c)), None)
                 for c in result.cores]  # fmt: skip
        where = f"0x{h.start:x}–0x{h.end:x}" if h.start is not None else "not found"
        rows.append(
            [f"`{h.kernel}`", f"`{h.kind or '-'}`", where, h.instructions, h.mac_instructions, h.macs_at_128]
            + [_pct_cell(c) for c in cells]
        )
    heads = ["Kernel", "MAC kind", "Hot loop (offsets)", "Instr", "MAC instr", "MACs/iter @128b"]
    heads += [f"{SHORT_CORE[c]} % of peak (MACs/cycle)" for c in result.cores]
    out += [ui.markdown_table(heads, rows, "lllrrr" + "r" * len(result.cores)), ""]
    out.append("`—`: the core lacks the variant's ISA. `✗`: below the 95% goal.")
    misses = [r for r in result.mca if r.compiler == compiler and r.status == "ok" and not r.meets_goal]
    if misses:
        out += ["", f"Below {GOAL_PERCENT:.0f}%, with llvm-mca's resource view:", ""]
        rows = [
            [f"`{r.kernel}`", r.core, f"{r.percent_of_peak:.1f}%", f"{GOAL_PERCENT - r.percent_of_peak:.1f} points",
             f"{r.cycles_per_iteration:.2f}", f"{r.macs_per_iteration / r.peak_macs_per_cycle:.2f}", r.bottleneck]
            for r in misses
        ]  # fmt: skip
        heads = ["Kernel", "Core", "% of peak", "Short by", "Cycles/iter", "Cycles/iter at peak", "Why"]
        out.append(ui.markdown_table(heads, rows, "llrrrrl"))
    out.append("")
    return out


def _qemu_section(result: BenchResult, compiler: str) -> list[str]:
    runs = [rc for rc in result.plain if rc.compiler == compiler]
    out = [f"### Executed instructions, {compiler}", ""]
    rows = [
        [f"`{rc.kernel}`", rc.shape, f"{rc.instructions:,}", f"{rc.instructions_per_mac:.4f}",
         f"{rc.hot_loop_instructions_per_mac:.4f}", f"{rc.mac_share:.1%}", f"{rc.loads_per_mac:.4f}",
         f"{rc.packing_share:.1%}", f"{rc.mac_check:.4f}" + ("" if rc.mac_check_ok else " ✗"),
         _libc_cell(rc)]
        for rc in runs
    ]  # fmt: skip
    heads = ["Kernel", "M×N×K", "Instructions", "Instr/MAC", "Hot-loop instr/MAC", "MAC instr share", "Loads/MAC",
             "Packing+driver share", "MAC check", "In libc calls"]  # fmt: skip
    out += [ui.markdown_table(heads, rows, "llrrrrrrrr"), ""]
    return out


def _libc_share(rc: RunCount) -> float:
    """The instructions run inside libisaforge's calls out, as a share of the whole run's."""
    return rc.libc_instructions / (rc.instructions + rc.libc_instructions or 1)


def _libc_cell(rc: RunCount) -> str:
    return f"{rc.libc_instructions:,} ({_libc_share(rc):.2%})" if rc.libc_instructions else "0"


def _libc_span(runs: Sequence[RunCount]) -> str:
    """How many instructions the runs' libc calls ran, least and most, beside the runs' own."""
    shares = [(rc.libc_instructions, _libc_share(rc)) for rc in runs]
    (least, least_share), (most, most_share) = min(shares), max(shares)
    if not most:
        return "No instructions ran inside libc calls."
    return (
        f"Instructions run inside those calls, apart from libisaforge's: {least:,} ({least_share:.2%} of the run) "
        f"to {most:,} ({most_share:.2%})."
    )


def _oracle_sentence(runs: Sequence[RunCount]) -> str:
    """Every counted run's C went through the tests' oracle: a count of a GEMM that skipped work means nothing."""
    wrong = [rc for rc in runs if rc.wrong]
    if not wrong:
        return f"C was right (isaforge.gemmjob's oracle, epilogue applied) in all {len(runs)} counted runs."
    names = ", ".join(f"{rc.kernel} {rc.shape} {rc.mode}" for rc in wrong)
    return f"C was **wrong** (isaforge.gemmjob's oracle) in {len(wrong)} of {len(runs)} counted runs: {names}."


def _calls_out_sentence(
    runs: Sequence[RunCount],
    lead: str = "Calls out of libisaforge (to libc; the instructions run inside them are the *In libc calls* column)",
) -> str:
    """What libisaforge called outside its own code, grouped by runs that called the same."""
    groups: dict[tuple[tuple[str, int], ...], list[RunCount]] = {}
    for rc in runs:
        groups.setdefault(tuple(sorted(rc.calls_out.items())), []).append(rc)
    parts = []
    for calls, rcs in sorted(groups.items(), key=lambda g: -len(g[1])):
        what = ", ".join(f"{name} ×{n}" for name, n in calls) if calls else "nothing"
        if len(groups) == 1:
            who = f"in each of the {len(rcs)} runs" if len(rcs) > 1 else "in the run"
        elif len(rcs) > 3:
            who = f"in {len(rcs)} runs"
        else:
            who = "in " + ", ".join(f"{rc.kernel} {rc.shape} {rc.mode} ({rc.compiler})" for rc in rcs)
        parts.append(f"{what} {who}")
    return f"{lead}: " + "; ".join(parts) + "."


def markdown(result: BenchResult, goals: Sequence[Goal]) -> str:
    out = [
        "# libisaforge performance",
        "",
        f"Regenerate with `{result.command}` (took {result.seconds:.0f} s on this machine).",
        "",
        f"How each figure is measured, what it counts and what it leaves out: [docs/bench.md]({METHOD}). Tools: "
        + "; ".join(f"{k}: {v}" for k, v in result.tools.items())
        + ".",
        "",
        "## Goals",
        "",
    ]
    rows = [[g.compiler, g.title, f"**{g.status}**", g.detail] for g in goals]
    out += [ui.markdown_table(["Build", "Goal", "Status", "Figures"], rows), ""]
    if result.ran_qemu:
        counted = [rc for rc in result.qemu if rc.counted]
        bad = [rc for rc in counted if not rc.mac_check_ok]
        out += [
            f"Sanity: in {len(counted) - len(bad)} of {len(counted)} QEMU runs the MAC instructions "
            "executed exactly the MACs of M·N·K rounded up to whole MR×NR×KR tiles"
            + (
                ": " + ", ".join(f"{rc.kernel} {rc.shape} {rc.mode} ({rc.mac_check:.4f})" for rc in bad) + " do not"
                if bad
                else ""
            )
            + "; QEMU's instruction words matched llvm-objdump's at every executed address; "
            + _oracle_sentence(counted)
            + " "
            + _calls_out_sentence(result.plain)
            + "".join(f" {line}" for line in map(quantized.sanity, result.quantized) if line),
            "",
        ]
    if result.ran_mca:
        out += _cores_section(result)
        out += ["## Modeled efficiency of the hot loops (llvm-mca)", ""]
        out += [f"Cells: % of peak (MACs/cycle); how a hot loop is found and priced: [docs/bench.md]({METHOD}).", ""]
        for compiler in result.compilers:
            out += _mca_section(result, compiler)
    if result.ran_qemu:
        out += ["## Executed instructions (QEMU)", ""]
        out += [
            f"One GEMM per op, variant and shape under `qemu-aarch64 -cpu max,sve-default-vector-length="
            f"{result.sve_bits // 8}` (SVE at {result.sve_bits} bits); what each column counts: "
            f"[docs/bench.md]({METHOD}).",
            "",
        ]
        for compiler in result.compilers:
            out += _qemu_section(result, compiler)
    if result.ran_plans:
        out += plans.markdown(result.qemu, result.compilers, result.plan_shapes, result.epilogue_shape, result.before)
        counted = [rc for rc in result.qemu if rc.mode != PLAIN and rc.counted]
        if counted:  # the plan tables count libisaforge's own instructions: what its libc calls ran is said here
            lead = "Calls out of libisaforge during the counted plan runs (isf_gemm_run alone)"
            out += [f"{_calls_out_sentence(counted, lead)} {_libc_span(counted)}", ""]
    for q in result.quantized:
        out += quantized.markdown(q, result.mca, result.cores if result.ran_mca else [])
    out += sme.markdown(result.sme)
    out += _notes(result)
    return "\n".join(out).rstrip() + "\n"


def _cores_section(result: BenchResult) -> list[str]:
    out = ["## Cores and peaks", ""]
    rows = [[r["name"], f"`{r['mcpu']}`", r["llvm_model"], f"`{r['modeled_as']}`", r["note"]] for r in result.core_map]
    out += [f"The cores modeled, their ISA and their peaks, measured as [docs/bench.md]({METHOD}) says.", ""]
    out += [ui.markdown_table(["Core", "LLVM -mcpu", "LLVM 19 model", "Modeled as", "Note"], rows), ""]
    rows = [[f"`{c}`", " ".join(result.core_isa.get(c, [])), SVE_BITS[c] or "—"] for c in result.cores]
    out += [ui.markdown_table(["Core", "ISA", "SVE bits"], rows, "llr"), ""]
    seen: dict[tuple[str, str, str], Peak] = {}
    for compiler in result.compilers:
        for p in result.peaks.get(compiler, []):
            seen.setdefault((p.core, p.kind, p.mattr), p)
    rows = [
        [f"`{p.core}`", f"`{p.kind}`", p.stream, f"{p.issue_rate:.2f}", f"{p.macs / p.mac_instructions:g}",
         f"{p.macs_per_cycle:.2f}", f"`{p.mattr}`"]
        for p in sorted(seen.values(), key=lambda p: (CORES.index(p.core), p.kind, p.mattr))
    ]  # fmt: skip
    heads = ["Core", "MAC kind", "Reference stream", "MAC instr/cycle", "MACs/instr", "Peak MACs/cycle", "-mattr"]
    out += [ui.markdown_table(heads, rows, "lllrrrl"), ""]
    return out


def _notes(result: BenchResult) -> list[str]:
    out = ["## Notes", ""]
    if not result.ran_mca:
        out.append("- llvm-mca was not run (`--no-mca`).")
    if not result.ran_qemu:
        out.append("- QEMU counts were not run (`--no-qemu`).")
    elif not result.ran_plans:
        out.append("- Plans were not run (`--no-plans`).")
    out.append("- Only aarch64 is benchmarked (QEMU counts and llvm-mca); the arm (AArch32) kernels are tested, not "
               "measured.")  # fmt: skip
    return [*out, ""]
