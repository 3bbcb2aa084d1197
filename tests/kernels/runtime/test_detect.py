"""The /proc/cpuinfo fallback's parser, on real-looking Features lines of 32-bit and arm64 kernels, under QEMU.

tests/kernels/test_detect.c holds the lines and the expected masks per arch; the parser reads the catalogue's
generated tables, so this also checks that arm rows carry the arm64 names a 32-bit process may see.
"""

from __future__ import annotations

import pytest

from isaforge.pytest_plugin import QemuRunner, TargetCpu


@pytest.mark.cpus(["max"])
def test_features_lines_of_both_kernels_parse_to_the_expected_masks(
    target_cpu: TargetCpu, qemu_run: QemuRunner
) -> None:
    result = qemu_run(target_cpu.build, target_cpu.cpu, "tests/kernels/test_detect")
    assert result.returncode == 0, result.describe()
    last = result.stdout.strip().splitlines()[-1]
    assert last.endswith(" 0 failed") and not last.startswith("0 checks"), last
