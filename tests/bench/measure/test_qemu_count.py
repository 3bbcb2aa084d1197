"""bench.qemu_count: QEMU log parsing and instruction tallies on a log saved from a real run (one 8x12x3 fp32 GEMM,
logged over the neon fp32 kernel only; tests/bench/fixtures/README.md), then one quick real bench run."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from isaforge import builds
from isaforge.bench.measure import qemu_count, qemu_log
from isaforge.bench.measure.executable import CodeRange
from isaforge.bench.measure.mca import objcode
from isaforge.bench.measure.mca.objcode import Insn
from isaforge.bench.measure.qemu_count import PLAIN, PLAN, StaticRunner
from isaforge.bench.scenarios.shapes import Shape
from isaforge.catalogue import load, parse_kernel_name
from isaforge.cli import main
from isaforge.errors import IsaforgeError

FIXTURES = Path(__file__).parents[1] / "fixtures"
KERNEL = "isf_ukernel_gemm_f32_8x12_neon"
ENTRY, LOOP = 0x23CF44, 0x23CFB4  # the kernel's entry and hot-loop head in the static gemm_runner
SHAPE = Shape(8, 12, 3)  # one full 8x12 tile, k_blocks = 3


def log() -> qemu_log.ExecLog:
    with (FIXTURES / "qemu_f32_8x12x3.log").open() as fh:
        return qemu_log.parse_log(fh)


def runner() -> StaticRunner:
    functions = objcode.parse_objdump((FIXTURES / "qemu_f32_8x12x3.objdump").read_text())
    body = functions[KERNEL]
    code = CodeRange(body[0].addr, body[-1].addr + 4, ((body[0].addr, body[-1].addr + 4, KERNEL),))
    insns = {i.addr: i for i in body}
    build = builds.build_for("aarch64-linux-gnu", "clang")
    return StaticRunner(build, Path("gemm_runner"), Path("libisaforge.a"), code, insns, functions, 128)


def test_parse_log_counts_executions_per_address():
    parsed = log()
    assert parsed.traces == 9 and parsed.blocks == 6 and parsed.unknown_traces == 0
    assert parsed.executions[ENTRY] == 1
    # the loop head runs k_blocks = 3 times: once inside the block that starts at the zeroing of the accumulators
    # (QEMU ends it at the page boundary 0x23d000) and twice as a block of its own
    assert parsed.executions[LOOP] == 3
    assert parsed.executions[0x23D000] == 3
    assert parsed.encodings[ENTRY] == "fc1d0fec"


def test_tally_known_answers():
    kernel = parse_kernel_name("gemm_f32_8x12_neon", load().ops)
    rc = runner().tally(kernel, SHAPE, log())
    assert rc.mac_mnemonics == {"fmla": 24 * 3}
    assert rc.macs_executed == rc.padded_macs == rc.useful_macs == 8 * 12 * 3
    assert rc.mac_check == 1.0 and rc.mac_check_ok
    assert rc.kernel_instructions == rc.instructions and rc.packing_share == 0.0
    # 3 panel loads per k step, and the 3 callee-saved register restores of the epilogue
    assert rc.loads == 3 * 3 + 3
    assert rc.hot_loop_instructions_per_mac == pytest.approx(30 / 96)
    assert rc.instructions == sum(log().executions.values())


def test_tally_refuses_a_log_of_other_code():
    parsed = log()
    parsed.encodings[ENTRY] = "d503201f"
    kernel = parse_kernel_name("gemm_f32_8x12_neon", load().ops)
    with pytest.raises(IsaforgeError, match="QEMU read d503201f"):
        runner().tally(kernel, SHAPE, parsed)


def test_calls_out_of_the_range_are_named():
    r = runner()
    r.external = {0x1000: "memcpy"}
    assert r.call_out(objcode.Insn(0x10, "bl", (f"0x{r.code.lo:x} <{KERNEL}>",))) is None  # inside libisaforge
    assert r.call_out(objcode.Insn(0x14, "bl", ("0x1000 <*ABS*+0x27c080@plt>",))) == "memcpy"  # an IFUNC stub
    assert r.call_out(objcode.Insn(0x18, "b", ("0x1000",), target=0x1000)) == "memcpy"  # a tail call
    assert r.call_out(objcode.Insn(0x1C, "bl", ("0x2000 <getenv>",))) == "0x2000"  # no name known
    assert r.call_out(objcode.Insn(0x20, "b.ne", ("0x1000",), target=0x1000)) is None
    assert r.call_out(objcode.Insn(0x24, "blr", ("x8",))) is None


def test_padded_macs_round_up_to_tiles_and_scale_sve():
    ops = load().ops
    assert qemu_count.padded_macs(parse_kernel_name("gemm_s8_8x8x8_i8mm", ops), Shape(10, 10, 10), 128) == 16**3
    svei8mm = parse_kernel_name("gemm_s8_8x4x8_svei8mm", ops)
    assert qemu_count.padded_macs(svei8mm, Shape(10, 10, 10), 128) == 16 * 12 * 16
    assert qemu_count.padded_macs(svei8mm, Shape(10, 10, 10), 256) == 16 * 16 * 16


def test_a_plan_tally_refuses_a_log_without_its_window():
    kernel = parse_kernel_name("gemm_f32_8x12_neon", load().ops)
    with pytest.raises(IsaforgeError, match="isf_gemm_run … isf_gemm_destroy window"):
        runner().tally(kernel, SHAPE, log(), PLAN)
    assert runner().tally(kernel, SHAPE, log(), PLAN, status=qemu_count.ISF_ERR_UNSUPPORTED).instructions == 0


def test_window_addresses_come_from_the_symbol_table():
    r = runner()
    with pytest.raises(IsaforgeError, match="no isf_gemm_run, isf_gemm_destroy"):
        r.window(PLAN)
    r.code = CodeRange(0x1000, 0x4000, ((0x2000, 0x2800, "isf_gemm_run"), (0x3000, 0x3100, "isf_gemm_destroy")))
    assert r.window(PLAN) == (0x2000, 0x3000) and r.window(PLAIN) is None


SMMLA = Insn(0x10, "smmla", ("v16.4s", "v0.16b", "v4.16b"))
BFMMLA_SVE = Insn(0x10, "bfmmla", ("z16.s", "z0.h", "z4.h"))
FMLA = Insn(0x10, "fmla", ("v16.4s", "v0.4s", "v4.s[0]"))


def kernel(name: str):
    return parse_kernel_name(name, load().ops)


def test_one_row_matrix_kernels_count_half_the_nominal_macs():
    assert qemu_count.useful_macs(kernel("gemm_s8_8x8x8_i8mm"), SMMLA, 128) == 32
    assert qemu_count.useful_macs(kernel("gemm_s8_1x8x8_i8mm"), SMMLA, 128) == 16
    assert qemu_count.useful_macs(kernel("gemm_bf16_1x4x4_svebf16"), BFMMLA_SVE, 256) == 16  # 32 nominal at 256b
    assert qemu_count.useful_macs(kernel("gemm_f32_1x12_neon"), FMLA, 128) == 4  # fmla lanes are all real
    assert qemu_count.useful_macs(None, SMMLA, 128) == 32


def test_padded_macs_do_not_round_m_up_when_a_row_kernel_takes_the_rest():
    full = kernel("gemm_f32_8x12_neon")
    assert qemu_count.padded_macs(full, Shape(49, 256, 2304), 128) == 56 * 264 * 2304
    assert qemu_count.padded_macs(full, Shape(49, 256, 2304), 128, rows=49) == 49 * 264 * 2304
    assert qemu_count.padded_macs(full, Shape(1, 1024, 1024), 128, rows=1) == 1 * 1032 * 1024


@pytest.mark.parametrize(
    ("m", "chunks"),
    [
        (1, [("row", 1)]),
        (2, [("row", 1)] * 2),  # unlisted in tail_rows, a row kernel takes up to MR / 2
        (3, [("full", 4)]),
        (9, [("full", 8), ("row", 1)]),
    ],
)
def test_row_chunks_without_tail_rows_follow_mr_over_two(m: int, chunks: list[tuple[str, int]]) -> None:
    full, row = kernel("gemm_s8_4x4x16_neon"), kernel("gemm_s8_1x4x16_neon")
    assert "gemm_s8_1x4x16_neon" not in load().variant("neon").tail_rows_on("aarch64")
    names = {"full": full, "row": row}
    assert qemu_count.row_chunks(full, [row], m, 128, "aarch64") == [(names[k], n) for k, n in chunks]


def test_row_chunks_give_a_four_row_kernel_four_rows_at_a_time() -> None:
    """neon's fp32 kernels: the row kernel takes up to 3 rows, the 4-row kernel up to 7, 4 at a time."""
    full, four, row = (kernel(f"gemm_f32_{t}_neon") for t in ("8x12", "4x12", "1x12"))
    assert qemu_count.row_chunks(full, [four, row], 3, 128, "aarch64") == [(row, 1)] * 3
    assert qemu_count.row_chunks(full, [four, row], 6, 128, "aarch64") == [(four, 4), (row, 1), (row, 1)]
    assert qemu_count.row_chunks(full, [four, row], 15, 128, "aarch64") == [
        (full, 8),
        (four, 4),
        (row, 1),
        (row, 1),
        (row, 1),
    ]


def test_row_chunks_take_the_tail_kernel_of_the_fewest_tail_rows_that_reach_the_rows_left() -> None:
    """SME2's row kernel takes at most 2 rows (tail_rows); the 2VL tile's MR is 16 at a 256-bit SVL."""
    full, row = kernel("gemm_f32_8x8_sme2"), kernel("gemm_f32_1x8_sme2")
    assert qemu_count.row_chunks(full, [row], 2, 256, "aarch64") == [(row, 1), (row, 1)]
    assert qemu_count.row_chunks(full, [row], 3, 256, "aarch64") == [(full, 16)]
    assert qemu_count.row_chunks(full, [row], 34, 256, "aarch64") == [(full, 32), (row, 1), (row, 1)]


def test_a_tail_rows_entry_per_arch_holds_on_its_arch_only() -> None:
    """The 8-column row kernel takes 3 rows after AArch64's 8x8 tiles; on AArch32, where the 4x8 kernel is the full
    one, the default MR / 2."""
    row = kernel("gemm_f32_1x8_neon")
    assert qemu_count.row_chunks(kernel("gemm_f32_8x8_neon"), [row], 3, 128, "aarch64") == [(row, 1)] * 3
    assert qemu_count.row_chunks(kernel("gemm_f32_4x8_neon"), [row], 3, 128, "arm") == [
        (kernel("gemm_f32_4x8_neon"), 4)
    ]
    assert qemu_count.row_chunks(kernel("gemm_f32_4x8_neon"), [row], 2, 128, "arm") == [(row, 1)] * 2


@pytest.mark.parametrize(
    ("n", "tile"),
    [(64, "8x8"), (128, "8x8"), (256, "8x8"), (1024, "8x12"), (2304, "8x12"), (36, "8x12"), (1, "8x8"), (13, "8x8")],
)
def test_a_column_sibling_runs_where_it_pads_n_by_the_margin_less(n: int, tile: str) -> None:
    """neon's margin is 2 %: 8 columns at 1024 (1024 against 1032) save 0.8 %, at 128 (against 132) 3 %; equal
    padding keeps the preferred 12-column tile; fewer rows or another op are not siblings."""
    names = ["gemm_f32_8x12_neon", "gemm_f32_8x8_neon", "gemm_f32_4x8_neon", "gemm_f16_8x16_fp16"]
    kernels = [kernel(name) for name in names]
    assert qemu_count.for_columns(kernels[0], kernels, n, 128) == kernel(f"gemm_f32_{tile}_neon")


def test_a_less_preferred_kernel_keeps_its_columns() -> None:
    """Only kernels ranked below the selected one are its siblings (driver.c scans down the table)."""
    kernels = [kernel("gemm_f32_8x12_neon"), kernel("gemm_f32_8x8_neon")]
    assert qemu_count.for_columns(kernels[1], kernels, 36, 128) == kernels[1]


def matrix_runner() -> StaticRunner:
    """A runner whose build has the i8mm full kernel and its row kernel; the row kernel's loop: 4 smmla, 2 loads,
    a subs and the branch back (8 instructions for 4 × 16 useful MACs)."""
    r = runner()
    loop = [SMMLA, SMMLA, SMMLA, SMMLA, Insn(0x20, "ldr", ("q0", "[x1]")), Insn(0x24, "ldr", ("q4", "[x2]")),
            Insn(0x28, "subs", ("x0", "x0", "#1")), Insn(0x2C, "b.ne", ("0x10",), target=0x10)]  # fmt: skip
    loop = [Insn(0x10 + 4 * n, i.mnemonic, i.operands, target=i.target) for n, i in enumerate(loop)]
    r.functions = {"isf_ukernel_gemm_s8_8x8x8_i8mm": [], "isf_ukernel_gemm_s8_1x8x8_i8mm": loop}
    return r


def test_the_bulk_kernel_is_the_row_kernel_below_mr_and_the_full_one_above():
    r = matrix_runner()
    full, row = kernel("gemm_s8_8x8x8_i8mm"), kernel("gemm_s8_1x8x8_i8mm")
    assert r.tail_kernels(full) == [row]
    assert r.loop_kernel(full, Shape(1, 1024, 1024)) == row
    assert r.loop_kernel(full, Shape(49, 256, 2304)) == full
    assert r.hot_loop_ideal(row) == pytest.approx(8 / 64)  # not 8 / 128: the zero row's MACs do not count
    assert runner().tail_kernels(kernel("gemm_f32_8x12_neon")) == []  # no row kernel built: the full one


def test_a_row_kernel_run_counts_useful_macs_and_m_is_not_padded():
    """m = 1 through the row kernel: 8 k blocks, one loop iteration each (4 smmla = 64 useful MACs = 1·8·8)."""
    r = matrix_runner()
    body = r.functions["isf_ukernel_gemm_s8_1x8x8_i8mm"]
    r.insns = {i.addr: i for i in body}
    r.code = CodeRange(0x10, 0x30, ((0x10, 0x30, "isf_ukernel_gemm_s8_1x8x8_i8mm"),))
    ran = qemu_log.ExecLog(executions=Counter({i.addr: 8 for i in body}), window_opened=True, window_closed=True)
    rc = r.tally(kernel("gemm_s8_8x8x8_i8mm"), Shape(1, 8, 64), ran, PLAN)
    assert rc.macs_by_kernel == {"gemm_s8_1x8x8_i8mm": 512} and rc.macs_executed == 512
    assert rc.padded_macs == 512 and rc.mac_check == 1.0  # not 8 rows: the row kernel took the one row
    assert rc.loop_kernel == "gemm_s8_1x8x8_i8mm" and rc.over_hot_loop == pytest.approx(1.0)


def test_quick_real_bench_run(tmp_path, capsys):
    """llvm-mca on one kernel and one core, and one small GEMM under QEMU, end to end."""
    out = tmp_path / "bench.json"
    md = tmp_path / "bench.md"
    argv = ["bench", "--cores", "neoverse-v2", "--ops", "f32", "--variants", "neon", "--shapes", "16x24x8",
            "--no-plans", "--json", str(out), "--markdown", str(md), "--quiet"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    data = json.loads(out.read_text())
    rows = {r["kernel"]: r for r in data["mca"]}  # the variant's kernels: the full ones and their tail kernels
    assert set(rows) == {f"gemm_f32_{rows}x{cols}_neon" for rows in (8, 4, 1) for cols in (12, 8)}
    row = rows["gemm_f32_8x12_neon"]
    assert (row["core"], row["status"]) == ("neoverse-v2", "ok")
    assert 95.0 <= row["percent_of_peak"] <= 100.5
    (run,) = data["qemu"]
    assert run["kernel"] == "gemm_f32_8x12_neon" and run["shape"] == "16x24x8"
    assert run["mac_check"] == 1.0 and run["macs_executed"] == 16 * 24 * 8
    assert run["instructions"] > run["mac_instructions"] == 16 * 24 * 8 // 4
    assert 0.0 < run["packing_share"] < 1.0
    # the work buffer is allocated and freed once, and start-up reads the cores' L1D from /proc/cpuinfo once (one
    # line buffer of getline's freed); whatever libc the runtime calls is counted apart, per callee
    calls = run["calls_out"]
    assert (calls["memalign"], calls["free"], calls["fopen"], calls["fclose"]) == (1, 2, 1, 1)
    assert set(run["libc_by_call"]) == set(run["calls_out"]) and all(n > 0 for n in run["libc_by_call"].values())
    assert run["libc_instructions"] == sum(run["libc_by_call"].values())
    text = md.read_text()
    assert "Calls out of libisaforge (to libc; the instructions run inside them are the *In libc calls* column)" in text
    assert f"{run['libc_instructions']:,} (" in text
    assert text.startswith("# libisaforge performance")
    assert "`isaforge bench --cores neoverse-v2 --ops f32 --variants neon --shapes 16x24x8" in text
    assert "--no-plans" in text and "## Plans" not in text
