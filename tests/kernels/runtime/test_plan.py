"""The plan API (kernels/runtime/plan.c) under QEMU, per toolchain and CPU model: its self-checking C programs with
every kernel the model runs (layouts, accumulation, tiles in any partition and a thread pool, export/import, bad
input with guard bytes), and runs that allocate nothing (malloc & co. interposed)."""

from __future__ import annotations

import pytest

from isaforge.pytest_plugin import QemuRunner, TargetCpu


@pytest.mark.parametrize("program", ["test_plan", "test_plan_alloc"])
def test_plan_programs_pass(target_cpu: TargetCpu, qemu_run: QemuRunner, program: str) -> None:
    result = qemu_run(target_cpu.build, target_cpu.cpu, f"tests/kernels/{program}")
    assert result.returncode == 0, result.describe()
    assert result.stdout.strip().splitlines()[-1] == "0 failed", result.describe()
