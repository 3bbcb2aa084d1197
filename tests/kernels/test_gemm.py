"""Numerics of every GEMM kernel, each selected by name, against a float64 numpy oracle, under QEMU.

int8 must be exact; float variants must stay within isaforge.gemmjob.error_bound (γ(k+1)·Σ|a||b| in the variant's
accumulation precision) and give NaN/Inf where IEEE arithmetic does. Shapes: every n in 1..17 × k in 1..33 for m in
1..9, 16 and 17 (full_sweep), the edge tiles of every MR and NR with padded leading dimensions, and large shapes
that cross the Kc/Nc blocks. Plans (isf_gemm_create + run) with and without a fused bias and clamp, against the
same oracle with the epilogue applied.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from isaforge import coverage, gemmjob
from isaforge.bench.measure import qemu_count
from isaforge.catalogue import KernelName, load
from isaforge.gemmjob import NO_EPILOGUE, Case, Epilogue, Oracle
from isaforge.pytest_plugin import QemuRunner, TargetCpu
from tests.conftest import ROOT

OPS = tuple(load().plain_ops())  # the quantized ops: tests/kernels/runtime/test_quantized.py
FLOAT_OPS = tuple(name for name in OPS if load().ops[name].c.kind != "int")
LARGE = [Case(70, 400, 300, 301, 403, 405), Case(33, 29, 1000, 1000, 29, 29), Case(128, 128, 128, 128, 128, 128)]
# The shortest and the longest; 64 bytes is `max`'s default in qemu-user, where every kernel runs by name with the
# full sweep (and the real cores' test below runs each SVE kernel at its core's length).
SVE_VECTOR_BYTES = (16, 256)


def _ops_with_streaming_kernels() -> list[str]:
    cat = load()
    every = cat.kernels(ROOT, "aarch64", [v.name for v in cat.arch_variants("aarch64")])
    return sorted({k.op for k in every if cat.variant(k.variant).scalable == "streaming" and k.op in OPS})


STREAMING_OPS = _ops_with_streaming_kernels()  # the ops with an SME kernel in the tree
ROW_KERNEL_MACS = 1_000_000
ROW_KERNEL_ROWS = 3
# (main thread, worker thread) SVE vector lengths in bytes: growing and shrinking, each across the whole range.
THREAD_VECTOR_BYTES = [(16, 256), (256, 32)]


def full_sweep(max_k: int = 33) -> list[Case]:
    """Every n in 1..17 and k in 1..max_k, for m in 1..9 (every row count of a first tile of MR ≤ 8, and one row
    past it) and 16, 17 (two whole tiles, and one row past): m = 10..15 would only repeat the edge tiles of 2..7 rows,
    at half of the sweep's work."""
    return [c for c in gemmjob.sweep_cases(17, max_k) if c.m <= 9 or c.m >= 16]


def edge_cases(pad: int) -> list[Case]:
    """m, n, k on both sides of the tile sizes (MR 4/8; NR 4..24 at 128-bit vectors, up to 128 at 256-byte SVE;
    KR 4/8/16), plus 1: every edge-tile path of every kernel."""
    return [
        Case(m, n, k, k + pad, n + pad, n + pad)
        for m in (1, 3, 8, 9, 17)
        for n in (1, 7, 12, 13, 25, 33, 49, 129)
        for k in (1, 5, 16, 17, 33)
    ]


def run_batch(
    qemu_run: QemuRunner,
    tc: TargetCpu,
    tmp: Path,
    op: str,
    cases: list[Case],
    kernel: str | None = None,
    operands: tuple | None = None,
    packed: bool = False,
    guard_pages: bool = False,
    vl: tuple[int, int] | None = None,
    plan: bool = False,
    epilogue: Epilogue = NO_EPILOGUE,
    oracle: Oracle | None = None,
    env: dict[str, str] | None = None,
) -> str:
    """Run the cases with `kernel` (None: dispatch's choice), assert every result (guard bytes included), and return
    the kernel the runner reports it used. `vl`: (main thread's, worker thread's) SVE vector length in bytes (see
    gemm_runner.c). `plan`: through isf_gemm_create + isf_gemm_run, with `epilogue`. `oracle`: these cases' oracle
    when another kernel ran them already (its operands are used). `env`: more of the runner's environment."""
    oracle = oracle or job_oracle(op, cases, operands, epilogue)
    job, out = tmp / f"{op}.job", tmp / f"{op}.out"
    gemmjob.write_job(
        job,
        oracle.types,
        oracle.a,
        oracle.b,
        cases,
        packed=packed,
        guard_pages=guard_pages,
        plan=plan,
        epilogue=epilogue,
    )
    args = [str(job), str(out)] + ([f"kernel={kernel}"] if kernel else []) + ([f"vl={vl[0]}:{vl[1]}"] if vl else [])
    trace = tmp / f"{op}.trace"
    trace.unlink(missing_ok=True)
    runner_env = {"ISAFORGE_TRACE": str(trace), **(env or {})}
    result = qemu_run(tc.build, tc.cpu, "tests/kernels/gemm_runner", args, runner_env)
    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    named, kernel = kernel, report["kernel"]
    # Plans and the one-call API alike run the tail kernels on the rows the full kernel would pad.
    ran = {line.split()[2] for line in trace.read_text().splitlines() if line.startswith("ran isf ")}
    expected = plan_kernels(tc, op, kernel, cases, report["vector_bytes"] * 8, by_name=named is not None)
    assert ran == expected, f"{kernel}: the {'plans' if plan else 'calls'} ran {sorted(ran)}"
    failures = oracle.failures(kernel.rsplit("_", 1)[1], out)
    assert not failures, f"{kernel} on {tc.id}: {len(failures)} wrong, first: {failures[0]}"
    return kernel


def job_oracle(op: str, cases: list[Case], operands: tuple | None, epilogue: Epilogue) -> Oracle:
    types = gemmjob.op_types(op)
    a, b = operands or gemmjob.random_operands(types, cases, seed=len(cases) + types.index)
    return Oracle(types, a, b, cases, epilogue)


def kernels_of(tc: TargetCpu, op: str) -> list[KernelName]:
    """The op's kernels this toolchain builds and this CPU model can run, most preferred first."""
    cat = load()
    arch = tc.build.arch_name
    every_variant = [v.name for v in cat.arch_variants(arch)]
    runnable = [
        k
        for k in cat.kernels(ROOT, arch, every_variant)
        if k.op == op and cat.variant_features(arch, k.variant) <= set(tc.expected_features)
    ]
    return sorted(runnable, key=cat.preference, reverse=True)


def plan_kernels(tc: TargetCpu, op: str, name: str, cases: list[Case], bits: int, by_name: bool) -> set[str]:
    """The kernels plans of the selected `name` run on these cases, as the bench models the driver: the full kernel
    (`name` when chosen by name, else the column sibling for_columns gives each case's n), and the tail kernels the
    catalogue's tail_rows give the rows it would pad (row_chunks). `bits`: the vector length the selected kernel's
    tiles scale with (0: fixed)."""
    runnable = kernels_of(tc, op)
    selected = next(k for k in runnable if k.name == name)
    ran: set[str] = set()
    for c in cases:
        full = selected if by_name else qemu_count.for_columns(selected, runnable, c.n, bits)
        chunks = qemu_count.row_chunks(full, qemu_count.tails_of(full, runnable), c.m, bits, tc.build.arch_name)
        ran |= {full.name} | {k.name for k, _rows in chunks}
    return ran


def row_kernel_case(c: Case) -> bool:
    """A row kernel (MR = 1) does every row on its own, the driver stepping from row to row: rows past a few add
    time, not paths. Its cases: up to ROW_KERNEL_ROWS rows of every n and k, and the large shapes (k past Kc) up to
    ROW_KERNEL_MACS."""
    return c.m <= ROW_KERNEL_ROWS or (c in LARGE and c.m * c.n * c.k <= ROW_KERNEL_MACS)


# The k loops of KR = 1 (the float kernels, the reference ones) step at most 8 k at a time: k ≤ 17 runs two whole
# iterations and every remainder. Kernels of KR 4 and 8 step up to 32 (4 blocks of 8): the sweep's k ≤ 33.
KR1_SWEEP_K = 17


def k_paths(c: Case, kernel: KernelName) -> bool:
    """Whether k is one the kernel's loop needs: every k for KR 4 and 8, to KR1_SWEEP_K for KR = 1."""
    return kernel.kr > 1 or c.k <= KR1_SWEEP_K


def tail_kernel_case(c: Case, kernel: KernelName) -> bool:
    """A few-row kernel (a full kernel's tail, MR = 4) or a column sibling by name (MR = 8): one and two rows, one
    short of its tile, the tile, one past it and one past its second tile (for MR = 4 every row count to 5, and 9), of
    every n and k (k ≤ KR1_SWEEP_K for KR = 1), and the large shapes up to ROW_KERNEL_MACS; the other row counts
    and longer k only repeat those paths (the driver's row paths run whole with the most preferred kernel, its tail
    paths in the plans' m = 1…17)."""
    mr = kernel.mr
    edge = c.m in (1, 2, mr - 1, mr, mr + 1, 2 * mr + 1) and k_paths(c, kernel)
    return edge or (c in LARGE and c.m * c.n * c.k <= ROW_KERNEL_MACS)


def kernel_case(kernel: KernelName, kernels: list[KernelName]) -> Callable[[Case], bool]:
    """Which of a sweep's cases `kernel` runs by name: all for the most preferred full kernel (to k = KR1_SWEEP_K
    for KR = 1), fewer for its tail kernels, its column siblings (another NR: the same edges of every n and k; the
    plans run them at every n they win) and the widened kernels (an fp32 micro-kernel on widened panels)."""
    if kernel.mr == 1:
        return row_kernel_case
    if kernel.runs:  # gemm_f32's micro-kernel, swept in full there: its own paths are the widening packers' edges
        return lambda c: tail_kernel_case(c, kernel)
    sibling = any(kernel in qemu_count.column_siblings(k, kernels, 128) for k in kernels)
    if sibling or any(kernel in qemu_count.tails_of(k, kernels) for k in kernels):
        return lambda c: tail_kernel_case(c, kernel)
    return lambda c: k_paths(c, kernel) or c in LARGE  # every m and n; for KR = 1, k to KR1_SWEEP_K and across Kc


def every_kernel(
    qemu_run: QemuRunner,
    tc: TargetCpu,
    tmp: Path,
    op: str,
    cases: list[Case],
    scalable_only: bool | str = False,
    row_kernels: bool = True,
    tails: bool = True,
    every_case: bool = False,
    **kw,
) -> list[str]:
    """Every kernel of the op this model can run, most preferred first, each selected by name
    (isf_select_kernel): the runner must report that kernel, and its results must be right. `scalable_only`: the
    scalable kernels only, or (a catalogue kind, "sve" or "streaming") those of that kind. `every_case`: each kernel
    runs all the cases (a few chosen for what they hold), not those kernel_case picks of a sweep."""
    cat = load()
    seen = []
    oracles: dict[tuple[Case, ...], Oracle] = {}  # one per distinct batch, whatever the number of kernels
    runnable = kernels_of(tc, op)
    for kernel in runnable:
        scaling = cat.variant(kernel.variant).scalable
        kind = scalable_only if isinstance(scalable_only, str) else scaling
        if (scalable_only and not scaling) or scaling != kind:
            continue
        if kernel.mr == 1 and not row_kernels:
            continue
        if not tails and any(kernel in qemu_count.tails_of(k, runnable) for k in runnable):
            continue
        # A job of a few chosen shapes, none of them a row or tail kernel's, runs whole.
        runs_case = kernel_case(kernel, runnable)
        batch = cases if every_case else [c for c in cases if runs_case(c)] or cases
        if tuple(batch) not in oracles:
            oracles[tuple(batch)] = job_oracle(op, batch, kw.get("operands"), kw.get("epilogue", NO_EPILOGUE))
        seen.append(run_batch(qemu_run, tc, tmp, op, batch, kernel.name, oracle=oracles[tuple(batch)], **kw))
        assert seen[-1] == kernel.name, f"selected {kernel.name} by name, the runner ran {seen[-1]}"
    assert seen, f"no kernel of {op} ran"
    return seen


@pytest.mark.parametrize("op", OPS)
def test_default_kernel_is_right_on_every_model(target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op) -> None:
    """Also the negative leg: on cortex-a53 / cortex-a7 nothing may raise SIGILL. Dispatch's choice on every edge
    tile: the full sweep of each kernel, this one included, runs by name on `max` below (same code, any model)."""
    cases = edge_cases(3) + LARGE
    assert run_batch(qemu_run, target_cpu, tmp_path, op, cases).startswith(op)


@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("plan", [False, True], ids=["call", "plan"])
@pytest.mark.parametrize("op", OPS)
def test_blocks_planned_for_64_kib_of_l1d_are_right(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op, plan
) -> None:
    """Kc and Nc as a core with 64 KiB of L1D has them (ISAFORGE_CORE names one; the slice's models have 32 KiB),
    the calls and the plans crossing both: k past Kc, n past Nc."""
    cases = [LARGE[0], Case(5, 1100, 450, 450, 1100, 1100)]
    core = {"ISAFORGE_CORE": "neoverse-v1"}
    assert run_batch(qemu_run, target_cpu, tmp_path, op, cases, plan=plan, env=core).startswith(op)


@pytest.mark.parametrize("op", OPS)
def test_every_kernel_by_name_down_to_ref(target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op) -> None:
    """Every kernel runs on every model that has its features (the full sweep on `max`, a lighter one elsewhere;
    row kernels, compiled with their full kernels' flags, on `max` and on a real core in the test below)."""
    on_max = target_cpu.cpu == "max"
    cases = full_sweep() if on_max else gemmjob.sweep_cases(9, 17, pad=1)
    seen = every_kernel(qemu_run, target_cpu, tmp_path, op, cases + LARGE, row_kernels=on_max)
    assert seen[-1].endswith("_ref") and len(seen) >= 2


def first_model_with(arch: str, variant: str) -> str | None:
    """The first real core of the catalogue's model table (not QEMU's `max`) that has every feature of `variant`."""
    cat = load()
    needs = cat.variant_features(arch, variant)
    return next((cpu for cpu, feats in cat.cpus[arch].items() if cpu != "max" and needs <= set(feats)), None)


@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("op", OPS)
def test_every_kernel_by_name_on_a_real_core_with_its_variant(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op
) -> None:
    """Besides `max`, each kernel runs by name on the first real core model that has its variant, where the hwcaps
    (and the SVE vector length) are that core's. On arm no real model has the Armv8.2+ variants: `max` only."""
    arch = target_cpu.build.arch_name
    ran = []
    for kernel in kernels_of(target_cpu, op):
        model = first_model_with(arch, kernel.variant)
        if model is not None:
            tc = TargetCpu(target_cpu.build, model)
            ran.append(run_batch(qemu_run, tc, tmp_path, op, [*edge_cases(1), LARGE[1]], kernel.name))  # Kc crossed
            assert ran[-1] == kernel.name
    assert ran, f"no kernel of {op} has a real core model"


@pytest.mark.arch("aarch64")
@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("vector_bytes", SVE_VECTOR_BYTES)
@pytest.mark.parametrize("op", OPS)
def test_scalable_kernels_at_every_vector_length(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op, vector_bytes
) -> None:
    tc = TargetCpu(target_cpu.build, f"max,sve-default-vector-length={vector_bytes}")
    # At 256 bytes every n of the sweep lies inside a kernel's first tile (NR 64 to 256), and the k loops' remainders
    # do not depend on the length (swept here at 16 bytes and by name at `max`'s 64): the edge tiles, n = 129 past
    # the 128-column tiles, suffice there.
    cases = (full_sweep(19) if vector_bytes == min(SVE_VECTOR_BYTES) else edge_cases(0)) + LARGE[1:]
    # Row kernels too: their NR spans 8..128 at these lengths.
    every_kernel(qemu_run, tc, tmp_path, op, cases, scalable_only=True)


@pytest.mark.svl_sweep
@pytest.mark.arch("aarch64")
@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("svl", coverage.SVL_SWEEP)
@pytest.mark.parametrize("op", STREAMING_OPS)
def test_streaming_kernels_at_every_svl(target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op, svl) -> None:
    """Every SME kernel under the SME QEMU with FA64 off, its MR and NR following the streaming vector length while
    the SVE one is set apart (16 or 32 bytes): a kernel reading one for the other fails here. The full sweep (m
    1…17, every one inside a first SME2 tile; 70; k across Kc) and, under guard pages, every edge tile through
    pre-packed weights, on both sides of the tiles at this SVL (GCC's build: the shortest SVL, tests/conftest.py)."""
    tc = TargetCpu(target_cpu.build, coverage.sme_model(svl))
    sweep = gemmjob.sweep_cases(17, 13) if svl <= 32 else []  # k: three KR groups of 4 and a part
    seen = every_kernel(qemu_run, tc, tmp_path, op, sweep + LARGE, scalable_only="streaming")
    seen += every_kernel(qemu_run, tc, tmp_path, op, [*sme_tile_edges(svl), LARGE[1]], scalable_only="streaming",
                         packed=True, guard_pages=True)  # fmt: skip
    assert seen and all(name.endswith(("_sme", "_sme2")) for name in seen)


def sme_tile_edges(svl: int) -> list[Case]:
    """m and n on both sides of the SME tiles' MR and NR at this SVL (1VL = SVL/4 elements: 1VL × 4VL and 2VL × 2VL
    tiles, the row kernels' 2VL) and within the first tile, with k across a KR group and a pair of them; where every
    m, n ≤ 17 lies inside one tile (SVL 64 and up) these are the edge tiles the full sweep cannot reach."""
    vl = svl // 4
    ms = sorted({1, 2, 3, 17, vl - 1, vl + 1, 2 * vl - 1, 2 * vl + 1, 70})
    ns = sorted({1, 7, vl + 1, 2 * vl - 1, 2 * vl + 1, 4 * vl - 1, 4 * vl + 3})
    return [Case(m, n, k, k + 3, n + 5, n + 1) for m in ms for n in ns for k in (1, 6, 17)]


@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("op", FLOAT_OPS)
def test_nan_and_inf_propagate_in_every_kernel(target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op) -> None:
    types = gemmjob.op_types(op)
    cases = [Case(m, n, k, k, n, n) for m, n, k in [(9, 13, 7), (17, 30, 40), (1, 1, 1)]]
    # One job: the cases share A and B from their start, so each case also meets the others' NaN and infinity
    # (more rows and columns turn non-finite); the oracle computes each case from the same arrays.
    a, b = gemmjob.random_operands(types, cases, seed=7)
    for case in cases:
        gemmjob.plant_non_finite(types, a, b, case)
    every_kernel(qemu_run, target_cpu, tmp_path, op, cases, every_case=True, operands=(a, b))


# A kernel's code is the same on every model that runs it: `max` runs them all (and A64FX, in make ci, its 512-bit
# SVE with its own hwcaps).
@pytest.mark.cpus(["a64fx", "max"])
@pytest.mark.parametrize("op", OPS)
def test_prepacked_b_gives_the_same_results(target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op) -> None:
    """Every layout's packed B, through the full kernels that read it; their tail kernels read the same layout (and
    run on prepacked panels inside plans, whose weights are that format)."""
    cases = gemmjob.sweep_cases(9, 17, pad=2) + LARGE
    every_kernel(qemu_run, target_cpu, tmp_path, op, cases, packed=True, tails=False)


@pytest.mark.cpus(["max"])
def test_int8_extremes_are_exact(target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path) -> None:
    types = gemmjob.op_types("gemm_s8")
    cases = [Case(9, 13, 4099, 4099, 13, 13), Case(17, 17, 33, 33, 17, 17)]
    operands = gemmjob.random_operands(types, cases, seed=0, extremes=True)
    every_kernel(qemu_run, target_cpu, tmp_path, "gemm_s8", cases, operands=operands)


@pytest.mark.cpus(["max"])  # every kernel of the arch, each by name
@pytest.mark.parametrize("packed", [False, True], ids=["direct", "packed"])
@pytest.mark.parametrize("op", OPS)
def test_every_kernel_stays_inside_its_operands_under_guard_pages(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op, packed
) -> None:
    """A read past A or B, or a write past C or the packed buffer, or into A, B or the packed buffer, faults."""
    # Every edge-tile path (the full sweeps run without guard pages in the tests above). Each operand's mapping ends
    # at its last row's end whatever the padding, so padded rows lose nothing here and add what tight ones cannot: a
    # write between C's rows lands on guard bytes.
    cases = edge_cases(5)
    every_kernel(qemu_run, target_cpu, tmp_path, op, [*cases, LARGE[1]], packed=packed, guard_pages=True)


@pytest.mark.cpus(["cortex-a53", "cortex-a7"])
@pytest.mark.parametrize("operand", ["a", "b", "c", "packed", "-a", "-b", "-c", "-packed"])
def test_guard_pages_sit_right_at_every_operand(target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, operand) -> None:
    """The harness's own check, so the guard-page test can fail: touching the byte just past an operand's span (or
    just before its mapping's data) after a GEMM that ran cleanly must kill the runner with SIGSEGV."""
    types = gemmjob.op_types("gemm_f32")
    cases = [Case(5, 7, 9, 11, 8, 10)]
    a, b = gemmjob.random_operands(types, cases, seed=1)
    job = tmp_path / "probe.job"
    gemmjob.write_job(job, types, a, b, cases, packed=True, guard_pages=True)
    args = [str(job), str(tmp_path / "probe.out"), f"probe={operand}"]
    result = qemu_run(target_cpu.build, target_cpu.cpu, "tests/kernels/gemm_runner", args)
    assert result.signal_name == "SIGSEGV", result.describe()


@pytest.mark.arch("aarch64")
@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("vl", THREAD_VECTOR_BYTES, ids=[f"{m}to{t}" for m, t in THREAD_VECTOR_BYTES])
@pytest.mark.parametrize("op", OPS)
def test_a_thread_at_another_vector_length_gets_right_results(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op, vl
) -> None:
    """SVE vector length is per thread: the main thread warms the library up at one length, a worker thread runs
    every case at another. Each scalable variant must plan for the calling thread's length (right results, nothing
    written outside C) — a length cached process-wide gives wrong tiles and writes past C."""
    tc = TargetCpu(target_cpu.build, "max")
    # Padded rows: a write past a row's end lands on the guard bytes between rows. Past Kc, whose size follows the
    # length (NR does); Mc does not (the SVE kernels' MR is fixed).
    cases = [*edge_cases(3), LARGE[1]]
    every_kernel(qemu_run, tc, tmp_path, op, cases, scalable_only=True, vl=vl)
    every_kernel(qemu_run, tc, tmp_path, op, cases, scalable_only=True, vl=vl, packed=True)


@pytest.mark.arch("arm")
@pytest.mark.cpus(["cortex-a7"])
def test_vector_length_option_is_refused_without_sve(target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path) -> None:
    types = gemmjob.op_types("gemm_f32")
    cases = [Case(2, 2, 2, 2, 2, 2)]
    job = tmp_path / "vl.job"
    gemmjob.write_job(job, types, *gemmjob.random_operands(types, cases, seed=1), cases)
    args = [str(job), str(tmp_path / "vl.out"), "vl=16:16"]
    result = qemu_run(target_cpu.build, target_cpu.cpu, "tests/kernels/gemm_runner", args)
    assert result.returncode == 2 and "aarch64 only" in result.stderr, result.describe()


def plan_cases() -> list[Case]:
    """Edge tiles on both sides of MR and NR, a shape crossing the plan's own tiles of C (64 rows × 128 columns) and
    one crossing Kc blocks: the plan's paths, far fewer than the plain API's sweep (the driver is the same)."""
    edges = [Case(m, n, k, k + 1, n + 2, n + 3) for m in (1, 3, 9, 17) for n in (1, 13, 33) for k in (1, 17)]
    return [*edges, Case(67, 131, 9, 10, 133, 135), Case(9, 29, 1000, 1000, 29, 29)]


@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("fused", [False, True], ids=["plain", "bias_clamp"])
@pytest.mark.parametrize("op", OPS)
def test_plans_give_the_same_results(target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op, fused) -> None:
    """A plan of every kernel, alone and with its epilogue fused (bias and clamp; bias only for int32 C). The
    epilogue comes on a tile's last k block only, so the fused runs also cross Kc and the plan's tiles; without
    one, the edge tiles suffice here (tests/kernels/test_plan.c checks every kernel's plans exactly too, on small
    integers; this is the random-operand oracle with its error bound)."""
    cases = plan_cases() if fused else plan_cases()[:-2]
    types = gemmjob.op_types(op)
    epilogue = gemmjob.random_epilogue(types, max(c.n for c in cases), seed=3) if fused else NO_EPILOGUE
    every_kernel(qemu_run, target_cpu, tmp_path, op, cases, plan=True, epilogue=epilogue)


@pytest.mark.arch("aarch64")  # AArch32's variants have one tile width each
@pytest.mark.cpus(["cortex-a53", "max"])
@pytest.mark.parametrize("op", FLOAT_OPS)
def test_plans_of_dispatchs_choice_take_the_tile_width_their_n_asks_for(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op
) -> None:
    """Not chosen by name, a plan runs the column sibling padding its n the least by the variant's margin, and that
    tile's tail kernels (for_columns, row_chunks): one run per n, so the trace names that plan's kernels alone. n = 64
    and 36 pad differently in 8, 12, 16, 24 and 32 columns; 1024 by under the margin."""
    for n in (36, 64, 1024):
        run_batch(qemu_run, target_cpu, tmp_path, op, [Case(11, n, 5, 5, n, n)], plan=True)


@pytest.mark.cpus(["max"])
@pytest.mark.parametrize("op", FLOAT_OPS)
def test_nan_and_inf_go_through_a_plans_bias_and_clamp(
    target_cpu: TargetCpu, qemu_run: QemuRunner, tmp_path, op
) -> None:
    """A NaN row stays NaN through bias and clamp; an infinite column becomes a bound."""
    types = gemmjob.op_types(op)
    case = Case(9, 13, 7, 7, 13, 13)
    a, b = gemmjob.random_operands(types, [case], seed=7)
    gemmjob.plant_non_finite(types, a, b, case)
    epilogue = gemmjob.random_epilogue(types, case.n, seed=4)
    every_kernel(qemu_run, target_cpu, tmp_path, op, [case], operands=(a, b), plan=True, epilogue=epilogue)
