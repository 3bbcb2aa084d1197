"""Whole-call modeled cycles: blocks cut from QEMU's log at the markers, words decoded by the real llvm-mc, blocks
priced by the real llvm-mca, a core's peak per precision; then a real program under QEMU whose window runs a known
loop a known number of times, so every count has an exact answer."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from isaforge import process
from isaforge.bench.measure import wholecall
from isaforge.bench.measure.wholecall import BlockProfile, Decoder, Pricer, core_model
from isaforge.errors import IsaforgeError

NOP, RET = "d503201f", "d65f03c0"
FMLA_4S = "4e21cc10"  # fmla v16.4s, v0.4s, v1.4s
INVALID = "ffffffff"

# begin (0x1000) → a loop block (0x2000) twice → end (0x3000); a block before begin and one after end.
MARKED_LOG = f"""\
IN: before
0x00000800:  {NOP}  nop
Trace 0: 0x7f00 [00000000/0000000000000800/00000000/00000000]
IN: begin
0x00001000:  {RET}  ret
Trace 0: 0x7f00 [00000000/0000000000001000/00000000/00000000]
IN: loop
0x00002000:  {FMLA_4S}  fmla
0x00002004:  {NOP}  nop
Trace 0: 0x7f10 [00000000/0000000000002000/00000000/00000000]
Trace 0: 0x7f10 [00000000/0000000000002000/00000000/00000000]
IN: end
0x00003000:  {RET}  ret
Trace 0: 0x7f20 [00000000/0000000000003000/00000000/00000000]
Trace 0: 0x7f00 [00000000/0000000000000800/00000000/00000000]
"""


def test_block_profile_counts_the_blocks_between_the_markers(tmp_path: Path) -> None:
    log = tmp_path / "q.log"
    log.write_text(MARKED_LOG)
    profile = wholecall.block_profile(log, (0x1000, 0x3000))
    assert profile.runs == {(RET,): 1, (FMLA_4S, NOP): 2}
    assert profile.instructions == 5


def test_block_profile_refuses_a_window_that_never_closes(tmp_path: Path) -> None:
    log = tmp_path / "q.log"
    log.write_text(MARKED_LOG)
    with pytest.raises(IsaforgeError, match="never closed"):
        wholecall.block_profile(log, (0x1000, 0x4000))
    with pytest.raises(IsaforgeError, match="never opened"):
        wholecall.block_profile(log, (0x5000, 0x3000))


def test_a_block_qemu_cut_where_the_core_runs_on_is_priced_with_the_next() -> None:
    """A loop straddling a page: its head (0xff8, ending on an fmla) always runs on into its tail at 0x1000, which
    is also entered on its own twice; a block ending on a ret (0x2ffc) is left alone though 0x3000 follows it."""
    head, tail, ret_end, after = (0xFF8, 0xFFC), (0x1000, 0x1004), (0x2FF8, 0x2FFC), (0x3000,)
    encodings = {0xFF8: NOP, 0xFFC: FMLA_4S, 0x1000: FMLA_4S, 0x1004: RET, 0x2FF8: NOP, 0x2FFC: RET, 0x3000: NOP}
    runs = Counter({head: 10, tail: 12, ret_end: 3, after: 3})
    assert wholecall.joined_runs(runs, encodings) == {head + tail: 10, tail: 2, ret_end: 3, after: 3}
    profile = wholecall.profile_of(runs, encodings)
    assert profile.runs == {(NOP, FMLA_4S, FMLA_4S, RET): 10, (FMLA_4S, RET): 2, (NOP, RET): 3, (NOP,): 3}
    assert profile.instructions == sum(len(b) * n for b, n in runs.items())
    # A tail that ran less often than the head (a window cut between them) is not joined: no run is invented.
    assert wholecall.joined_runs(Counter({head: 10, tail: 4}), encodings) == {head: 10, tail: 4}


def test_decoder_keeps_each_word_in_place_around_an_invalid_one() -> None:
    got = Decoder().decode([FMLA_4S, INVALID, RET])
    assert got[INVALID] is None
    assert (got[FMLA_4S].mnemonic, got[FMLA_4S].operands) == ("fmla", ("v16.4s", "v0.4s", "v1.4s"))
    assert got[RET].mnemonic == "ret"


def test_decoder_reads_sve_and_matrix_instructions() -> None:
    # fmla z0.s, p0/m, z1.s, z2.s and smmla v0.4s, v1.16b, v2.16b, which QEMU's own disassembler cannot all read
    got = Decoder().decode(["65a20020", "4e82a420"])
    assert got["65a20020"].text == "fmla\tz0.s, p0/m, z1.s, z2.s"
    assert got["4e82a420"].mnemonic == "smmla"


def test_parse_regions_reads_each_regions_cycles_per_iteration() -> None:
    text = "[0] Code Region - b3\n\nIterations:        100\nTotal Cycles:      250\n\n[1] Code Region - b7\n" \
           "Iterations:        100\nTotal Cycles:      803\n"  # fmt: skip
    assert wholecall.parse_regions(text) == {3: 2.5, 7: 8.03}


def test_a_dependent_chain_costs_its_latency_and_independent_work_its_throughput() -> None:
    pricer = Pricer(core_model("neoverse-n1"), Decoder())
    chain = (FMLA_4S,)  # one accumulator: each iteration waits for the last (N1: 4-cycle FMLA latency)
    spread = ("4e21cc10", "4e21cc11", "4e21cc12", "4e21cc13", "4e21cc14", "4e21cc15", "4e21cc16", "4e21cc17")
    prices = pricer.cycles([chain, spread])
    assert 3.5 <= prices[chain] <= 4.5
    assert 3.5 <= prices[spread] <= 4.5  # 8 independent FMLAs on N1's two vector pipes
    call = wholecall.model_call(BlockProfile(runs={spread: 1000, (INVALID,): 3}), pricer)
    assert call.macs_executed == 1000 * 8 * 4
    assert call.instructions == 8003
    assert call.undecoded == 3
    assert call.cycles == pytest.approx(1000 * prices[spread] + 3)


def test_core_peak_takes_the_best_form_the_core_has() -> None:
    assert wholecall.core_peak("neoverse-n1", "fp32").macs_per_cycle == pytest.approx(8, rel=0.01)
    n2 = wholecall.core_peak("neoverse-n2", "int8")
    assert n2.kind.startswith("smmla") and n2.macs_per_cycle == pytest.approx(64, rel=0.01)
    assert wholecall.core_peak("neoverse-n1", "int8").kind.startswith("sdot")  # N1 has no I8MM
    assert wholecall.core_peak("neoverse-n1", "bf16").kind.startswith("fmla")  # nor BF16: widened to fp32


def test_core_model_by_any_of_its_names() -> None:
    assert core_model("max").mcpu == "neoverse-v2"
    assert core_model("Neoverse V1").qemu_cpu == "neoverse-v1"
    with pytest.raises(IsaforgeError, match="choose from cortex-a55"):
        core_model("cortex-a53")


# A real program: between the markers, a loop of LOOP_TRIPS iterations of 4 FMLAs + subs + cbnz.
LOOP_TRIPS = 1000
PROGRAM = r"""
__attribute__((noinline)) void isf_bench_begin(void) { __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void isf_bench_end(void) { __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void loop(long n) {
    __asm__ volatile("1:\n fmla v16.4s, v0.4s, v1.4s\n fmla v17.4s, v0.4s, v1.4s\n fmla v18.4s, v0.4s, v1.4s\n"
                     " fmla v19.4s, v0.4s, v1.4s\n subs %0, %0, #1\n b.ne 1b\n"
                     : "+r"(n) : : "v16", "v17", "v18", "v19", "cc");
}
int main(void) { isf_bench_begin(); loop(%TRIPS%); isf_bench_end(); return 0; }
"""


@pytest.mark.skipif(shutil.which("aarch64-linux-gnu-gcc") is None, reason="no aarch64 cross compiler")
def test_a_real_loop_under_qemu_counts_exactly(tmp_path: Path) -> None:
    src, exe, log = tmp_path / "loop.c", tmp_path / "loop", tmp_path / "q.log"
    src.write_text(PROGRAM.replace("%TRIPS%", str(LOOP_TRIPS)))
    process.run(["aarch64-linux-gnu-gcc", "-O2", "-no-pie", "-static", str(src), "-o", str(exe)], what="cc")
    nm = process.run(["llvm-nm-19", str(exe)], what="nm").stdout
    addr = {p[2]: int(p[0], 16) for p in map(str.split, nm.splitlines()) if len(p) == 3}
    cmd = ["qemu-aarch64", "-cpu", "neoverse-n1", "-d", "in_asm,exec,nochain", "-D", str(log), str(exe)]
    process.run(cmd, what="qemu")
    profile = wholecall.block_profile(log, (addr["isf_bench_begin"], addr["isf_bench_end"]))
    call = wholecall.model_call(profile, Pricer(core_model("neoverse-n1"), Decoder()))
    assert call.macs_executed == LOOP_TRIPS * 4 * 4
    # the loop's 6 instructions per trip, plus begin's ret and loop's few instructions around the asm
    assert LOOP_TRIPS * 6 < call.instructions < LOOP_TRIPS * 6 + 20
    # each of the 4 accumulators waits for its last FMLA (latency 4 on N1): 4 cycles a trip, not the 2 that N1's
    # two FP pipes would allow, as the loop runs back to back
    assert LOOP_TRIPS * 3.9 < call.cycles < LOOP_TRIPS * 4.2
