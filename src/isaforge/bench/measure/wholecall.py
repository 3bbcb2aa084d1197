"""Whole-call modeled cycles: every block of guest code one library call executes under QEMU, priced by llvm-mca.

QEMU (`-d in_asm,exec,nochain`) logs each translated block with its instruction words, and each execution of a
block; the log is cut at the harness's two markers (bench/peers: the entries of isf_bench_begin and isf_bench_end),
so the call is counted whole (the library's code, libc's memcpy and malloc, the dynamic linker's lazy binding, all
of it) and nothing else. The words are decoded by llvm-mc-19 (QEMU's own disassembler does not read SVE), and every
distinct block is priced by llvm-mca-19 for each core model, as one code region repeated back to back: its cycles
per iteration. Modeled cycles of the call = Σ executions × cycles per iteration over its blocks.

What this leaves out, by construction: caches and memory bandwidth (every load hits L1), branch prediction (taken
branches cost nothing extra), dependencies between one block and the next (a block's chains run against its own
next iteration instead: exact for loops, the blocks that dominate a GEMM; an approximation for straight-line code),
and whatever llvm-mca's scheduling models get wrong (docs/bench.md names the mis-pricings seen). Calls are
priced at CALL_LATENCY cycles, not the 100 llvm-mca assumes by default.

QEMU also ends a block where the core does not stop: at a guest page's end (and at its block size limit). A loop
that straddles a page would be two blocks priced apart, each without the other's work to overlap with (seen: a
kernel's loop moved across a page by an unrelated change cost 15 % more). A block that ends on no branch, exception
or system instruction is therefore priced joined to the block at the next address, for as many runs as it has.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from isaforge import process
from isaforge.bench import require, run_tool
from isaforge.bench.measure.mca import macs
from isaforge.bench.measure.mca.analyse import Peak, measure_peak
from isaforge.bench.measure.mca.cores import core_features, mattr_for
from isaforge.bench.measure.mca.llvm_mca import LLVM_MCA
from isaforge.bench.measure.mca.objcode import Insn, split_operands
from isaforge.bench.measure.qemu_log import parse_log
from isaforge.errors import IsaforgeError

LLVM_MC = "llvm-mc-19"
MCA_ITERATIONS = 100
CALL_LATENCY = 4  # a bl's cost is the call's own blocks, counted where they run; this is the branch and return
# Decode and price with every extension on: the executing core is QEMU's model, which never ran an instruction it
# lacks, while llvm-mca's scheduling model comes from -mcpu alone.
ALL_FEATURES = "+all"
BATCH = 2000  # blocks per llvm-mca process


@dataclass(frozen=True)
class CoreModel:
    """A core the call is modeled on: QEMU runs the call as `qemu_cpu` (so the libraries' run-time dispatch picks
    what they would pick there) and llvm-mca prices it as `mcpu`."""

    label: str
    mcpu: str
    qemu_cpu: str
    sve_bits: int


CORE_MODELS = (
    CoreModel("Cortex-A55", "cortex-a55", "cortex-a55", 0),
    CoreModel("Neoverse N1", "neoverse-n1", "neoverse-n1", 0),
    CoreModel("Neoverse N2", "neoverse-n2", "neoverse-n2", 128),
    CoreModel("Neoverse V1", "neoverse-v1", "neoverse-v1", 256),
    # QEMU's `max` has every feature it emulates; Neoverse V2 (128-bit SVE2, I8MM, BF16) is the newest core LLVM 19
    # models with them.
    CoreModel("max (as Neoverse V2)", "neoverse-v2", "max,sve-default-vector-length=16", 128),
)


def core_model(name: str) -> CoreModel:
    for c in CORE_MODELS:
        if name in (c.mcpu, c.qemu_cpu.partition(",")[0], c.label):
            return c
    known = ", ".join(c.qemu_cpu.partition(",")[0] for c in CORE_MODELS)
    raise IsaforgeError(f"unknown core {name!r}; choose from {known}")


# -- the log ------------------------------------------------------------------------------------------------------
Block = tuple[str, ...]  # the instruction words of one translated block, as QEMU read them


@dataclass
class BlockProfile:
    runs: Counter[Block] = field(default_factory=Counter)  # block → executions inside the window

    @property
    def instructions(self) -> int:
        return sum(len(b) * n for b, n in self.runs.items())


def block_profile(log: Path, window: tuple[int, int]) -> BlockProfile:
    """The blocks executed from the first entry of `window[0]` up to the first entry of `window[1]` after it."""
    with log.open(errors="replace") as fh:
        ex = parse_log(fh, window)
    if ex.unknown_traces:
        raise IsaforgeError(f"{log.name}: {ex.unknown_traces} executed blocks had no translation in the log")
    if not (ex.window_opened and ex.window_closed):
        raise IsaforgeError(f"{log.name}: the markers' window never {'closed' if ex.window_opened else 'opened'}")
    return profile_of(ex.runs, ex.encodings)


def profile_of(runs: Counter[tuple[int, ...]], encodings: dict[int, str]) -> BlockProfile:
    """Executions per block's words, each block QEMU cut where the core runs on joined to the one it runs into."""
    profile = BlockProfile()
    for addrs, n in joined_runs(runs, encodings).items():
        profile.runs[tuple(encodings[a] for a in addrs)] += n
    return profile


def _runs_on(word: str) -> bool:
    """Whether the core goes on to the next address after this word: not a branch, exception or system instruction
    (the A64 encoding group op0 = 101x, bits 28:26 = 0b101), which are what a program's block ends with."""
    return (int(word, 16) >> 26) & 0b111 != 0b101


def joined_runs(runs: Counter[tuple[int, ...]], encodings: dict[int, str]) -> Counter[tuple[int, ...]]:
    """`runs` with each block that ends where the core runs on joined to the block at its next address (in address
    order, pairs only): the pair's runs are the first block's, and the second keeps the runs it had besides."""
    left = Counter(runs)
    by_start = {addrs[0]: addrs for addrs in runs}
    out: Counter[tuple[int, ...]] = Counter()
    for addrs in sorted(runs):
        n, nxt = left[addrs], by_start.get(addrs[-1] + 4)
        if n and nxt is not None and nxt != addrs and _runs_on(encodings[addrs[-1]]) and left[nxt] >= n:
            out[addrs + nxt] += n
            left[nxt] -= n
            left[addrs] = 0
    out.update({addrs: n for addrs, n in left.items() if n})
    return out


# -- decoding -----------------------------------------------------------------------------------------------------
WARNING_LINE = re.compile(r"^<stdin>:(\d+):\d+: warning: invalid instruction encoding")


class Decoder:
    """Instruction words → instructions (None for a word llvm-mc cannot decode), cached across calls."""

    def __init__(self) -> None:
        self._known: dict[str, Insn | None] = {}
        self._lock = threading.Lock()

    def decode(self, words: Iterable[str]) -> dict[str, Insn | None]:
        with self._lock:
            todo = sorted({w for w in words if w not in self._known})
            if todo:
                self._known.update(zip(todo, _llvm_mc_decode(todo), strict=True))
            return self._known


def _llvm_mc_decode(words: Sequence[str]) -> list[Insn | None]:
    # Not run_tool: llvm-mc's exit status says whether a word was invalid, which is an answer here, not a failure.
    # One word per line, bytes little-endian; llvm-mc warns about an invalid word by line and prints nothing for it.
    source = "".join(",".join(f"0x{w[i : i + 2]}" for i in (6, 4, 2, 0)) + "\n" for w in words)
    require(LLVM_MC)
    proc = process.run(
        [LLVM_MC, "--disassemble", "-triple=aarch64", f"-mattr={ALL_FEATURES}"],
        what="llvm-mc",
        stdin=source,
        check=False,
    )
    bad = {int(m[1]) - 1 for m in map(WARNING_LINE.match, proc.stderr.splitlines()) if m}
    texts = iter(line.strip() for line in proc.stdout.splitlines() if line.startswith("\t") and not
                 line.strip().startswith("."))  # fmt: skip
    out: list[Insn | None] = []
    for i, _word in enumerate(words):
        if i in bad:
            out.append(None)
            continue
        text = next(texts, None)
        if text is None:
            raise IsaforgeError(f"llvm-mc decoded fewer instructions than the {len(words)} words given")
        mnemonic, _, rest = text.partition("\t")
        out.append(Insn(0, mnemonic.strip(), split_operands(rest.split("//", 1)[0].strip())))
    return out


# -- pricing ------------------------------------------------------------------------------------------------------
REGION_LINE = re.compile(r"^\[(\d+)\] Code Region - b(\d+)")
CYCLES_LINE = re.compile(r"^Total Cycles:\s+(\d+)")
ITERATIONS_LINE = re.compile(r"^Iterations:\s+(\d+)")


class Pricer:
    """Cycles per iteration of each block on one core model, from llvm-mca, cached."""

    def __init__(self, core: CoreModel, decoder: Decoder) -> None:
        self.core = core
        self.decoder = decoder
        self._cycles: dict[Block, float] = {}
        self._lock = threading.Lock()

    def cycles(self, blocks: Iterable[Block]) -> dict[Block, float]:
        with self._lock:
            todo = [b for b in dict.fromkeys(blocks) if b not in self._cycles]
            for at in range(0, len(todo), BATCH):
                self._cycles.update(self._price(todo[at : at + BATCH]))
            return self._cycles

    def _price(self, blocks: Sequence[Block]) -> dict[Block, float]:
        insns = self.decoder.decode(w for b in blocks for w in b)
        out: dict[Block, float] = {}
        sources: dict[int, str] = {}
        for i, b in enumerate(blocks):
            body = [insns[w] for w in b if insns[w] is not None]
            if body:
                lines = "".join(f"\t{x.text}\n" for x in body if x is not None)
                sources[i] = f"# LLVM-MCA-BEGIN b{i}\n{lines}# LLVM-MCA-END b{i}\n"
            else:  # nothing llvm-mca could time: a cycle per word
                out[b] = float(len(b))
        if sources:
            got = parse_regions(self._run("".join(sources.values())))
            for i in sources:
                if i not in got:
                    raise IsaforgeError(f"llvm-mca ({self.core.mcpu}) gave no figure for block {i}")
                out[blocks[i]] = got[i]
        return out

    def _run(self, source: str) -> str:
        cmd = [LLVM_MCA, "-mtriple=aarch64", f"-mcpu={self.core.mcpu}", f"-mattr={ALL_FEATURES}",
               f"-iterations={MCA_ITERATIONS}", f"-call-latency={CALL_LATENCY}", "-skip-unsupported-instructions=any",
               "-summary-view", "-resource-pressure=0", "-instruction-info=0"]  # fmt: skip
        return run_tool(cmd, f"llvm-mca on {self.core.mcpu}", stdin=source)


def parse_regions(text: str) -> dict[int, float]:
    """llvm-mca's summary of many regions named b<i> → cycles per iteration of each."""
    out: dict[int, float] = {}
    region: int | None = None
    iterations = 0
    for line in text.splitlines():
        if m := REGION_LINE.match(line):
            region = int(m[2])
        elif m := ITERATIONS_LINE.match(line):
            iterations = int(m[1])
        elif (m := CYCLES_LINE.match(line)) and region is not None and iterations:
            out[region] = int(m[1]) / iterations
    return out


# -- one call -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModeledCall:
    core: str  # the CoreModel's mcpu
    cycles: float
    instructions: int
    macs_executed: int  # by the MAC instructions, at the core's vector length (padding lanes included)
    undecoded: int  # executed words llvm-mc could not decode (priced at a cycle each)
    blocks: int  # distinct blocks executed


def model_call(profile: BlockProfile, pricer: Pricer) -> ModeledCall:
    prices = pricer.cycles(profile.runs)
    insns = pricer.decoder.decode(w for b in profile.runs for w in b)
    cycles, done, undecoded = 0.0, 0, 0
    for block, n in profile.runs.items():
        cycles += n * prices[block]
        for w in block:
            insn = insns[w]
            if insn is None:
                undecoded += n
            elif macs.mac_kind(insn):
                done += n * macs.macs_of(insn, pricer.core.sve_bits)
    return ModeledCall(pricer.core.mcpu, cycles, profile.instructions, done, undecoded, len(profile.runs))


# -- the core's peak ----------------------------------------------------------------------------------------------
# Per precision, the MAC instructions a GEMM of it may use, and the features each needs (the catalogue's names);
# the peak is the best of those the core has, measured by llvm-mca on a stream of independent ones.
PEAK_FORMS: dict[str, tuple[tuple[str, frozenset[str]], ...]] = {
    "fp32": (
        ("fmla v16.4s, v0.4s, v1.s[0]", frozenset()),
        ("fmla z16.s, z0.s, z1.s[0]", frozenset({"sve"})),
    ),
    "fp16": (
        ("fmla v16.8h, v0.8h, v1.h[0]", frozenset({"fp16"})),
        ("fmla z16.h, z0.h, z1.h[0]", frozenset({"sve"})),
        ("fmla v16.4s, v0.4s, v1.s[0]", frozenset()),  # widened to fp32 where the core has no fp16 arithmetic
    ),
    "bf16": (
        ("bfmmla v16.4s, v0.8h, v1.8h", frozenset({"bf16"})),
        ("bfmmla z16.s, z0.h, z1.h", frozenset({"svebf16"})),
        ("fmla v16.4s, v0.4s, v1.s[0]", frozenset()),  # widened to fp32 where the core has no BF16
    ),
    "int8": (
        ("sdot v16.4s, v0.16b, v1.4b[0]", frozenset({"dotprod"})),
        ("smmla v16.4s, v0.16b, v1.16b", frozenset({"i8mm"})),
        ("sdot z16.s, z0.b, z1.b[0]", frozenset({"sve"})),
        ("smmla z16.s, z0.b, z1.b", frozenset({"svei8mm"})),
        ("smlal v16.4s, v0.4h, v1.h[0]", frozenset()),
    ),
}
PRECISIONS = tuple(PEAK_FORMS)


def _insn(text: str) -> Insn:
    mnemonic, _, rest = text.partition(" ")
    return Insn(0, mnemonic, split_operands(rest))


@cache
def core_peak(mcpu: str, precision: str) -> Peak:
    """The core's best MAC rate for `precision` among the forms it has."""
    have = core_features(mcpu)
    best: Peak | None = None
    for text, needs in PEAK_FORMS[precision]:
        if not needs <= have:
            continue
        insn = _insn(text)
        kind = macs.mac_kind(insn)
        assert kind is not None, text
        stream = macs.reference_stream([insn], kind)
        peak = measure_peak(stream, mcpu, mattr_for(have))
        if best is None or peak.macs_per_cycle > best.macs_per_cycle:
            best = peak
    if best is None:
        raise IsaforgeError(f"{mcpu} has none of the MAC instructions of {precision}")
    return best
