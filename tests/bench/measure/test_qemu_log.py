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
