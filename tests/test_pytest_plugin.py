"""The plugin's guard rails: a run where nothing passed fails, and bad --qemu-cpu / --toolchains are usage errors."""

from __future__ import annotations

import subprocess
import sys

import pytest


def run_pytest(tmp_path, body: str, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_sample.py").write_text(body)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path), *args],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip


def test_a_run_where_everything_was_skipped_fails(tmp_path) -> None:
    proc = run_pytest(tmp_path, "import pytest\n\ndef test_x():\n    pytest.skip('no toolchain')\n")
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, proc.stdout
    assert "no test passed" in proc.stdout


def test_a_run_that_collected_nothing_fails(tmp_path) -> None:
    proc = run_pytest(tmp_path, "def helper():\n    pass\n")
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, proc.stdout


def test_a_run_with_a_pass_passes(tmp_path) -> None:
    proc = run_pytest(
        tmp_path, "import pytest\n\ndef test_ok():\n    assert 1 + 1 == 2\n\ndef test_s():\n    pytest.skip()\n"
    )
    assert proc.returncode == pytest.ExitCode.OK, proc.stdout


@pytest.mark.parametrize(("option", "value"), [("--qemu-cpu", "cortex-a9000"), ("--toolchains", "mips-gcc")])
def test_unknown_selection_is_a_usage_error_naming_the_valid_values(tmp_path, option: str, value: str) -> None:
    body = "def test_t(target_cpu):\n    assert target_cpu.cpu\n"
    proc = run_pytest(tmp_path, body, option, value)
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    assert value in proc.stderr and ("cortex-a53" in proc.stderr or "aarch64-linux-gnu-gcc" in proc.stderr)


def test_target_cpu_covers_every_model_of_each_toolchains_arch(tmp_path) -> None:
    body = "def test_t(target_cpu):\n    assert target_cpu.expected_features\n"
    proc = run_pytest(tmp_path, body, "--collect-only", "--toolchains", "arm-linux-gnueabihf-gcc")
    ids = [line for line in proc.stdout.splitlines() if "::test_t[" in line]
    assert [i.split("[")[1] for i in ids] == [
        "arm-linux-gnueabihf-gcc@cortex-a7]", "arm-linux-gnueabihf-gcc@cortex-a15]", "arm-linux-gnueabihf-gcc@max]",
    ]  # fmt: skip
