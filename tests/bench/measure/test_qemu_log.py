"""bench.measure.qemu_log: a plan's window in QEMU's log counts the run alone."""

from __future__ import annotations

from isaforge.bench.measure import qemu_log

# A plan's create (0x1000), a helper both call (0x1800), the run (0x2000), destroy (0x3000), then a second run.
PLAN_LOG = """\
IN: isf_gemm_create
0x00001000:  d503201f  nop
0x00001004:  94000200  bl       #0x1800
Trace 0: 0x7f00 [00000000/0000000000001000/00000000/00000000] isf_gemm_create
IN: helper
0x00001800:  d503201f  nop
0x00001804:  d65f03c0  ret
Trace 0: 0x7f10 [00000000/0000000000001800/00000000/00000000] helper
IN: isf_gemm_run
0x00002000:  d503201f  nop
0x00002004:  94000200  bl       #0x1800
Trace 0: 0x7f20 [00000000/0000000000002000/00000000/00000000] isf_gemm_run
Trace 0: 0x7f10 [00000000/0000000000001800/00000000/00000000] helper
IN: isf_gemm_destroy
0x00003000:  d65f03c0  ret
Trace 0: 0x7f30 [00000000/0000000000003000/00000000/00000000] isf_gemm_destroy
Trace 0: 0x7f20 [00000000/0000000000002000/00000000/00000000] isf_gemm_run
"""


def test_the_window_counts_the_run_alone():
    got = qemu_log.parse_log(PLAN_LOG.splitlines(), window=(0x2000, 0x3000))
    assert dict(got.executions) == {0x2000: 1, 0x2004: 1, 0x1800: 1, 0x1804: 1}
    assert got.traces == 2 and got.window_opened and got.window_closed
    whole = qemu_log.parse_log(PLAN_LOG.splitlines())
    assert whole.traces == 6 and whole.executions[0x2000] == 2 and whole.executions[0x1800] == 2


def test_a_window_that_never_opens_counts_nothing():
    got = qemu_log.parse_log(PLAN_LOG.splitlines(), window=(0x4000, 0x3000))
    assert got.traces == 0 and not got.window_opened and not got.executions


# libisaforge at 0x1000..0x4000 calls memcpy (0x8000), which calls a helper (0x9000) and returns; then it tail-calls
# free (0xa000), which returns to the program (0x6000). Thread 1 runs the program's own code meanwhile.
CALLS_LOG = """\
IN: isf_gemm
0x00001000:  d503201f  nop
0x00001004:  94001ffc  bl       #0x8000
IN: memcpy
0x00008000:  d503201f  nop
0x00008004:  940003ff  bl       #0x9000
IN: helper
0x00009000:  d503201f  nop
0x00009004:  d65f03c0  ret
IN: memcpy
0x00008008:  d503201f  nop
0x0000800c:  d503201f  nop
0x00008010:  d65f03c0  ret
IN: isf_gemm
0x00001008:  14002401  b        #0xa000
IN: free
0x0000a000:  d65f03c0  ret
IN: main
0x00006000:  d503201f  nop
0x00006004:  d503201f  nop
0x00006008:  94000000  bl       #0x6008
Trace 1: 0x7e00 [00000000/0000000000006000/00000000/00000000] main
Trace 0: 0x7f00 [00000000/0000000000001000/00000000/00000000] isf_gemm
Trace 0: 0x7f10 [00000000/0000000000008000/00000000/00000000] memcpy
Trace 1: 0x7e00 [00000000/0000000000006000/00000000/00000000] main
Trace 0: 0x7f20 [00000000/0000000000009000/00000000/00000000] helper
Trace 0: 0x7f30 [00000000/0000000000008008/00000000/00000000] memcpy
Trace 0: 0x7f40 [00000000/0000000000001008/00000000/00000000] isf_gemm
Trace 0: 0x7f50 [00000000/000000000000a000/00000000/00000000] free
Trace 0: 0x7e00 [00000000/0000000000006000/00000000/00000000] main
"""


def test_calls_out_of_the_library_are_counted_apart_per_callee():
    got = qemu_log.parse_log(CALLS_LOG.splitlines(), library=(0x1000, 0x4000))
    assert dict(got.executions) == {0x1000: 1, 0x1004: 1, 0x1008: 1}  # the library's own
    assert dict(got.called) == {0x8000: 2 + 2 + 3, 0xA000: 1}  # memcpy with its helper; the tail-called free
    assert got.traces == 9 and got.unknown_traces == 0


def test_without_a_library_every_block_is_an_execution():
    got = qemu_log.parse_log(CALLS_LOG.splitlines())
    assert sum(got.executions.values()) == 2 + 2 + 2 + 3 + 1 + 1 + 3 * 3 and not got.called


def test_calls_and_returns_are_read_from_their_encodings():
    assert qemu_log.is_call("94001ffc") and qemu_log.is_call("d63f0100")  # bl, blr x8
    assert qemu_log.is_call("d63f091f")  # blraaz x8
    assert qemu_log.is_return("d65f03c0") and qemu_log.is_return("d65f0bff")  # ret, retaa
    assert not qemu_log.is_call("14002401") and not qemu_log.is_return("d61f0220")  # b, br x17
