"""The Plans section of `isaforge bench`: what a plan run (isf_gemm_run alone, the weights packed at create) costs.

- Fused epilogue: a plan run with bias and clamp (bias alone for int32 C) over the same plan run without, at one
  shape (256×256×64 by default): goal ≤ 2 % more executed instructions, for every op and variant.
- Small M: a plan run's executed instructions per useful MAC over the hot loop's of the kernel meant to do the
  bulk of the work (the variant's row kernel, MR = 1, for m below MR; else the full kernel), at 1×1024×1024 and
  49×256×2304: goals ≤ 1.3× and ≤ 1.10×.
- Before/after: the plain API's instructions per MAC at those shapes (from an earlier run's JSON, `--before`, and
  this build's when its --shapes include them) next to the plan run's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from isaforge import ui
from isaforge.bench.measure.qemu_count import PLAIN, PLAN, PLAN_EPILOGUE, RunCount
from isaforge.bench.report import METHOD
from isaforge.catalogue import load, parse_kernel_name
from isaforge.errors import IsaforgeError

EPILOGUE_GOAL = 0.02
DEFAULT_EPILOGUE_SHAPE = "256x256x64"
SMALL_M_GOALS = {"1x1024x1024": 1.30, "49x256x2304": 1.10}
DEFAULT_PLAN_SHAPES = ",".join(SMALL_M_GOALS)


@dataclass(frozen=True)
class Before:
    """The plain API's figures of an earlier `isaforge bench --json` run."""

    source: str
    command: str
    instructions_per_mac: dict[tuple[str, str, str], float] = field(default_factory=dict)  # (compiler, kernel, shape)


def load_before(path: Path) -> Before:
    try:
        data = json.loads(path.read_text())
        runs = {
            (r["compiler"], r["kernel"], r["shape"]): float(r["instructions"]) / float(r["useful_macs"])
            for r in data["qemu"]
            if r.get("mode", PLAIN) == PLAIN and r.get("status", 0) == 0
        }
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError) as exc:
        raise IsaforgeError(f"--before {path}: not the JSON of an earlier isaforge bench run ({exc})") from exc
    return Before(str(path), str(data.get("command", "")), runs)


def _find(runs: Sequence[RunCount], compiler: str, kernel: str, shape: str, mode: str) -> RunCount | None:
    return next((r for r in runs if (r.compiler, r.kernel, r.shape, r.mode) == (compiler, kernel, shape, mode)), None)


def _kernels(runs: Sequence[RunCount], compiler: str) -> list[str]:
    return list(dict.fromkeys(r.kernel for r in runs if r.compiler == compiler and r.mode != PLAIN))


def _plan_runs(
    runs: Sequence[RunCount], compilers: Sequence[str], shapes: Sequence[str]
) -> Iterator[tuple[str, str, str, RunCount]]:
    """(compiler, kernel, shape, its plan run) for every plan run of these compilers and shapes, in report order."""
    for compiler in compilers:
        for kernel in _kernels(runs, compiler):
            for shape in shapes:
                plan = _find(runs, compiler, kernel, shape, PLAN)
                if plan is not None:
                    yield compiler, kernel, shape, plan


def _not_counted(*rcs: RunCount | None) -> str:
    """Why a row has no figures: a run that did not happen, or a plan the build refused (its status)."""
    for rc in rcs:
        if rc is None:
            return "not run"
        if not rc.counted:
            return f"not supported by this build (status {rc.status})"
    return ""


@dataclass
class EpilogueRow:
    compiler: str
    kernel: str
    shape: str
    epilogue: str  # "bias + clamp", or "bias" for int32 C
    without: int = 0  # executed instructions of the plan run
    fused: int = 0
    why_not: str = ""  # empty when both runs were counted
    wrong: str = ""  # the oracle's complaint about either run's C: then the goal is not met, whatever the count
    floor: float | None = None  # the least overhead any kernel can have (least_epilogue)

    @property
    def overhead(self) -> float | None:
        return self.fused / self.without - 1 if not self.why_not and self.without else None

    @property
    def met(self) -> bool | None:
        return None if self.overhead is None else self.overhead <= EPILOGUE_GOAL and not self.wrong


def least_epilogue(rc: RunCount) -> float:
    """The fewest instructions a fused epilogue can add, over rc's: the bias folded into the accumulators' start
    values costs none; the clamp is an FMAX and an FMIN per vector of C (no single-instruction float clamp before
    SVE2.1's FCLAMP), over every padded tile's outputs. Integer C: no clamp, so 0."""
    cat = load()
    kernel = parse_kernel_name(rc.kernel, cat.ops)
    out_bytes = cat.ops[rc.op].c.bytes
    if cat.ops[rc.op].c.kind == "int" or not rc.instructions:
        return 0.0
    k = int(rc.shape.split("x")[2])
    outputs = rc.padded_macs // (-(-k // kernel.kr) * kernel.kr)
    vector_bits = rc.sve_bits if cat.variant(kernel.variant).scalable else 128
    return 2 * -(-outputs // (vector_bits // (8 * out_bytes))) / rc.instructions


def epilogue_rows(runs: Sequence[RunCount], compilers: Sequence[str], shape: str) -> list[EpilogueRow]:
    out = []
    for compiler in compilers:
        for kernel in _kernels(runs, compiler):
            plain, fused = (_find(runs, compiler, kernel, shape, m) for m in (PLAN, PLAN_EPILOGUE))
            if plain is None and fused is None:
                continue
            int_out = (plain or fused).op == "gemm_s8"  # type: ignore[union-attr]
            row = EpilogueRow(compiler, kernel, shape, "bias" if int_out else "bias + clamp")
            row.why_not = _not_counted(plain, fused)
            row.without = plain.instructions if plain is not None and plain.counted else 0
            row.fused = fused.instructions if fused is not None and fused.counted else 0
            row.wrong = next((rc.wrong for rc in (fused, plain) if rc is not None and rc.wrong), "")
            row.floor = least_epilogue(plain) if plain is not None and plain.counted else None
            out.append(row)
    return out


@dataclass
class SmallMRow:
    compiler: str
    kernel: str
    shape: str
    instructions: int = 0
    instructions_per_mac: float = 0.0
    loop_kernel: str = ""
    loop_instructions_per_mac: float = 0.0  # the loop kernel's hot loop per useful MAC
    goal: float | None = None
    mac_check: float = 0.0
    mac_check_ok: bool = True
    macs_by_kernel: dict[str, int] = field(default_factory=dict)
    calls_out: dict[str, int] = field(default_factory=dict)
    why_not: str = ""
    wrong: str = ""  # the oracle's complaint about C: then the goal is not met

    @property
    def ratio(self) -> float | None:
        ok = not self.why_not and self.loop_instructions_per_mac
        return self.instructions_per_mac / self.loop_instructions_per_mac if ok else None

    @property
    def met(self) -> bool | None:
        return None if self.ratio is None or self.goal is None else self.ratio <= self.goal and not self.wrong

    @property
    def bulk_kernel(self) -> str:
        """The kernel that did the most useful MACs in the run, as counted."""
        return max(self.macs_by_kernel, key=self.macs_by_kernel.__getitem__) if self.macs_by_kernel else ""


def small_m_rows(runs: Sequence[RunCount], compilers: Sequence[str], shapes: Sequence[str]) -> list[SmallMRow]:
    out = []
    for compiler, kernel, shape, rc in _plan_runs(runs, compilers, shapes):
        row = SmallMRow(compiler, kernel, shape, goal=SMALL_M_GOALS.get(shape), why_not=_not_counted(rc))
        if not row.why_not:
            row.instructions, row.instructions_per_mac = rc.instructions, rc.instructions_per_mac
            row.loop_kernel, row.loop_instructions_per_mac = rc.loop_kernel, rc.hot_loop_instructions_per_mac
            row.mac_check, row.mac_check_ok = rc.mac_check, rc.mac_check_ok
            row.macs_by_kernel, row.calls_out, row.wrong = rc.macs_by_kernel, rc.calls_out, rc.wrong
        out.append(row)
    return out


@dataclass
class BeforeAfterRow:
    compiler: str
    kernel: str
    shape: str
    before: float | None  # plain API, instructions per MAC, from --before
    plain: float | None  # plain API in this run
    plan: float | None  # plan run

    @property
    def plan_over_before(self) -> float | None:
        return self.plan / self.before if self.plan and self.before else None


def before_after_rows(
    runs: Sequence[RunCount], compilers: Sequence[str], shapes: Sequence[str], before: Before | None
) -> list[BeforeAfterRow]:
    out = []
    for compiler, kernel, shape, plan in _plan_runs(runs, compilers, shapes):
        plain = _find(runs, compiler, kernel, shape, PLAIN)
        out.append(
            BeforeAfterRow(
                compiler,
                kernel,
                shape,
                before.instructions_per_mac.get((compiler, kernel, shape)) if before else None,
                plain.instructions_per_mac if plain else None,
                plan.instructions_per_mac if plan.counted else None,
            )
        )
    return out


# -- goals --------------------------------------------------------------------------------------------------------
def _tally(rows: Sequence[EpilogueRow] | Sequence[SmallMRow], worst: str) -> tuple[bool | None, str]:
    judged = [r for r in rows if r.met is not None]
    if not judged:
        reasons = sorted({r.why_not for r in rows if r.why_not}) or ["no plan run at this shape"]
        return None, "; ".join(reasons)
    failed = [r for r in judged if not r.met]
    detail = f"{len(judged) - len(failed)} of {len(judged)} pass; {worst}"
    wrong = [r.kernel for r in rows if r.wrong]
    if wrong:
        detail += f"; wrong C (fails the oracle, so not met whatever the count): {', '.join(wrong)}"
    if len(judged) < len(rows):
        detail += f"; {len(rows) - len(judged)} not counted ({'; '.join(sorted({r.why_not for r in rows} - {''}))})"
    return not failed, detail


def epilogue_goal(rows: Sequence[EpilogueRow], shape: str) -> tuple[str, bool | None, str]:
    title = (
        f"fused bias + clamp (bias alone for int32 C) ≤ {EPILOGUE_GOAL:.0%} more executed instructions than none, "
        f"plan runs at {shape}, every op and variant"
    )
    judged = [r for r in rows if r.overhead is not None]
    worst = max(judged, key=lambda r: r.overhead or 0.0, default=None)
    met, detail = _tally(rows, f"worst {worst.kernel} {worst.overhead:+.2%}" if worst else "")
    out_of_reach = [r.kernel for r in rows if r.floor is not None and r.floor > EPILOGUE_GOAL]
    if out_of_reach:
        detail += (
            f"; out of reach at this shape for {', '.join(out_of_reach)}: an FMAX and an FMIN per vector of C alone "
            f"are more than {EPILOGUE_GOAL:.0%} of their plain plan's instructions (see the table)"
        )
    return title, met, detail


def small_m_goals(rows: Sequence[SmallMRow]) -> list[tuple[str, bool | None, str]]:
    out = []
    for shape, goal in SMALL_M_GOALS.items():
        mine = [r for r in rows if r.shape == shape]
        title = (
            f"plan run at {shape}: whole-call instructions per MAC ≤ {goal:.2f}× the hot loop's of the kernel doing "
            "the bulk (row kernel for m below MR), every op and variant"
        )
        if not mine:
            out.append((title, None, f"needs plan runs at {shape} (--plan-shapes)"))
            continue
        judged = [r for r in mine if r.ratio is not None]
        worst = max(judged, key=lambda r: r.ratio or 0.0, default=None)
        met, detail = _tally(mine, f"worst {worst.kernel} {worst.ratio:.3f}× ({worst.loop_kernel})" if worst else "")
        out.append((title, met, detail))
    return out


# -- markdown -----------------------------------------------------------------------------------------------------
def _mark(met: bool | None) -> str:
    return {True: "met", False: "**NOT met**", None: "—"}[met]


def _wrong(message: str) -> str:
    return f" (**wrong C**: {message.replace('|', '/')})" if message else ""


def _num(x: float | None, fmt: str) -> str:
    return format(x, fmt) if x is not None else "—"


def _epilogue_table(rows: Sequence[EpilogueRow]) -> str:
    cells = [
        [f"`{r.kernel}`", r.shape, r.epilogue, f"{r.without:,}" if r.without else r.why_not,
         f"{r.fused:,}" if r.fused else r.why_not, _num(r.overhead, "+.2%"), _num(r.floor, "+.2%"),
         _mark(r.met) + _wrong(r.wrong)]
        for r in rows
    ]  # fmt: skip
    heads = ["Kernel", "M×N×K", "Fused", "Instructions, plain plan", "Instructions, fused", "Overhead",
             "Least possible", "≤ 2 %"]  # fmt: skip
    return ui.markdown_table(heads, cells, "lllrrrrl")


def _macs_split(r: SmallMRow) -> str:
    total = sum(r.macs_by_kernel.values())
    return ", ".join(f"`{k}` {n / total:.0%}" for k, n in r.macs_by_kernel.items()) if total else "—"


def _small_m_table(rows: Sequence[SmallMRow]) -> str:
    cells = []
    for r in rows:
        if r.why_not:
            cells.append([f"`{r.kernel}`", r.shape, r.why_not, "", "", "", "", "", "", ""])
            continue
        goal = (f"≤ {r.goal:.2f}×: {_mark(r.met)}" if r.goal is not None else "—") + _wrong(r.wrong)
        check = f"{r.mac_check:.4f}" + ("" if r.mac_check_ok else " ✗")
        cells.append(
            [f"`{r.kernel}`", r.shape, f"{r.instructions:,}", f"{r.instructions_per_mac:.4f}", f"`{r.loop_kernel}`",
             f"{r.loop_instructions_per_mac:.4f}", _num(r.ratio, ".3f") + "×", goal, check, _macs_split(r)]
        )  # fmt: skip
    heads = ["Plan of", "M×N×K", "Run instructions", "Instr/MAC", "Bulk kernel", "Its hot loop instr/MAC", "Ratio",
             "Goal", "MAC check", "Useful MACs by kernel"]  # fmt: skip
    return ui.markdown_table(heads, cells, "llrrlrrlrl")


def _before_after_table(rows: Sequence[BeforeAfterRow], have_before: bool) -> str:
    cells = [
        [f"`{r.kernel}`", r.shape, _num(r.before, ".4f"), _num(r.plain, ".4f"), _num(r.plan, ".4f"),
         _num(r.plan_over_before, ".2f") + ("×" if r.plan_over_before else "")]
        for r in rows
    ]  # fmt: skip
    heads = ["Kernel", "M×N×K", "Plain API, before" if have_before else "Plain API, before (no --before)",
             "Plain API, this build", "Plan run", "Plan / before"]  # fmt: skip
    return ui.markdown_table(heads, cells, "llrrrr")


def markdown(
    runs: Sequence[RunCount],
    compilers: Sequence[str],
    plan_shapes: Sequence[str],
    epilogue_shape: str,
    before: Before | None,
) -> list[str]:
    out = ["## Plans (QEMU)", ""]
    out += [f"isf_gemm_run alone counted; what the tables count: [docs/bench.md]({METHOD}), *Plans*.", ""]
    for compiler in compilers:
        mine = [r for r in runs if r.compiler == compiler]
        ep = epilogue_rows(mine, [compiler], epilogue_shape)
        small = small_m_rows(mine, [compiler], plan_shapes)
        ba = before_after_rows(mine, [compiler], plan_shapes, before)
        if ep:
            out += [f"### Fused epilogue overhead, {compiler}", ""]
            out += [_epilogue_table(ep), ""]
        if small:
            out += [f"### Small M, {compiler}", ""]
            out += [_small_m_table(small), ""]
        if ba:
            source = f"`{before.command or before.source}` ({before.source})" if before else ""
            out += [f"### Before / after, {compiler}", ""]
            out += [
                "Instructions per MAC" + (f"; *before*: {source}" if before else "") + ".",
                "",
                _before_after_table(ba, before is not None),
                "",
            ]
    return out


def to_json(
    runs: Sequence[RunCount],
    compilers: Sequence[str],
    plan_shapes: Sequence[str],
    epilogue_shape: str,
    before: Before | None,
) -> dict[str, object]:
    def rows(items: Sequence[object], *props: str) -> list[dict[str, object]]:
        return [{**asdict(r), **{p: getattr(r, p) for p in props}} for r in items]  # type: ignore[call-overload]

    return {
        "epilogue_shape": epilogue_shape,
        "plan_shapes": list(plan_shapes),
        "before": {"source": before.source, "command": before.command} if before else None,
        "epilogue": rows(epilogue_rows(runs, compilers, epilogue_shape), "overhead", "met"),
        "small_m": rows(small_m_rows(runs, compilers, plan_shapes), "ratio", "met", "bulk_kernel"),
        "before_after": rows(before_after_rows(runs, compilers, plan_shapes, before), "plan_over_before"),
    }
