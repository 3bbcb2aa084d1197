"""bench.qemu_count: QEMU log parsing and instruction tallies on a log saved from a real run (one 8x12x3 fp32 GEMM,
logged over the neon fp32 kernel only; tests/bench/fixtures/README.md), then one quick real bench run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from isaforge import builds
from isaforge.bench import qemu_count
from isaforge.bench.mca import objcode
from isaforge.bench.qemu_count import CodeRange, Shape, StaticRunner
from isaforge.catalogue import load, parse_kernel_name
from isaforge.cli import main
from isaforge.errors import IsaforgeError

FIXTURES = Path(__file__).with_name("fixtures")
KERNEL = "isf_ukernel_gemm_f32_8x12_neon"
ENTRY, LOOP = 0x23CF44, 0x23CFB4  # the kernel's entry and hot-loop head in the static gemm_runner
SHAPE = Shape(8, 12, 3)  # one full 8x12 tile, k_blocks = 3


def log() -> qemu_count.ExecLog:
    with (FIXTURES / "qemu_f32_8x12x3.log").open() as fh:
        return qemu_count.parse_log(fh)


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


def test_parse_shapes():
    assert qemu_count.parse_shapes("64, 256x256x64") == [Shape(64, 64, 64), Shape(256, 256, 64)]
    for bad in ("64x64", "0x1x1", "axbxc", ""):
        with pytest.raises(IsaforgeError):
            qemu_count.parse_shapes(bad)


def test_parse_nm():
    text = "000000000023cf44 00000000000002e8 T isf_ukernel_gemm_f32_8x12_neon\n0000000000000020 b .LANCHOR0\n"
    assert qemu_count.parse_nm(text) == [(0x23CF44, 0x2E8, "T", "isf_ukernel_gemm_f32_8x12_neon")]


def test_quick_real_bench_run(tmp_path, capsys):
    """llvm-mca on one kernel and one core, and one small GEMM under QEMU, end to end."""
    out = tmp_path / "bench.json"
    md = tmp_path / "bench.md"
    argv = ["bench", "--cores", "neoverse-v2", "--ops", "f32", "--variants", "neon", "--shapes", "16x24x8",
            "--no-plans", "--json", str(out), "--markdown", str(md), "--quiet"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    data = json.loads(out.read_text())
    rows = {r["kernel"]: r for r in data["mca"]}  # the variant's kernels: the full one and its row kernel
    assert set(rows) == {"gemm_f32_8x12_neon", "gemm_f32_1x12_neon"}
    row = rows["gemm_f32_8x12_neon"]
    assert (row["core"], row["status"]) == ("neoverse-v2", "ok")
    assert 95.0 <= row["percent_of_peak"] <= 100.5
    (run,) = data["qemu"]
    assert run["kernel"] == "gemm_f32_8x12_neon" and run["shape"] == "16x24x8"
    assert run["mac_check"] == 1.0 and run["macs_executed"] == 16 * 24 * 8
    assert run["instructions"] > run["mac_instructions"] == 16 * 24 * 8 // 4
    assert 0.0 < run["packing_share"] < 1.0
    # the work buffer is the only memory call out of the library: packing and the driver copy without libc
    assert run["calls_out"]["memalign"] == run["calls_out"]["free"] == 1
    assert not {name for name in run["calls_out"] if name.startswith(("mem", "__mem"))} - {"memalign"}
    text = md.read_text()
    assert "Calls out of libisaforge (to libc; their instructions are not counted): " in text
    assert text.startswith("# libisaforge performance")
    assert "`isaforge bench --cores neoverse-v2 --ops f32 --variants neon --shapes 16x24x8" in text
    assert "--no-plans" in text and "## Plans" not in text
