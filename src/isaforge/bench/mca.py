"""Modeled efficiency of the micro-kernels' hot loops: llvm-objdump finds the loop, llvm-mca times it.

For every aarch64 micro-kernel `isf_ukernel_<name>` of a build (libisaforge.a), the hot loop is found in the
object code itself: among the loops closed by a backward branch, the one whose body holds the most MAC instructions
of the kernel's kind (the MAC instruction the function uses most; ties go to the smaller body). The body goes to
`llvm-mca-19 -mcpu=<core> -mattr=<the variant's features>`, and the simulated cycles per iteration give MACs per
cycle. The peak is measured the same way, never typed in: llvm-mca runs a stream of independent instructions of the
kernel's own MAC kind (same mnemonic, arrangement and by-element form, one accumulator each) on the same core; for
widening multiplies that do not accumulate (smull/smull2) the stream is their own mix with the accumulating
instructions of the loop (sadalp), in the loop's ratio.

MACs of one instruction = lanes of its destination × products summed into each lane (fmla 1, sdot 4, smmla 8,
bfmmla 4, bfdot 2); sadalp only accumulates (0). SVE lanes scale with the core's vector length.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from isaforge.bench import require, run_tool
from isaforge.catalogue import REFERENCE, KernelName, load, parse_kernel_name
from isaforge.errors import IsaforgeError

LLVM_MCA = "llvm-mca-19"
LLVM_OBJDUMP = "llvm-objdump-19"
CLANG = "clang-19"
ARCH = "aarch64"
ITERATIONS = 500
KERNEL_PREFIX = "isf_ukernel_"
GOAL_PERCENT = 95.0

# The cores modeled, and the SVE vector length of each (hardware facts: Neoverse V1 has 256-bit SVE, N2 and V2
# 128-bit; N1 has none). Which ISA each core has comes from LLVM itself (core_features).
CORES = ("neoverse-n1", "neoverse-n2", "neoverse-v1", "neoverse-v2")
SVE_BITS = {"neoverse-n1": 0, "neoverse-n2": 128, "neoverse-v1": 256, "neoverse-v2": 128}
# Marketing names and the -mcpu LLVM knows them by. Which scheduling model LLVM 19 uses for each is read from
# llvm-mca (scheduling_model); a core without a model of its own stands in as its nearest modeled sibling:
# the Cortex-A76 is the core Neoverse N1 was built from.
MARKETING = (
    ("Cortex-A76", "cortex-a76"),
    ("Neoverse N1", "neoverse-n1"),
    ("Cortex-A710", "cortex-a710"),
    ("Cortex-X2", "cortex-x2"),
    ("Neoverse N2", "neoverse-n2"),
    ("Neoverse V1", "neoverse-v1"),
    ("Neoverse V2", "neoverse-v2"),
)
STAND_IN = {"cortex-a76": "neoverse-n1"}
# Catalogue feature -> LLVM subtarget attribute where the spelling differs.
LLVM_ATTR = {"fp16": "fullfp16"}

# Products summed into each destination lane.
MAC_DEPTH = {
    "fmla": 1,
    "fmls": 1,
    "mla": 1,
    "mls": 1,
    "smull": 1,
    "umull": 1,
    "smlal": 1,
    "umlal": 1,
    "fmlal": 1,
    "bfmlalb": 1,
    "bfmlalt": 1,
    "bfdot": 2,
    "sdot": 4,
    "udot": 4,
    "usdot": 4,
    "sudot": 4,
    "bfmmla": 4,
    "smmla": 8,
    "ummla": 8,
    "usmmla": 8,
}
# Widening multiplies whose destination is not an accumulator, and the instructions that sum their products.
PRODUCT_ONLY = frozenset({"smull", "umull"})
ACCUMULATE_ONLY = frozenset({"sadalp", "uadalp"})
BRANCH = re.compile(r"^(?:b|b\.\w+|bc\.\w+|cbn?z|tbn?z)$")
ELEM_BITS = {"b": 8, "h": 16, "s": 32, "d": 64, "q": 128}
NEON_REG = re.compile(r"^v(\d+)\.(\d+)([bhsd])$")
SVE_REG = re.compile(r"^z(\d+)\.([bhsdq])$")
SCALAR_REG = re.compile(r"^[bhsd]\d+$")
VECTOR_OPERAND = re.compile(r"^([vz])(\d+)(\..*)$")
SYMBOL_REF = re.compile(r"(?:0x)?[0-9a-f]+ <[^>]*>")


# -- disassembly --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Insn:
    addr: int
    mnemonic: str
    operands: tuple[str, ...]
    raw: str = ""
    target: int | None = None  # branch target, for direct branches

    @property
    def text(self) -> str:
        return f"{self.mnemonic}\t{', '.join(self.operands)}" if self.operands else self.mnemonic

    @property
    def is_load(self) -> bool:
        return self.mnemonic.startswith("ld")


SYMBOL_LINE = re.compile(r"^([0-9a-f]+) <(.+)>:$")
INSN_LINE = re.compile(r"^\s*([0-9a-f]+):\s+(?:([0-9a-f]{8}|(?:[0-9a-f]{2} ){3}[0-9a-f]{2})\s+)?(\S+)(?:\s+(.*))?$")


def split_operands(text: str) -> tuple[str, ...]:
    """Operands split at top-level commas (not inside [..] or {..})."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return tuple(out)


def parse_objdump(text: str) -> dict[str, list[Insn]]:
    """`llvm-objdump -d` output → instructions per function symbol (the first definition of each name wins)."""
    funcs: dict[str, list[Insn]] = {}
    current: list[Insn] | None = None
    for line in text.splitlines():
        sym = SYMBOL_LINE.match(line)
        if sym:
            name = sym[2]
            current = None if name in funcs else funcs.setdefault(name, [])
            continue
        m = INSN_LINE.match(line)
        if m is None or current is None:
            continue
        mnemonic, rest = m[3], (m[4] or "").split("//", 1)[0].strip()
        operands = split_operands(rest)
        target = None
        if BRANCH.match(mnemonic) and operands:
            ref = re.match(r"^(?:0x)?([0-9a-f]+)(?: <.*>)?$", operands[-1])
            target = int(ref[1], 16) if ref else None
        current.append(Insn(int(m[1], 16), mnemonic, operands, (m[2] or "").replace(" ", ""), target))
    return funcs


def disassemble(path: Path, extra: Sequence[str] = ()) -> dict[str, list[Insn]]:
    out = run_tool([LLVM_OBJDUMP, "-d", "--no-show-raw-insn", *extra, str(path)], f"disassembly of {path.name}")
    return parse_objdump(out)


# -- MAC instructions ---------------------------------------------------------------------------------------------
def _base(mnemonic: str) -> str:
    short = mnemonic.removesuffix("2")
    return short if short in MAC_DEPTH else mnemonic


def dest_lanes(operand: str, sve_bits: int) -> int | None:
    """Lanes of a destination register: v0.4s → 4, z0.s → VL/32, s0 → 1; None when not a data register."""
    if m := NEON_REG.match(operand):
        return int(m[2])
    if m := SVE_REG.match(operand):
        return sve_bits // ELEM_BITS[m[2]] if sve_bits else 0
    if SCALAR_REG.match(operand):
        return 1
    return None


def mac_kind(insn: Insn) -> str | None:
    """`fmla v.4s[i]`, `smmla z.s`, `smull v.8h`, …; None when the instruction multiplies nothing."""
    base = _base(insn.mnemonic)
    if base not in MAC_DEPTH or not insn.operands:
        return None
    dest = insn.operands[0]
    if m := NEON_REG.match(dest):
        shape = f"v.{m[2]}{m[3]}"
    elif m := SVE_REG.match(dest):
        shape = f"z.{m[2]}"
    elif SCALAR_REG.match(dest):
        shape = dest[0]
    else:
        return None
    indexed = insn.operands[-1].endswith("]")
    return f"{base} {shape}{'[i]' if indexed else ''}"


def macs(insn: Insn, sve_bits: int) -> int:
    """Multiply-accumulates one execution of the instruction does (0 for anything else)."""
    if mac_kind(insn) is None:
        return 0
    lanes = dest_lanes(insn.operands[0], sve_bits) or 0
    return lanes * MAC_DEPTH[_base(insn.mnemonic)]


def kernel_kind(insns: Iterable[Insn]) -> str | None:
    counts = Counter(k for k in map(mac_kind, insns) if k)
    return counts.most_common(1)[0][0] if counts else None


# -- loops --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Loop:
    body: tuple[Insn, ...]

    @property
    def start(self) -> int:
        return self.body[0].addr

    @property
    def end(self) -> int:
        return self.body[-1].addr


def loops(insns: Sequence[Insn]) -> list[Loop]:
    """Every range closed by a backward branch: from its target to the branch."""
    out = []
    for br in insns:
        if br.target is not None and br.target <= br.addr:
            target = br.target
            body = tuple(i for i in insns if target <= i.addr <= br.addr)
            if body:
                out.append(Loop(body))
    return out


def hot_loop(insns: Sequence[Insn], kind: str | None) -> Loop | None:
    """The loop with the most MAC instructions of `kind` (the smaller body on a tie); None when no loop has any."""
    best, best_key = None, (0, 0)
    for loop in loops(insns):
        n = sum(1 for i in loop.body if mac_kind(i) == kind)
        key = (n, -len(loop.body))
        if n and (best is None or key > best_key):
            best, best_key = loop, key
    return best


def mca_source(loop: Loop) -> str:
    """The loop body as assembler llvm-mca accepts: branch targets and symbol references become labels."""
    lines = [".Lloop:"]
    for insn in loop.body:
        ops = list(insn.operands)
        if insn.target is not None:
            ops[-1] = ".Lloop" if insn.target == loop.start else ".Lexit"
        ops = [SYMBOL_REF.sub(".Lexit", op) for op in ops]
        lines.append(f"\t{insn.mnemonic}\t{', '.join(ops)}" if ops else f"\t{insn.mnemonic}")
    lines.append(".Lexit:")
    return "\n".join(lines) + "\n"


# -- llvm-mca -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class McaResult:
    iterations: int
    instructions: int
    total_cycles: int
    block_rthroughput: float
    resources: tuple[tuple[str, str], ...]  # (column label, resource name), in column order
    pressure: tuple[float, ...]  # per column, cycles per iteration
    by_insn: tuple[tuple[str, tuple[float, ...]], ...]  # (instruction, pressure per column)

    @property
    def cycles_per_iteration(self) -> float:
        return self.total_cycles / self.iterations

    def unit_pressure(self) -> dict[str, float]:
        """Resource name → busiest unit's cycles per iteration."""
        out: dict[str, float] = {}
        for (_, name), p in zip(self.resources, self.pressure, strict=True):
            out[name] = max(out.get(name, 0.0), p)
        return out


def _values(tokens: list[str]) -> tuple[float, ...]:
    return tuple(0.0 if t == "-" else float(t) for t in tokens)


def parse_mca(text: str) -> McaResult:
    """The summary, the resource list and the resource-pressure views of llvm-mca's default output."""
    head: dict[str, str] = {}
    for key in ("Iterations", "Instructions", "Total Cycles", "Block RThroughput"):
        m = re.search(rf"^{key}:\s+([0-9.]+)", text, re.M)
        if m is None:
            raise IsaforgeError(f"llvm-mca output has no {key!r} line")
        head[key] = m[1]
    resources = tuple(
        (m[1], m[2])
        for m in re.finditer(r"^(\[\d+(?:\.\d+)?\])\s+-\s+(\S+)", text.split("Resource pressure", maxsplit=1)[0], re.M)
    )
    labels = [r[0] for r in resources]
    pressure: tuple[float, ...] = tuple(0.0 for _ in labels)
    by_insn: list[tuple[str, tuple[float, ...]]] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Resource pressure per iteration:") and i + 2 < len(lines):
            pressure = _values(lines[i + 2].split()[: len(labels)])
        if line.startswith("Resource pressure by instruction:"):
            for row in lines[i + 2 :]:
                if not row.strip():
                    break
                tokens = row.split()
                by_insn.append((" ".join(tokens[len(labels) :]), _values(tokens[: len(labels)])))
    return McaResult(
        int(head["Iterations"]),
        int(head["Instructions"]),
        int(head["Total Cycles"]),
        float(head["Block RThroughput"]),
        resources,
        pressure,
        tuple(by_insn),
    )


def run_mca(source: str, core: str, mattr: str, iterations: int = ITERATIONS) -> tuple[McaResult, str]:
    cmd = [LLVM_MCA, "-mtriple=aarch64", f"-mcpu={core}", f"-iterations={iterations}"]
    if mattr:
        cmd.append(f"-mattr={mattr}")
    out = run_tool(cmd, f"llvm-mca on {core}", stdin=source)
    return parse_mca(out), out


def mattr_for(features: Iterable[str]) -> str:
    # Features without an extension of their own (svei8mm) are no LLVM attribute: what they imply enables them.
    cat = load()
    return ",".join(f"+{LLVM_ATTR.get(f, f)}" for f in sorted(features) if not cat.is_derived(ARCH, f))


# -- cores --------------------------------------------------------------------------------------------------------
@cache
def core_features(core: str) -> frozenset[str]:
    """Catalogue features LLVM enables for `-mcpu=core` (`clang --print-enabled-extensions`); baseline ones always."""
    out = run_tool(
        [CLANG, f"--target={load().arch(ARCH).triple}", f"-mcpu={core}", "--print-enabled-extensions"],
        f"feature list of {core}",
    )
    enabled = {f.lower() for f in re.findall(r"\bFEAT_(\w+)", out)}
    cat = load()
    baseline_march = cat.arch(ARCH).meson_cpu
    have = set()
    for feat in cat.arch_features(ARCH):
        spec = feat.per_arch[ARCH]
        named = re.search(r"\(FEAT_(\w+)\)", feat.title)
        if (spec.march == baseline_march and not spec.ext) or (named and named[1].lower() in enabled):
            have.add(feat.name)
    # The architecture ties SVE's int8/bf16 matrix multiplies to SVE plus I8MM/BF16 (no FEAT_ name of their own).
    for feat in cat.arch_features(ARCH):
        if cat.is_derived(ARCH, feat.name) and set(feat.per_arch[ARCH].implies) <= have:
            have.add(feat.name)
    return frozenset(have)


@cache
def scheduling_model(mcpu: str) -> str:
    """The scheduling model LLVM uses for `mcpu`, named by its resources' prefix (N1, N2, V1, V2, A57, …)."""
    result, _ = run_mca("nop\n", mcpu, "", iterations=1)
    prefixes = {m[1] for _, name in result.resources if (m := re.match(r"^(\w+?)Unit", name))}
    return prefixes.pop() if len(prefixes) == 1 else "?"


def modeled_as(mcpu: str) -> str:
    model = scheduling_model(mcpu)
    for core in CORES:
        if scheduling_model(core) == model:
            return core
    return STAND_IN.get(mcpu, "")


def core_map() -> list[dict[str, str]]:
    rows = []
    for marketing, mcpu in MARKETING:
        core = modeled_as(mcpu)
        rows.append(
            {
                "name": marketing,
                "mcpu": mcpu,
                "llvm_model": scheduling_model(mcpu),
                "modeled_as": core,
                "note": "no model of its own in LLVM 19: stands in as " + core if mcpu in STAND_IN else "",
            }
        )
    return rows


def check_cores(cores: Sequence[str]) -> list[str]:
    unknown = [c for c in cores if c not in CORES]
    if unknown:
        raise IsaforgeError(f"unknown core {unknown[0]!r}; choose from: {', '.join(CORES)}")
    return list(cores)


# -- reference streams and peaks ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Peak:
    core: str
    kind: str
    stream: str  # what the stream is, in words
    mac_instructions: int  # per iteration of the stream
    instructions: int
    macs: int  # per iteration, at the core's vector length
    cycles: float  # per iteration
    mattr: str

    @property
    def issue_rate(self) -> float:
        """MAC instructions per cycle."""
        return self.mac_instructions / self.cycles

    @property
    def macs_per_cycle(self) -> float:
        return self.macs / self.cycles


def _renamed(insn: Insn, dest: int, sources: dict[int, int]) -> Insn:
    """`insn` with destination register number `dest` and its vector sources renumbered by `sources` (old → new)."""
    ops = []
    for n, op in enumerate(insn.operands):
        m = VECTOR_OPERAND.match(op)
        if m is None:
            ops.append(op)
        elif n == 0:
            ops.append(f"{m[1]}{dest}{m[3]}")
        else:
            ops.append(f"{m[1]}{sources[int(m[2])]}{m[3]}")
    return Insn(0, insn.mnemonic, tuple(ops))


def _source_regs(insn: Insn) -> list[int]:
    return [int(m[2]) for op in insn.operands[1:] if (m := VECTOR_OPERAND.match(op))]


@dataclass(frozen=True)
class Stream:
    kind: str
    insns: tuple[Insn, ...]
    description: str

    def source(self) -> str:
        return "".join(f"\t{i.text}\n" for i in self.insns)

    def macs(self, sve_bits: int) -> int:
        return sum(macs(i, sve_bits) for i in self.insns)

    @property
    def mac_instructions(self) -> int:
        return sum(1 for i in self.insns if mac_kind(i))


def reference_stream(body: Sequence[Insn], kind: str, registers: int = 32) -> Stream:
    """Independent instructions of `kind`, spelled as the loop spells them, one accumulator each (as many as the
    registers left by the sources allow, ≥ 16); for product-only kinds, the loop's own mix with its accumulates."""
    templates = list({i.mnemonic: i for i in reversed([i for i in body if mac_kind(i) == kind])}.values())[::-1]
    if not templates:
        raise IsaforgeError(f"no {kind} instruction to build a reference stream from")
    base = _base(templates[0].mnemonic)
    sources: dict[int, int] = {}
    for t in templates:  # the sources get the lowest numbers: z0-z7 / v0-v15 suit every by-element form
        for reg in _source_regs(t):
            sources.setdefault(reg, len(sources))
    if base in PRODUCT_ONLY:
        accs = [i for i in body if i.mnemonic in ACCUMULATE_ONLY]
        n_products = sum(1 for i in body if mac_kind(i) == kind)
        if not accs or len(accs) != n_products:
            raise IsaforgeError(f"{kind}: expected one accumulate per product in the loop, found {len(accs)}")
        products = {t.mnemonic: len(sources) + j for j, t in enumerate(templates)}
        first_acc = len(sources) + len(products)
        insns: list[Insn] = []
        for acc in range(first_acc, registers):
            insns += [_renamed(t, products[t.mnemonic], sources) for t in templates]
            (acc_src,) = _source_regs(accs[0])
            insns += [_renamed(accs[0], acc, {acc_src: products[t.mnemonic]}) for t in templates]
        mix = " + ".join(t.mnemonic for t in templates)
        desc = f"{registers - first_acc} groups of {mix} + {len(templates)}×{accs[0].mnemonic} (the loop's mix)"
        return Stream(kind, tuple(insns), desc)
    first_acc = len(sources)
    insns = [_renamed(templates[n % len(templates)], acc, sources) for n, acc in enumerate(range(first_acc, registers))]
    return Stream(kind, tuple(insns), f"{len(insns)} independent {kind} (one accumulator each)")


def peak_from(stream: Stream, core: str, mattr: str, result: McaResult) -> Peak:
    """The peak llvm-mca's run of `stream` on `core` shows."""
    return Peak(
        core,
        stream.kind,
        stream.description,
        stream.mac_instructions,
        len(stream.insns),
        stream.macs(SVE_BITS[core]),
        result.cycles_per_iteration,
        mattr,
    )


def measure_peak(stream: Stream, core: str, mattr: str) -> Peak:
    result, _ = run_mca(stream.source(), core, mattr)
    return peak_from(stream, core, mattr, result)


# -- per kernel ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KernelLoop:
    """What the object code says about one kernel, independent of the core."""

    kernel: KernelName
    kind: str | None
    loop: Loop | None
    function_instructions: int
    function_start: int = 0

    @property
    def found(self) -> bool:
        return self.loop is not None

    def loop_macs(self, sve_bits: int) -> int:
        return sum(macs(i, sve_bits) for i in self.loop.body) if self.loop else 0

    @property
    def loop_mac_instructions(self) -> int:
        return sum(1 for i in self.loop.body if mac_kind(i)) if self.loop else 0


@dataclass
class CoreResult:
    kernel: str
    op: str
    variant: str
    compiler: str
    core: str
    status: str  # "ok", "no ISA" (the core lacks the variant's features), "no hot loop"
    kind: str | None = None
    mattr: str = ""
    loop_instructions: int = 0
    mac_instructions: int = 0
    macs_per_iteration: int = 0
    cycles_per_iteration: float = 0.0
    block_rthroughput: float = 0.0
    macs_per_cycle: float = 0.0
    peak_macs_per_cycle: float = 0.0
    percent_of_peak: float = 0.0
    bottleneck: str = ""
    resource_pressure: dict[str, float] = field(default_factory=dict)

    @property
    def meets_goal(self) -> bool:
        return self.status == "ok" and self.percent_of_peak >= GOAL_PERCENT


def find_kernels(
    lib: Path, ops: Sequence[str] | None = None, variants: Sequence[str] | None = None
) -> tuple[list[KernelLoop], dict[str, list[Insn]]]:
    """Every non-reference micro-kernel defined in `lib` (of `ops` and `variants` when given), with its hot loop."""
    cat = load()
    funcs = disassemble(lib)
    out = []
    for name, insns in sorted(funcs.items()):
        if not name.startswith(KERNEL_PREFIX):
            continue
        kernel = parse_kernel_name(name.removeprefix(KERNEL_PREFIX), cat.ops)
        if (
            kernel.variant == REFERENCE
            or (ops and kernel.op not in ops)
            or (variants and kernel.variant not in variants)
        ):
            continue
        kind = kernel_kind(insns)
        out.append(KernelLoop(kernel, kind, hot_loop(insns, kind), len(insns), insns[0].addr if insns else 0))
    out.sort(key=lambda kl: (list(cat.ops).index(kl.kernel.op), cat.variant(kl.kernel.variant).rank))
    return out, funcs


def explain(result: McaResult, kind: str) -> str:
    """The busiest resources of the loop and the non-MAC instructions that share them."""
    units = result.unit_pressure()
    if not units:
        return ""
    top = max(units.values())
    busiest = [name for name, p in units.items() if p >= 0.98 * top]
    cycles = result.cycles_per_iteration
    cols = {i for i, (_, name) in enumerate(result.resources) if name in busiest}
    others: Counter[str] = Counter()
    for text, row in result.by_insn:
        mnemonic = text.split()[0] if text else ""
        insn = Insn(0, mnemonic, split_operands(text[len(mnemonic) :].strip()))
        in_mix = mac_kind(insn) == kind or (
            _base(kind.split(maxsplit=1)[0]) in PRODUCT_ONLY and mnemonic in ACCUMULATE_ONLY
        )
        if not in_mix and any(row[i] > 0 for i in cols):
            others[mnemonic] += 1
    shared = ", ".join(f"{n}×{m}" for m, n in sorted(others.items(), key=lambda kv: (-kv[1], kv[0])))
    what = f"{'/'.join(sorted(busiest))} busy {top:.2f} of {cycles:.2f} cycles"
    if top < 0.9 * cycles:
        return f"latency/dependency bound ({what})"
    return what + (f"; shared with {shared}" if shared else "")


def fill(res: CoreResult, kl: KernelLoop, result: McaResult, peak: Peak) -> CoreResult:
    """`res` completed from llvm-mca's run of the kernel's hot loop and the peak of its MAC kind on that core."""
    assert kl.loop is not None and kl.kind is not None
    res.loop_instructions = len(kl.loop.body)
    res.mac_instructions = kl.loop_mac_instructions
    res.macs_per_iteration = kl.loop_macs(SVE_BITS[res.core])
    res.cycles_per_iteration = result.cycles_per_iteration
    res.block_rthroughput = result.block_rthroughput
    res.macs_per_cycle = res.macs_per_iteration / res.cycles_per_iteration
    res.peak_macs_per_cycle = peak.macs_per_cycle
    res.percent_of_peak = 100.0 * res.macs_per_cycle / peak.macs_per_cycle
    res.bottleneck = explain(result, kl.kind)
    res.resource_pressure = {k: round(v, 2) for k, v in result.unit_pressure().items() if v}
    return res


def analyse(
    lib: Path,
    compiler: str,
    cores: Sequence[str],
    ops: Sequence[str] | None = None,
    variants: Sequence[str] | None = None,
    jobs: int = 2,
    progress: Callable[[int, int, str], None] | None = None,
) -> tuple[list[CoreResult], list[Peak], list[KernelLoop]]:
    """Model every kernel of `lib` on every core; peaks are measured once per (core, MAC kind, features)."""
    cat = load()
    require(LLVM_MCA)
    require(CLANG)
    kernels, _ = find_kernels(lib, ops, variants)
    results: list[CoreResult] = []
    todo: list[tuple[KernelLoop, CoreResult]] = []
    peak_bodies: dict[tuple[str, str, str], Sequence[Insn]] = {}
    for kl in kernels:
        k = kl.kernel
        features = cat.variant_features(ARCH, k.variant)
        for core in cores:
            res = CoreResult(k.name, k.op, k.variant, compiler, core, "ok", kl.kind, mattr_for(features))
            results.append(res)
            if not features <= core_features(core):
                res.status = "no ISA"
            elif kl.loop is None or kl.kind is None:
                res.status = "no hot loop"
            else:
                todo.append((kl, res))
                peak_bodies.setdefault((core, kl.kind, res.mattr), kl.loop.body)
    total = len(peak_bodies) + len(todo)
    done = 0

    def peak_of(item: tuple[tuple[str, str, str], Sequence[Insn]]) -> Peak:
        (core, kind, mattr), body = item
        return measure_peak(reference_stream(body, kind), core, mattr)

    def model(item: tuple[KernelLoop, CoreResult]) -> CoreResult:
        kl, res = item
        assert kl.loop is not None and kl.kind is not None
        result, _ = run_mca(mca_source(kl.loop), res.core, res.mattr)
        return fill(res, kl, result, peaks[(res.core, kl.kind, res.mattr)])

    peaks: dict[tuple[str, str, str], Peak] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for key, peak in zip(peak_bodies, pool.map(peak_of, peak_bodies.items()), strict=True):
            peaks[key] = peak
            done += 1
            if progress:
                progress(done, total, f"peak of {peak.kind} on {peak.core}")
        for res in pool.map(model, todo):
            done += 1
            if progress:
                progress(done, total, f"{res.kernel} on {res.core}")
    return results, sorted(peaks.values(), key=lambda p: (CORES.index(p.core), p.kind)), kernels
