"""bench.mca: hot-loop finding, MAC counting, llvm-mca parsing and peaks, on fixed inputs saved from real runs of
llvm-objdump-19 and llvm-mca-19 (tests/bench/fixtures/README.md), then against the real tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from isaforge.bench import mca, report
from isaforge.catalogue import load, parse_kernel_name
from isaforge.cli import main

FIXTURES = Path(__file__).with_name("fixtures")
F32 = "isf_ukernel_gemm_f32_8x12_neon"


def function(fixture: str, name: str) -> list[mca.Insn]:
    return mca.parse_objdump((FIXTURES / fixture).read_text())[name]


def kernel_loop(fixture: str, name: str) -> mca.KernelLoop:
    body = function(fixture, name)
    kind = mca.kernel_kind(body)
    kernel = parse_kernel_name(name.removeprefix(mca.KERNEL_PREFIX), load().ops)
    return mca.KernelLoop(kernel, kind, mca.hot_loop(body, kind), len(body))


def insn(text: str) -> mca.Insn:
    mnemonic, _, rest = text.partition(" ")
    return mca.Insn(0, mnemonic, mca.split_operands(rest))


@pytest.mark.parametrize(
    ("text", "sve_bits", "expected"),
    [
        ("fmla v31.4s, v8.4s, v10.s[0]", 0, 4),
        ("fmla v0.8h, v1.8h, v2.h[7]", 0, 8),
        ("sdot v3.4s, v8.16b, v10.4b[1]", 0, 16),
        ("smmla v3.4s, v8.16b, v10.16b", 0, 32),
        ("bfmmla v3.4s, v8.8h, v10.8h", 0, 16),
        ("smull v8.8h, v6.8b, v3.8b", 0, 8),
        ("smull2 v8.8h, v6.16b, v3.16b", 0, 8),
        ("sadalp v20.4s, v8.8h", 0, 0),
        ("ldp q8, q9, [x2]", 0, 0),
        ("fmla z2.s, z0.s, z1.s[3]", 128, 4),
        ("fmla z2.s, z0.s, z1.s[3]", 256, 8),
        ("fmla z2.h, z0.h, z1.h[3]", 128, 8),
        ("sdot z2.s, z0.b, z1.b[1]", 256, 32),
        ("smmla z2.s, z0.b, z1.b", 128, 32),
        ("smmla z2.s, z0.b, z1.b", 256, 64),
        ("bfmmla z2.s, z0.h, z1.h", 256, 32),
    ],
)
def test_macs_per_instruction(text, sve_bits, expected):
    assert mca.macs(insn(text), sve_bits) == expected


def test_kinds_tell_forms_apart():
    assert mca.mac_kind(insn("fmla v31.4s, v8.4s, v10.s[0]")) == "fmla v.4s[i]"
    assert mca.mac_kind(insn("fmla v31.4s, v8.4s, v10.4s")) == "fmla v.4s"
    assert mca.mac_kind(insn("smull2 v8.8h, v6.16b, v3.16b")) == mca.mac_kind(insn("smull v8.8h, v6.8b, v3.8b"))
    assert mca.mac_kind(insn("smmla z2.s, z0.b, z1.b")) == "smmla z.s"
    assert mca.mac_kind(insn("sadalp v20.4s, v8.8h")) is None


def test_objdump_parsing_keeps_branch_targets():
    body = function("clang_gemm_f32_8x12_neon.objdump", F32)
    assert body[0].addr == 0 and body[0].mnemonic == "str"
    backward = [i for i in body if i.target is not None and i.target <= i.addr]
    assert ("b.ne", 0xE4, 0x70) in [(i.mnemonic, i.addr, i.target) for i in backward]
    assert body[4].operands == ("v31.2d", "#0000000000000000")  # movi; the `// =…` comments are dropped


def test_hot_loop_of_the_fp32_kernel():
    kl = kernel_loop("clang_gemm_f32_8x12_neon.objdump", F32)
    assert kl.kind == "fmla v.4s[i]"
    assert kl.loop is not None
    assert (kl.loop.start, kl.loop.end, len(kl.loop.body)) == (0x70, 0xE4, 30)
    assert kl.loop_mac_instructions == 24
    assert kl.loop_macs(0) == 96  # 8x12 tile, one k step
    src = mca.mca_source(kl.loop)
    assert src.startswith(".Lloop:\n") and "\tb.ne\t.Lloop\n.Lexit:\n" in src
    assert "<" not in src


def test_hot_loop_of_the_neon_int8_kernel_and_its_own_mix():
    kl = kernel_loop("gcc_gemm_s8_4x4x16_neon.objdump", "isf_ukernel_gemm_s8_4x4x16_neon")
    assert kl.kind == "smull v.8h"
    assert kl.loop is not None and kl.loop_macs(0) == 4 * 4 * 16
    stream = mca.reference_stream(kl.loop.body, kl.kind)
    assert "smull + smull2 + 2×sadalp" in stream.description
    mnemonics = [i.mnemonic for i in stream.insns]
    assert mnemonics[:4] == ["smull", "smull2", "sadalp", "sadalp"]
    groups = len(stream.insns) // 4
    assert groups >= 16 and stream.macs(0) == 16 * groups and stream.mac_instructions == 2 * groups
    # each sadalp adds a product of its own group into its own accumulator, never one of another group
    accumulators = [i.operands[0] for i in stream.insns if i.mnemonic == "sadalp"]
    assert len(set(accumulators)) == groups
    for g in range(groups):
        smull, smull2, add1, add2 = stream.insns[4 * g : 4 * g + 4]
        assert add1.operands[1] == smull.operands[0] and add2.operands[1] == smull2.operands[0]


def test_sve_loop_scales_with_the_vector_length():
    kl = kernel_loop("clang_gemm_s8_8x4x8_svei8mm.objdump", "isf_ukernel_gemm_s8_8x4x8_svei8mm")
    assert kl.kind == "smmla z.s"
    assert kl.loop is not None and kl.loop_mac_instructions == 16  # two k blocks of 8 smmla
    assert kl.loop_macs(128) == 8 * 4 * 8 * 2
    assert kl.loop_macs(256) == 2 * kl.loop_macs(128)
    stream = mca.reference_stream(kl.loop.body, kl.kind)
    assert len(stream.insns) >= 16 and len({i.operands[0] for i in stream.insns}) == len(stream.insns)
    assert all(i.operands[1:] == ("z0.b", "z1.b") for i in stream.insns)


def test_a_kernel_without_a_hot_loop_is_reported_not_dropped():
    body = function("clang_gemm_f32_8x12_neon.objdump", F32)
    straight = [i for i in body if i.addr < 0x70]  # the code before the k loop: MAC-free, no backward branch
    assert mca.hot_loop(straight, mca.kernel_kind(straight)) is None
    no_loop = mca.KernelLoop(parse_kernel_name("gemm_f32_8x12_neon", load().ops), None, None, len(straight))
    row = mca.CoreResult("gemm_f32_8x12_neon", "gemm_f32", "neon", "clang", "neoverse-n1", "no hot loop")
    result = report.BenchResult("isaforge bench", ["clang"], ["neoverse-n1"], [], 128, ran_qemu=False)
    result.mca, result.hot_loops = [row], [report.HotLoop.of("clang", no_loop)]
    goal = report.evaluate_goals(result)[0]
    assert goal.met is False and "gemm_f32_8x12_neon: hot loop not found" in goal.detail
    assert "hot loop not found" in report.markdown(result, [goal])


def test_parse_saved_llvm_mca_output_of_a_loop():
    result = mca.parse_mca((FIXTURES / "mca_f32_8x12_neon_n1.txt").read_text())
    assert (result.iterations, result.instructions, result.total_cycles) == (500, 15000, 6011)
    assert result.cycles_per_iteration == pytest.approx(12.022)
    assert result.block_rthroughput == 12.0
    assert ("[5]", "N1UnitV0") in result.resources and ("[6]", "N1UnitV1") in result.resources
    units = result.unit_pressure()
    assert units["N1UnitV0"] == units["N1UnitV1"] == 12.0
    assert len(result.by_insn) == 30 and result.by_insn[-1][0].startswith("b.ne")
    assert mca.explain(result, "fmla v.4s[i]") == "N1UnitV0/N1UnitV1 busy 12.00 of 12.02 cycles"


def test_peak_and_percent_from_saved_outputs():
    kl = kernel_loop("clang_gemm_f32_8x12_neon.objdump", F32)
    assert kl.loop is not None and kl.kind is not None
    stream = mca.reference_stream(kl.loop.body, kl.kind)
    assert stream.mac_instructions == 30 and stream.macs(0) == 120
    ref = mca.parse_mca((FIXTURES / "mca_ref_fmla_4s_n1.txt").read_text())
    peak = mca.peak_from(stream, "neoverse-n1", "+neon", ref)
    assert peak.cycles == pytest.approx(7506 / 500)
    assert peak.issue_rate == pytest.approx(30 / 15.012)
    assert peak.macs_per_cycle == pytest.approx(120 / 15.012)
    loop = mca.parse_mca((FIXTURES / "mca_f32_8x12_neon_n1.txt").read_text())
    res = mca.CoreResult(kl.kernel.name, kl.kernel.op, "neon", "clang", "neoverse-n1", "ok", kl.kind, "+neon")
    mca.fill(res, kl, loop, peak)
    assert res.macs_per_cycle == pytest.approx(96 / 12.022)
    assert res.percent_of_peak == pytest.approx(100 * (96 / 12.022) / (120 / 15.012))
    assert res.meets_goal


# -- against the real tools ---------------------------------------------------------------------------------------
def test_real_peak_is_the_models_issue_rate():
    kl = kernel_loop("clang_gemm_f32_8x12_neon.objdump", F32)
    assert kl.loop is not None and kl.kind is not None
    stream = mca.reference_stream(kl.loop.body, kl.kind)
    n1 = mca.measure_peak(stream, "neoverse-n1", "+neon")  # two 128-bit FP pipes
    v2 = mca.measure_peak(stream, "neoverse-v2", "+neon")  # four
    assert n1.issue_rate == pytest.approx(2.0, rel=0.01)
    assert v2.issue_rate == pytest.approx(4.0, rel=0.01)
    assert n1.cycles == pytest.approx(
        mca.parse_mca((FIXTURES / "mca_ref_fmla_4s_n1.txt").read_text()).cycles_per_iteration
    )


def test_core_isa_from_llvm_agrees_with_the_catalogue():
    cpus = load().cpus["aarch64"]
    for core in ("neoverse-n1", "neoverse-n2", "neoverse-v1", "cortex-a76", "cortex-a710"):
        assert mca.core_features(core) == set(cpus[core]), core
    assert mca.core_features("neoverse-v2") == mca.core_features("neoverse-n2")


def test_marketing_names_map_to_modeled_cores():
    got = {row["mcpu"]: (row["llvm_model"], row["modeled_as"]) for row in mca.core_map()}
    assert got["cortex-a710"] == ("N2", "neoverse-n2")
    assert got["cortex-x2"] == ("N2", "neoverse-n2")
    assert got["cortex-a76"][1] == "neoverse-n1"  # LLVM 19 has no A76 model: the N1 stands in
    for core in mca.CORES:
        assert got[core][1] == core


# -- command-line errors ------------------------------------------------------------------------------------------
def one_line_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    return err


def test_unknown_core_lists_the_valid_ones(capsys):
    err = one_line_error(capsys, ["bench", "--cores", "neoverse-n1,cortex-a53"])
    assert "unknown core 'cortex-a53'" in err and all(c in err for c in mca.CORES)


def test_unknown_op_lists_the_valid_ones(capsys):
    err = one_line_error(capsys, ["bench", "--ops", "f32,gemm_f64"])
    assert "unknown op 'gemm_f64'" in err and all(op in err for op in load().ops)


def test_missing_llvm_mca_names_its_package(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    err = one_line_error(capsys, ["bench", "--no-qemu"])
    assert "llvm-mca-19 not found" in err and "llvm-19" in err


def test_missing_qemu_names_its_package(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    err = one_line_error(capsys, ["bench", "--no-mca"])
    assert "qemu-aarch64 not found" in err and "qemu-user" in err
