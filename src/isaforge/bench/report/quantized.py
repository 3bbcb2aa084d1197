"""The quantized section of the bench report: rows per op and kernel, the requantization overhead
and the int4-vs-int8 decoding figures, each with its target and PASS/FAIL; goals for the Goals table; JSON."""

from __future__ import annotations

from collections.abc import Sequence

from isaforge import ui
from isaforge.bench.measure.mca import provenance
from isaforge.bench.measure.mca.analyse import CoreResult
from isaforge.bench.measure.mca.cores import SHORT_CORE, SVE_BITS
from isaforge.bench.report import METHOD
from isaforge.bench.scenarios import qplans
from isaforge.bench.scenarios.qplans import QuantResult, QuantRun

# Where the requantized whole calls are compared with a peer's: the side by side.
PEERS_NOTE = (
    "libisaforge's gemm_qs8 plan beside XNNPACK's qs8 fully-connected operator, whole calls in modeled cycles: the "
    "side by side's qs8 tables (`isaforge bench --peers --precisions qs8`)."
)


def pass_fail(met: bool | None) -> str:
    return {True: "PASS", False: "**FAIL**", None: "—"}[met]


def overhead_rows(q: QuantResult) -> list[tuple[str, QuantRun, QuantRun | None]]:
    """(kernel, gemm_qs8 run, its gemm_s8 plan run)."""
    out = []
    for qr in q.runs:
        if qr.count.op == qplans.REQUANTIZED:
            base = next((b for b in q.baseline if b.count.kernel == qr.count.kernel), None)
            out.append((qr.count.kernel, qr, base))
    return out


def overhead(qs8: QuantRun, s8: QuantRun | None) -> float | None:
    if s8 is None or not (qs8.count.counted and s8.count.counted) or not s8.count.instructions:
        return None
    return qs8.count.instructions / s8.count.instructions - 1


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def decode_ratios(q: QuantResult) -> tuple[float | None, float | None, float | None]:
    """int4 / int8: (weight bytes the micro-kernels loaded, all their loads' bytes, modeled cycles on V1)."""
    i8, i4 = q.decode.get(qplans.INT8_PATH), q.decode.get(qplans.INT4_PATH)
    if i8 is None or i4 is None or not (i8.count.counted and i4.count.counted):
        return None, None, None
    return (_ratio(i4.weight_bytes, i8.weight_bytes), _ratio(i4.kernel_load_bytes, i8.kernel_load_bytes),
            _ratio(i4.cycles, i8.cycles))  # fmt: skip


def weights_problems(q: QuantResult) -> list[str]:
    """Why the decoding runs' weight bytes cannot be trusted: a path whose micro-kernels did not load exactly its
    packed weights' bytes (at m = 1 each weight is read once), or loaded bytes provenance could not label."""
    out = []
    for path, qr in q.decode.items():
        if not qr.count.counted:
            continue
        if qr.weight_bytes != qr.weights_once:
            out.append(f"{path} loaded {qr.weight_bytes:,} weight bytes, not its packed weights' {qr.weights_once:,}")
        if qr.unknown_loads:
            out.append(f"{path}: {qr.unknown_loads:,} executed kernel loads of unknown provenance "
                       f"({'; '.join(qr.unknown_sites)})")  # fmt: skip
    return out


def sanity(q: QuantResult) -> str:
    """The decoding runs' weight-bytes check as a sentence for the report's Sanity line ('' when none ran)."""
    ran = {p: qr for p, qr in q.decode.items() if qr.count.counted}
    if not ran:
        return ""
    problems = weights_problems(q)
    figures = ", ".join(f"{p} {qr.weight_bytes:,}" for p, qr in ran.items())
    if problems:
        return f"The {q.compiler} decoding runs' weight bytes are not proven: " + "; ".join(problems) + "."
    return (
        f"In the {q.compiler} decoding runs ({qplans.DECODE_SHAPE.label}) the micro-kernels loaded exactly their "
        f"packed weights' bytes, each weight once ({figures}: n_padded · k for int8, half for int4), and every "
        "load they executed had a provenance."
    )


def goals(q: QuantResult) -> list[tuple[str, bool | None, str]]:
    """(title, met, detail) for the Goals table."""
    out = []
    rows = overhead_rows(q)
    judged = [(k, o, qs, s8) for k, qs, s8 in rows if (o := overhead(qs, s8)) is not None]
    title = (
        f"requantization (gemm_qs8 plan) ≤ {qplans.OVERHEAD_GOAL:.0%} more guest instructions than the int32 output "
        f"(gemm_s8 plan, same bias) at {qplans.OVERHEAD_SHAPE.label}, every variant"
    )
    if not judged:
        out.append((title, None, "no gemm_qs8 and gemm_s8 plan pair was counted"))
    else:
        wrong = [k for k, _o, qs, s8 in judged if qs.count.wrong or (s8 is not None and s8.count.wrong)]
        failed = [k for k, o, _qs, _s8 in judged if o > qplans.OVERHEAD_GOAL]
        worst = max(judged, key=lambda r: r[1])
        detail = f"{len(judged) - len(failed)} of {len(judged)} pass; worst {worst[0]} {worst[1]:+.2%}"
        if wrong:
            detail += f"; wrong C (so not met): {', '.join(wrong)}"
        out.append((title, not failed and not wrong, detail))
    out += _decode_goals(q)
    return out


def _decode_goals(q: QuantResult) -> list[tuple[str, bool | None, str]]:
    """The two decoding goals; the weight-bytes one is met only when the weight bytes are proven (sanity)."""
    w, _k, c = decode_ratios(q)
    shape = qplans.DECODE_SHAPE.label
    why = "; ".join(f"{p}: {w}" for p, w in q.decode_missing.items()) or "not run"
    i8, i4 = q.decode.get(qplans.INT8_PATH), q.decode.get(qplans.INT4_PATH)
    wrong = [r.count.op for r in (i8, i4) if r is not None and r.count.wrong]
    unproven = weights_problems(q)
    out = []
    for what, ratio, goal in (("bytes of packed weights the micro-kernels load", w, qplans.BYTES_GOAL),
                              ("whole-run modeled cycles on Neoverse V1", c, qplans.CYCLES_GOAL)):  # fmt: skip
        title = f"decoding {shape}: int4 path (gemm_qd8_f32_qc4w) ≤ {goal:.2f}× the int8 path's {what}"
        if ratio is None or i8 is None or i4 is None:
            out.append((title, None, why))
            continue
        detail = f"{ratio:.3f}× ({i4.count.kernel} vs {i8.count.kernel}"
        detail += f": {i4.weight_bytes:,} / {i8.weight_bytes:,} bytes)" if goal == qplans.BYTES_GOAL else ")"
        problems = [f"wrong C: {', '.join(wrong)}"] if wrong else []
        if goal == qplans.BYTES_GOAL:
            problems += [f"not proven: {p}" for p in unproven]
        out.append((title, ratio <= goal and not problems, "; ".join([detail, *problems])))
    return out


def _pct(mca: Sequence[CoreResult], compiler: str, kernel: str, core: str) -> str:
    r = next((r for r in mca if (r.compiler, r.kernel, r.core) == (compiler, kernel, core)), None)
    if r is None:
        return ""
    if r.status == "no ISA":
        return "—"
    return f"{r.percent_of_peak:.1f}%" if r.status == "ok" else "hot loop not found"


def _x(ratio: float | None) -> str:
    return f"{ratio:.3f}×" if ratio is not None else "—"


def _c(qr: QuantRun) -> str:
    if not qr.count.counted:
        return f"status {qr.count.status}"
    return f"**wrong**: {qr.count.wrong}" if qr.count.wrong else "exact"


def markdown(q: QuantResult, mca: Sequence[CoreResult], cores: Sequence[str]) -> list[str]:
    c = q.compiler
    out = [f"## Quantized plans, {c}", ""]
    out += [
        f"One plan each at {qplans.OVERHEAD_SHAPE.label} under `qemu-aarch64 -cpu max,sve-default-vector-length="
        f"{q.sve_bits // 8}`; per-channel weight scales, a_zp −3, int32 bias (fp32 for gemm_qd8_f32). How it is "
        f"counted and checked: [docs/bench.md]({METHOD}), *Quantized plans*.",
        "",
    ]
    rows = []
    for qr in q.runs:
        rc = qr.count
        ratio = f"{rc.over_hot_loop:.3f}×" if rc.over_hot_loop else "—"
        rows.append(
            [f"`{rc.op}`", f"`{rc.kernel}`", f"{rc.instructions:,}" if rc.counted else "—",
             f"{rc.instructions_per_mac:.4f}" if rc.counted else "—", f"{rc.hot_loop_instructions_per_mac:.4f}",
             ratio, f"{rc.mac_check:.4f}" if rc.counted else "—", _c(qr)]
            + [_pct(mca, c, rc.kernel, core) for core in cores]
        )  # fmt: skip
    heads = ["Op", "Kernel", "Run instructions", "Instr/MAC", "Hot-loop instr/MAC", "Over hot loop", "MAC check", "C"]
    heads += [f"{SHORT_CORE.get(core, core)} % of peak" for core in cores]
    out += [ui.markdown_table(heads, rows, "llrrrrrl" + "r" * len(cores)) if rows else "No quantized plan ran.", ""]

    out += [f"### Requantization overhead, {c}", ""]
    out += [
        f"Guest instructions of one isf_gemm_run at {qplans.OVERHEAD_SHAPE.label}, a gemm_qs8 plan over a gemm_s8 "
        "plan of the same kernel, A, W and bias. Target: ≤ 3 % (a bench figure, not a timed test).",
        "",
    ]
    rows = []
    for kernel, qs, s8 in overhead_rows(q):
        o = overhead(qs, s8)
        met = None if o is None else o <= qplans.OVERHEAD_GOAL and not qs.count.wrong
        rows.append([f"`{kernel}`", f"{s8.count.instructions:,}" if s8 else "not run", f"{qs.count.instructions:,}",
                     f"{o:+.2%}" if o is not None else "—", f"≤ {qplans.OVERHEAD_GOAL:.0%}",
                     pass_fail(met)])  # fmt: skip
    heads = ["Kernel", "gemm_s8 plan (int32 C)", "gemm_qs8 plan (int8 C)", "Overhead", "Target", "Result"]
    out += [ui.markdown_table(heads, rows, "lrrrll") if rows else "Not run (needs gemm_qs8 in --ops).", ""]

    shape = qplans.DECODE_SHAPE
    out += [f"### Decoding {shape.label}: int4 vs int8 weights on Neoverse V1, {c}", ""]
    out += [
        f"One plan run each under `qemu-aarch64 -cpu neoverse-v1` (SVE {SVE_BITS['neoverse-v1']} bits), the kernel "
        f"dispatch picks there, per-channel scales. What each column counts: [docs/bench.md]({METHOD}), *Quantized "
        "plans*.",
        "",
    ]
    rows = []
    for path in (qplans.INT8_PATH, qplans.INT4_PATH):
        qr = q.decode.get(path)
        if qr is None:
            rows.append([f"`{path}`", q.decode_missing.get(path, "not run"), *[""] * 8])
            continue
        rc = qr.count
        unknown = qr.kernel_loads_by_source.get(provenance.UNKNOWN, 0)
        rows.append([f"`{path}`", f"`{rc.kernel}`", f"{rc.instructions:,}", f"{qr.weight_bytes:,}",
                     f"{qr.weights_once:,}", f"{qr.kernel_load_bytes:,}", f"{unknown:,}", f"{qr.load_bytes:,}",
                     f"{qr.cycles:,.0f}", _c(qr)])  # fmt: skip
    heads = ["Path", "Kernel on V1", "Instructions", "Weight bytes", "Packed weights", "Kernel loads (bytes)",
             "Unlabelled", "All loads (bytes)", "Modeled cycles, V1", "C"]  # fmt: skip
    out += [ui.markdown_table(heads, rows, "llrrrrrrrl"), ""]
    problems = weights_problems(q)
    if problems:
        out += ["**The weight bytes are not proven**: " + "; ".join(problems) + ".", ""]
    w, k, cy = decode_ratios(q)
    rows = [
        ["weight bytes the micro-kernels load", _x(w), f"≤ {qplans.BYTES_GOAL}×",
         pass_fail(None if w is None else w <= qplans.BYTES_GOAL and not problems)],
        ["all the micro-kernels' loads (information)", _x(k), "", ""],
        ["modeled cycles, Neoverse V1", _x(cy), f"≤ {qplans.CYCLES_GOAL}×",
         pass_fail(None if cy is None else cy <= qplans.CYCLES_GOAL)],
    ]  # fmt: skip
    out += [ui.markdown_table(["int4 / int8", "Ratio", "Target", "Result"], rows, "lrll"), ""]
    out += [f"### Peers, {c}", "", PEERS_NOTE, ""]
    return out


def to_json(q: QuantResult) -> dict[str, object]:
    w, k, cy = decode_ratios(q)
    return {
        "compiler": q.compiler,
        "runs": [r.as_dict() for r in q.runs],
        "baseline": [r.as_dict() for r in q.baseline],
        "overhead": [
            {
                "kernel": k,
                "gemm_s8": s8.count.instructions if s8 else None,
                "gemm_qs8": qs.count.instructions,
                "overhead": overhead(qs, s8),
                "goal": qplans.OVERHEAD_GOAL,
            }
            for k, qs, s8 in overhead_rows(q)
        ],
        "decode": {p: r.as_dict() for p, r in q.decode.items()},
        "decode_missing": q.decode_missing,
        "decode_weight_bytes_ratio": w,
        "decode_kernel_load_bytes_ratio": k,
        "decode_cycles_ratio": cy,
        "decode_weights_proven": not weights_problems(q) if q.decode else None,
        "decode_weights_problems": weights_problems(q),
        "goals": [{"title": t, "met": m, "detail": d} for t, m, d in goals(q)],
    }
