"""Executed instructions of one GEMM inside libisaforge, counted under QEMU user mode, and those of the libc calls
it makes, counted apart.

gemm_runner is linked statically (bench.measure.executable) so libisaforge's code sits at fixed addresses. QEMU runs
it with `-d in_asm,exec,nochain`: every translated block is logged once with its instructions' addresses, and, with
chaining off, every execution of a block leaves one `Trace` line (bench.measure.qemu_log). Executions per address in
libisaforge's range × the instruction llvm-objdump decodes there (QEMU's own disassembler cannot read SVE) give the
counts: all instructions, MAC instructions and their MACs, loads, and those outside the micro-kernels (packing and
driver). The encodings in QEMU's log are checked against llvm-objdump's.

The calls libisaforge makes out of its range (libc: aligned_alloc and free once per GEMM, memcpy and memset where
the runtime copies or clears) are counted as calls, per callee, from the executions of its own `bl` and `b`
instructions (`calls_out`), and the instructions executed inside them, per callee, apart from libisaforge's own
(`libc_instructions`, `libc_by_call`). IFUNC callees (static glibc's string functions) are named through their .iplt
stub, GOT slot and R_AARCH64_IRELATIVE resolver.

Plans (gemm_runner's plan mode: isf_gemm_create, isf_gemm_run, isf_gemm_destroy) are counted over the run alone:
the executions from the first of isf_gemm_run's entry block to the first of isf_gemm_destroy's, so packing the
weights at create is left out. MACs are counted as useful ones: a kernel of one row (MR = 1) built on 2×2 matrix
instructions (smmla, bfmmla: the second row zero) does half the MACs the instruction nominally does.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from isaforge import gemmjob, process, qemu
from isaforge.bench import run_tool
from isaforge.bench.measure.executable import LIBRARY, CodeRange, code_range, external_names, link_static_runner
from isaforge.bench.measure.mca import macs, objcode, provenance
from isaforge.bench.measure.qemu_log import ExecLog, parse_log
from isaforge.bench.scenarios.shapes import Shape
from isaforge.builds import Build
from isaforge.catalogue import SCALABLE_KINDS, KernelName, load, parse_kernel_name
from isaforge.errors import IsaforgeError

CPU = "max"
DEFAULT_SVE_BITS = 128
MAC_CHECK_TOLERANCE = 0.02
ISF_ERR_UNSUPPORTED = 3
# How a GEMM is called: the one-call API, a plan (counted over isf_gemm_run only), a plan with its epilogue fused
# (bias and clamp; bias alone for int32 C).
PLAIN, PLAN, PLAN_EPILOGUE = "plain", "plan", "plan+epilogue"
MODES = (PLAIN, PLAN, PLAN_EPILOGUE)
RUN_ENTRY, RUN_EXIT = "isf_gemm_run", "isf_gemm_destroy"  # a plan run's window in the log
MATRIX_MACS = frozenset({"smmla", "ummla", "usmmla", "bfmmla"})  # 2×2 tiles of C per (128-bit) segment


@dataclass
class RunCount:
    op: str
    variant: str
    kernel: str
    shape: str
    sve_bits: int
    useful_macs: int  # M·N·K
    padded_macs: int  # rounded up to whole MR×NR×KR tiles: what the kernels must execute
    compiler: str = ""
    mode: str = PLAIN  # PLAIN, PLAN or PLAN_EPILOGUE
    status: int = 0  # the library's: a plan the build cannot make yet (ISF_ERR_UNSUPPORTED) is reported, not counted
    loop_kernel: str = ""  # whose hot loop is the ideal: the kernel meant to do the bulk of this shape's MACs
    wrong: str = ""  # the oracle's complaint about C (gemmjob.check_case), empty when C is right
    instructions: int = 0
    kernel_instructions: int = 0  # inside isf_ukernel_* functions
    mac_instructions: int = 0
    macs_executed: int = 0
    loads: int = 0
    hot_loop_instructions_per_mac: float = 0.0  # loop_kernel's hot loop, as compiled, per useful MAC
    macs_by_kernel: dict[str, int] = field(default_factory=dict)  # useful MACs executed per micro-kernel
    by_function: dict[str, int] = field(default_factory=dict)
    mac_mnemonics: dict[str, int] = field(default_factory=dict)
    calls_out: dict[str, int] = field(default_factory=dict)  # calls out of libisaforge (libc), per callee
    libc_instructions: int = 0  # executed inside those calls: apart from `instructions`, libisaforge's own
    libc_by_call: dict[str, int] = field(default_factory=dict)  # the same per callee

    @property
    def counted(self) -> bool:
        return self.status == 0

    @property
    def instructions_per_mac(self) -> float:
        return self.instructions / self.useful_macs

    @property
    def over_hot_loop(self) -> float:
        """Instructions per useful MAC over the ideal (loop_kernel's hot loop alone); 0 when there is no ideal."""
        ideal = self.hot_loop_instructions_per_mac
        return self.instructions_per_mac / ideal if ideal and self.counted else 0.0

    @property
    def mac_share(self) -> float:
        return self.mac_instructions / self.instructions if self.instructions else 0.0

    @property
    def loads_per_mac(self) -> float:
        return self.loads / self.useful_macs

    @property
    def packing_share(self) -> float:
        """Instructions outside the micro-kernels (packing, driver, dispatch)."""
        return 1.0 - self.kernel_instructions / self.instructions if self.instructions else 0.0

    @property
    def mac_check(self) -> float:
        """MACs executed / MACs of the padded tiles: 1.0 when every tile's MACs were counted once."""
        return self.macs_executed / self.padded_macs if self.padded_macs else 0.0

    @property
    def mac_check_ok(self) -> bool:
        return abs(self.mac_check - 1.0) <= MAC_CHECK_TOLERANCE

    def as_dict(self) -> dict[str, object]:
        out = dict(self.__dict__)
        for name in ("instructions_per_mac", "mac_share", "loads_per_mac", "packing_share", "mac_check",
                     "over_hot_loop"):  # fmt: skip
            out[name] = round(getattr(self, name), 6)
        out["mac_check_ok"] = self.mac_check_ok
        return out


def _round_up(x: int, to: int) -> int:
    return (x + to - 1) // to * to


STREAMING_KIND = SCALABLE_KINDS["streaming"]


def tile_size(kernel: KernelName, bits: int) -> tuple[int, int]:
    """MR and NR at this vector length (`bits`: SVE's, or the streaming one for SME kernels, isf_internal.h): NR
    grows with it in every scalable variant, MR too in the streaming ones (but a row kernel's)."""
    scalable = load().variant(kernel.variant).scalable
    nr = kernel.nr * bits // 128 if scalable else kernel.nr
    mr = kernel.mr * bits // 128 if SCALABLE_KINDS[scalable] == STREAMING_KIND and kernel.mr > 1 else kernel.mr
    return mr, nr


def tail_most(tail: KernelName, full_mr: int, arch: str) -> int:
    """The most rows left at a region's end `tail` takes rather than a padded full tile of `full_mr` rows (the
    catalogue's tail_rows on `arch`; unlisted: full MR / 2 for a row kernel, its own MR for a few-row one):
    driver.c's."""
    most = load().variant(tail.variant).tail_rows_on(arch).get(tail.name, 0)
    most = most or (full_mr // 2 if tail.mr == 1 else tail.mr)
    return min(most, full_mr - 1)


def tails_of(full: KernelName, kernels: list[KernelName]) -> list[KernelName]:
    """Of `kernels` (most preferred first), those that read `full`'s panels with fewer rows (same op, variant, NR,
    KR and widening), the most preferred of each MR: driver.c's isf_tail_kernels."""
    tails: dict[int, KernelName] = {}
    group = (full.op, full.variant, full.nr, full.kr, bool(full.runs))
    for k in kernels:
        if (k.op, k.variant, k.nr, k.kr, bool(k.runs)) == group and k.mr < full.mr:
            tails.setdefault(k.mr, k)
    return list(tails.values())


def column_siblings(kernel: KernelName, kernels: list[KernelName], bits: int) -> list[KernelName]:
    """`kernel`'s column siblings in `kernels`: less preferred full kernels of the same op, variant, MR, KR and
    widening, with another NR (driver.c's is_column_sibling)."""
    cat = load()
    mr, nr = tile_size(kernel, bits)
    group = (kernel.op, kernel.variant, kernel.kr, bool(kernel.runs))
    return [
        k
        for k in kernels
        if (k.op, k.variant, k.kr, bool(k.runs)) == group
        and tile_size(k, bits)[0] == mr
        and tile_size(k, bits)[1] != nr
        and cat.preference(k) < cat.preference(kernel)
    ]


def for_columns(kernel: KernelName, kernels: list[KernelName], n: int, bits: int) -> KernelName:
    """The kernel a GEMM of n columns runs when dispatch selected `kernel` (not by name): of its column siblings in
    `kernels` (most preferred first), the one padding n to the fewest columns when it saves the variant's
    column_margin % of `kernel`'s: driver.c's isf_kernel_for_columns."""
    most = _round_up(n, tile_size(kernel, bits)[1])
    margin = load().variant(kernel.variant).column_margin
    pick, fewest = kernel, most
    for k in column_siblings(kernel, kernels, bits):
        cols = _round_up(n, tile_size(k, bits)[1])
        if cols < fewest and most - cols >= most * margin // 100:
            pick, fewest = k, cols
    return pick


def row_chunks(
    kernel: KernelName, tails: list[KernelName], m: int, bits: int, arch: str
) -> list[tuple[KernelName, int]]:
    """Who computes a plan's m rows, as driver.c's next_chunk deals them: (kernel, rows it computes, padded to its
    MR). The full kernel takes whole tiles; of the tail kernels whose tail rows reach the rows left, the one of the
    fewest takes its MR rows; when none does, a padded full tile takes the rest."""
    mr = tile_size(kernel, bits)[0]
    chunks = [(kernel, m // mr * mr)] if m >= mr else []
    left = m % mr
    while left:
        best: tuple[KernelName, int] | None = None
        for tail in tails:
            most = tail_most(tail, mr, arch)
            if left <= most and (best is None or most < best[1]):
                best = (tail, most)
        if best is None:
            return [*chunks, (kernel, mr)]
        tail_mr = tile_size(best[0], bits)[0]
        chunks.append((best[0], tail_mr))
        left -= min(tail_mr, left)
    return chunks


def padded_macs(kernel: KernelName, shape: Shape, sve_bits: int, rows: int | None = None) -> int:
    """M·N·K rounded up to whole tiles: M to the full kernel's MR, or `rows` when tail kernels took the rows it
    would pad (row_chunks: each chunk's rows padded to its own MR)."""
    mr, nr = tile_size(kernel, sve_bits)
    rows = _round_up(shape.m, mr) if rows is None else rows
    return rows * _round_up(shape.n, nr) * _round_up(shape.k, kernel.kr)


def useful_macs(kernel: KernelName | None, insn: objcode.Insn, sve_bits: int) -> int:
    """MACs of one execution of `insn` in `kernel` that land in C: a 2×2 matrix instruction in a kernel of an odd
    number of rows (1) multiplies a zero row too, so only MR of its MR rounded up to even rows count; an SME outer
    product (`sve_bits` the streaming length) whose tile has more rows than MR counts MR of them."""
    n = macs.macs_of(insn, sve_bits)
    if kernel is not None and n and macs.is_outer_product(insn):  # rows past MR predicated off (a tile taller than MR)
        side = sve_bits // macs.ELEM_BITS[insn.operands[0][-1]]
        return n * min(tile_size(kernel, sve_bits)[0], side) // side
    if kernel is not None and kernel.mr % 2 and macs.base_mnemonic(insn.mnemonic) in MATRIX_MACS:
        return n * kernel.mr // (kernel.mr + 1)
    return n


@dataclass
class StaticRunner:
    """The static runner of one build, its code and its disassembly: what every run of that build shares."""

    build: Build
    exe: Path
    lib: Path
    code: CodeRange
    insns: dict[int, objcode.Insn]
    functions: dict[str, list[objcode.Insn]]
    sve_bits: int
    external: dict[int, str] = field(default_factory=dict)  # names of the functions outside the range it calls

    @classmethod
    def prepare(
        cls, build: Build, directory: Path, workdir: Path, sve_bits: int, program: str = "gemm_runner"
    ) -> StaticRunner:
        """`program`, one of the tests' runners, linked statically and read."""
        exe = link_static_runner(build, directory, program, workdir / f"{program}-{build.name}")
        return cls.of(build, directory, exe, sve_bits)

    @classmethod
    def of(cls, build: Build, directory: Path, exe: Path, sve_bits: int) -> StaticRunner:
        """A statically linked program (`exe`) with libisaforge's code range in it disassembled."""
        lib = directory / LIBRARY
        code = code_range(exe, lib)
        text = run_tool(
            [objcode.LLVM_OBJDUMP, "-d", f"--start-address=0x{code.lo:x}", f"--stop-address=0x{code.hi:x}", str(exe)],
            f"disassembly of the static {exe.name}",
        )
        functions = objcode.parse_objdump(text)
        insns = objcode.instructions_by_address(text)
        return cls(build, exe, lib, code, insns, functions, sve_bits, external_names(exe))

    @cached_property
    def load_sources(self) -> dict[int, str]:
        """What each load of the micro-kernels, and of the functions they call or branch into (quant_tile), reads
        (provenance's labels: weights, a, c, epilogue, stack, constant, unknown), by address."""
        functions = [provenance.Function(*f) for f in self.code.functions]
        roots = [f.start for f in functions if f.name.startswith(objcode.KERNEL_PREFIX)]
        return provenance.classify_loads(self.insns, functions, roots)

    def kernels(self) -> list[KernelName]:
        cat = load()
        names = [n.removeprefix(objcode.KERNEL_PREFIX) for n in self.functions if n.startswith(objcode.KERNEL_PREFIX)]
        return sorted((parse_kernel_name(n, cat.ops) for n in names), key=lambda k: (k.op, cat.variant(k.variant).rank))

    def hot_loop_ideal(self, kernel: KernelName) -> float:
        """Instructions per useful MAC of the kernel's hot loop alone."""
        body = self.functions.get(objcode.KERNEL_PREFIX + kernel.name, [])
        loop = macs.hot_loop(body, macs.kernel_kind(body))
        if loop is None:
            return 0.0
        return len(loop.body) / max(1, sum(useful_macs(kernel, i, self.sve_bits) for i in loop.body))

    def tail_kernels(self, kernel: KernelName) -> list[KernelName]:
        """The built kernels of fewer rows that read `kernel`'s panels (same op, variant, NR and KR), the most
        preferred of each MR (driver.c's isf_tail_kernels)."""
        cat = load()
        return tails_of(kernel, sorted(self.kernels(), key=lambda k: -cat.preference(k)))

    def full_kernel(self, kernel: KernelName, shape: Shape) -> KernelName:
        """The kernel whose tiles a run of the selected `kernel` computes at this shape (for_columns)."""
        cat = load()
        return for_columns(kernel, sorted(self.kernels(), key=lambda k: -cat.preference(k)), shape.n, self.sve_bits)

    def loop_kernel(self, kernel: KernelName, shape: Shape) -> KernelName:
        """The kernel meant to do the bulk of the shape's MACs: of the plan's row chunks (row_chunks), the kernel
        computing the most rows (a tail kernel for m below MR when built), else the full kernel."""
        chunks = row_chunks(kernel, self.tail_kernels(kernel), shape.m, self.sve_bits, self.build.arch_name)
        rows: Counter[str] = Counter()
        for k, n in chunks:
            rows[k.name] += n
        bulk = max(chunks, key=lambda c: rows[c[0].name])[0] if chunks else kernel
        return bulk

    def function_kernel(self, function: str) -> KernelName | None:
        if not function.startswith(objcode.KERNEL_PREFIX):
            return None
        return parse_kernel_name(function.removeprefix(objcode.KERNEL_PREFIX), load().ops)

    def window(self, mode: str) -> tuple[int, int] | None:
        """A plan run's window in the log (isf_gemm_run's entry to isf_gemm_destroy's); None for the plain API."""
        if mode == PLAIN:
            return None
        entries = {name: start for start, _end, name in self.code.functions}
        missing = [f for f in (RUN_ENTRY, RUN_EXIT) if f not in entries]
        if missing:
            raise IsaforgeError(f"the static gemm_runner has no {', '.join(missing)}: cannot count a plan run alone")
        return entries[RUN_ENTRY], entries[RUN_EXIT]

    def logged_command(self, cpu: str, args: list[str], log_path: Path) -> list[str]:
        """The program under QEMU `cpu`, every block it translates and executes logged to `log_path` (all of them:
        the code libisaforge calls out to is counted too)."""
        cmd = qemu.qemu_command(self.build.arch, cpu, self.exe, args)
        at = cmd.index(str(self.exe))
        cmd[at:at] = ["-d", "in_asm,exec,nochain", "-D", str(log_path)]
        return cmd

    def read_log(self, log_path: Path, mode: str) -> ExecLog:
        """The run's log: libisaforge's executions (over the plan run's window but in PLAIN mode), and its calls
        out."""
        with log_path.open(errors="replace") as fh:
            return parse_log(fh, self.window(mode), (self.code.lo, self.code.hi))

    @property
    def cpu(self) -> str:
        return f"{CPU},sve-default-vector-length={self.sve_bits // 8}"

    def run(self, kernel: KernelName, shape: Shape, workdir: Path, mode: str = PLAIN) -> RunCount:
        cat = load()
        arch = self.build.arch
        types = gemmjob.op_types(kernel.op)
        case = gemmjob.Case(shape.m, shape.n, shape.k, shape.k, shape.n, shape.n)
        a, b = gemmjob.random_operands(types, [case], seed=1)
        stem = f"{kernel.name}-{shape.label}-{mode}"
        job, out, log_path = (workdir / f"{stem}.{ext}" for ext in ("job", "out", "log"))
        epilogue = gemmjob.random_epilogue(types, shape.n, seed=2) if mode == PLAN_EPILOGUE else gemmjob.NO_EPILOGUE
        gemmjob.write_job(job, types, a, b, [case], plan=mode != PLAIN, epilogue=epilogue)
        mask = cat.mask(cat.variant_features(arch.name, kernel.variant))
        cmd = self.logged_command(self.cpu, [str(job), str(out), str(mask)], log_path)
        what = f"gemm_runner for {kernel.name} at {shape.label}"
        result = process.run(cmd, what=what, timeout=qemu.DEFAULT_TIMEOUT)
        chosen = json.loads(result.stdout.strip().splitlines()[-1])["kernel"]
        if chosen != kernel.name:
            raise IsaforgeError(f"mask {mask:#x} selected {chosen}, not {kernel.name}")
        (got,) = gemmjob.read_results(out, types, [case])
        if got.status == ISF_ERR_UNSUPPORTED and mode != PLAIN:  # a plan this build cannot make yet: say so, go on
            for path in (job, out, log_path):
                path.unlink()
            return self.tally(kernel, shape, ExecLog(), mode, got.status)
        if got.status != 0:
            raise IsaforgeError(f"gemm {kernel.name} at {shape.label} ({mode}) returned status {got.status}")
        log = self.read_log(log_path, mode)
        for path in (job, out, log_path):
            path.unlink()
        rc = self.tally(kernel, shape, log, mode)
        # Counts of a GEMM that skipped work (an epilogue a kernel ignores) would flatter it: the oracle checks C.
        rc.wrong = gemmjob.check_case(types, kernel.variant, a, b, case, got, epilogue) or ""
        return rc

    def tally(
        self, kernel: KernelName, shape: Shape, log: ExecLog, mode: str = PLAIN, status: int = 0, by_name: bool = False
    ) -> RunCount:
        """The counts of one run of the selected `kernel` from its log; a run the library refused (`status`) keeps
        zeros. `by_name`: the kernel was chosen by name, which keeps its tile width whatever n."""
        what = f"{kernel.name} at {shape.label} ({mode})"
        if log.unknown_traces:
            raise IsaforgeError(f"{log.unknown_traces} executed blocks of {what} had no translation in the log")
        if status == 0 and mode != PLAIN and not (log.window_opened and log.window_closed):
            raise IsaforgeError(f"{what}: the log has no {RUN_ENTRY} … {RUN_EXIT} window: not a plan run")
        full = kernel if by_name else self.full_kernel(kernel, shape)  # or a column sibling padding n less
        loop = self.loop_kernel(full, shape)
        rc = RunCount(
            kernel.op,
            kernel.variant,
            kernel.name,
            shape.label,
            self.sve_bits,
            shape.macs,
            padded_macs(full, shape, self.sve_bits),
            compiler=self.build.toolchain.compiler.name if self.build.toolchain else "",
            mode=mode,
            status=status,
            loop_kernel=loop.name,
            hot_loop_instructions_per_mac=self.hot_loop_ideal(loop),
        )
        if status != 0:  # not counted: the report says why
            return rc
        by_function: Counter[str] = Counter()
        mnemonics: Counter[str] = Counter()
        calls_out: Counter[str] = Counter()
        by_kernel: Counter[str] = Counter()
        for addr, n in log.executions.items():
            insn = self.insns.get(addr)
            if insn is None:
                raise IsaforgeError(f"QEMU executed 0x{addr:x}, which llvm-objdump does not decode as an instruction")
            if insn.raw and log.encodings.get(addr, insn.raw) != insn.raw:
                raise IsaforgeError(f"0x{addr:x}: QEMU read {log.encodings[addr]}, the executable has {insn.raw}")
            rc.instructions += n
            function = self.code.function_at(addr)
            by_function[function] += n
            if function.startswith(objcode.KERNEL_PREFIX):
                rc.kernel_instructions += n
            if insn.is_load:
                rc.loads += n
            if macs.mac_kind(insn):
                rc.mac_instructions += n
                owner = self.function_kernel(function)
                done = n * useful_macs(owner, insn, self.sve_bits)
                rc.macs_executed += done
                by_kernel[owner.name if owner else function] += done
                mnemonics[insn.mnemonic] += n
            callee = self.call_out(insn)
            if callee is not None:
                calls_out[callee] += n
        rc.by_function = dict(by_function.most_common())
        rc.mac_mnemonics = dict(mnemonics.most_common())
        rc.macs_by_kernel = dict(by_kernel.most_common())
        tails = self.tail_kernels(full)
        if any(by_kernel[t.name] for t in tails):  # the rows a full tile would pad went to tail kernels (plans)
            rows = sum(n for _k, n in row_chunks(full, tails, shape.m, self.sve_bits, self.build.arch_name))
            rc.padded_macs = padded_macs(full, shape, self.sve_bits, rows)
        rc.calls_out = dict(sorted(calls_out.items()))
        by_call = Counter({self.external.get(entry, f"0x{entry:x}"): n for entry, n in log.called.items()})
        rc.libc_by_call = dict(by_call.most_common())
        rc.libc_instructions = sum(by_call.values())
        return rc

    def call_out(self, insn: objcode.Insn) -> str | None:
        """The callee of a direct call or tail call that leaves libisaforge's range, else None."""
        if insn.mnemonic not in ("bl", "b") or not insn.operands:
            return None
        target = insn.target
        if target is None:
            ref = re.match(r"^(?:0x)?([0-9a-f]+)\b", insn.operands[-1])
            target = int(ref[1], 16) if ref else None
        if target is None or self.code.lo <= target < self.code.hi:
            return None
        return self.external.get(target, f"0x{target:x}")
