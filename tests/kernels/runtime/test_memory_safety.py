"""The runtime's memory-safety programs under QEMU, CPU model by CPU model: caps and SVE vector lengths changing from
other threads, caps from inside a run (tests/kernels/test_threads.c) and sizes at the top of size_t
(tests/kernels/test_size_edges.c: spans, packed-B sizes, plans whose bias or column arrays pass size_t at create, and
crafted exports whose n or k wrap them at import, 2^28 and k = 2^32 on armv7, 2^60 and 2^62 on aarch64). Each program
checks itself and prints "N failed"; every buffer it hands the library ends at an inaccessible page."""

from __future__ import annotations

import pytest

from isaforge.pytest_plugin import QemuRunner, TargetCpu


def run_self_checking(qemu_run: QemuRunner, tc: TargetCpu, program: str, *args: str) -> str:
    result = qemu_run(tc.build, tc.cpu, f"tests/kernels/{program}", args)
    assert result.returncode == 0, result.describe()
    assert result.stdout.strip().splitlines()[-1] == "0 failed", result.stdout
    return result.stdout


def test_caps_and_vector_lengths_changing_from_other_threads(target_cpu: TargetCpu, qemu_run: QemuRunner) -> None:
    out = run_self_checking(qemu_run, target_cpu, "test_threads")
    assert "cap changes" in out  # the during-calls part ran and reported its counts
    assert "waiting calls inside a run: returned" in out  # a cap from parallel_for's thread: refused, not a hang


def test_sizes_near_the_top_of_size_t(target_cpu: TargetCpu, qemu_run: QemuRunner) -> None:
    run_self_checking(qemu_run, target_cpu, "test_size_edges")


@pytest.mark.slow
@pytest.mark.arch("arm")
@pytest.mark.cpus(["cortex-a15"])  # about 2 minutes under QEMU; the defect was a 32-bit size wrap
def test_one_by_one_results_over_k_of_half_a_gibibyte(target_cpu: TargetCpu, qemu_run: QemuRunner) -> None:
    """2^28 binary16 values of A and B for a 1×1 C: once a 128-byte work buffer on arm, and SIGSEGV."""
    run_self_checking(qemu_run, target_cpu, "test_size_edges", "long")


@pytest.mark.arch("aarch64")
def test_every_kernel_keeps_the_call_boundary(target_cpu: TargetCpu, qemu_run: QemuRunner) -> None:
    """Callee-saved x19-x28, d8-d15 and sp kept by every kernel the model runs; with SME, streaming mode and ZA off
    and TPIDR2_EL0 0 after each (tests/kernels/test_call_boundary.c)."""
    out = run_self_checking(qemu_run, target_cpu, "test_call_boundary")
    checked = int(out.split(" kernels called", 1)[0].split()[-1])
    assert checked >= 2 and ("SVCR" in out) == ("sme" in target_cpu.expected_features), out
