"""The pytest plugin a cell's run loads: the suite tests that cell's own build."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

# -- the pytest bridge -------------------------------------------------------------------------------------------------


def run_pytest(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip


def test_the_plugin_makes_the_suite_test_the_cells_own_build() -> None:
    proc = run_pytest(
        "tests/kernels/runtime/test_dispatch.py", "--collect-only", "-q",
        "-p", "isaforge.matrix.plugin", "--matrix-cell", "arm-linux-gnueabihf-gcc-debug-ubsan",
        "--isaforge-qemu-cpu", "cortex-a7",
    )  # fmt: skip
    ids = [i for i in re.findall(r"\[([^\]]+)\]", proc.stdout) if "@" in i]
    assert ids and all(i.startswith("arm-linux-gnueabihf-gcc-debug-ubsan@cortex-a7") for i in ids), proc.stdout


def test_the_plugin_brings_the_isaforge_plugin_it_needs() -> None:
    # Without this repo's ini (which opts in to the isaforge plugin), loading the matrix plugin is enough.
    proc = run_pytest(
        "tests/kernels/runtime/test_dispatch.py", "--collect-only", "-q", "-o", "addopts=",
        "-p", "isaforge.matrix.plugin", "--matrix-cell", "aarch64-linux-gnu-gcc-release", "--isaforge-qemu-cpu", "max",
    )  # fmt: skip
    assert proc.returncode == pytest.ExitCode.OK, proc.stdout + proc.stderr
    assert "test_dispatch.py::" in proc.stdout and "[aarch64-linux-gnu-gcc@max" in proc.stdout, proc.stdout


def test_the_plugin_refuses_an_unknown_cell_in_one_line() -> None:
    proc = run_pytest("tests/kernels", "--collect-only", "-p", "isaforge.matrix.plugin", "--matrix-cell", "nope")
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    assert "--matrix-cell: unknown cell 'nope'; choose one of: aarch64-linux-gnu-gcc-release" in proc.stderr
