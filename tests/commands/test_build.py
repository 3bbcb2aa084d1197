"""`isaforge build` and `isaforge info` end to end: real Meson builds, real QEMU; bad input is one line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from isaforge.catalogue import load


def isaforge(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "isaforge", *args], capture_output=True, text=True, check=False)


@pytest.mark.e2e
def test_build_shows_dispatch_for_every_model_of_the_arch() -> None:
    proc = isaforge("build", "--target", "arm-linux-gnueabihf", "--compiler", "clang")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "arm-linux-gnueabihf-clang: built in build/arm-linux-gnueabihf-clang"
    rows = {line.split()[0]: line for line in lines[2:]}
    assert list(rows) == list(load().cpus["arm"])
    s8 = lines[1].index(" gemm_s8 ") + 1  # the gemm_s8 column (the detected features are several words)
    assert rows["cortex-a7"][s8:].split()[0] == "gemm_s8_2x4x8_neon"
    assert rows["max"][s8:].split()[0] == "gemm_s8_4x8x8_i8mm"


@pytest.mark.e2e
def test_info_prints_the_json_of_one_model_with_a_cap() -> None:
    proc = isaforge("info", "--target", "aarch64", "--cpu", "neoverse-v1", "--disable", "i8mm", "--detect", "cpuinfo")
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert info["detect_source"] == "cpuinfo" and "i8mm" in info["detected"] and "i8mm" not in info["active"]
    # With i8mm capped, SVE sdot (256-bit on V1) outranks NEON sdot.
    assert info["kernels"]["gemm_s8"] == "gemm_s8_8x8x4_sve"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["build", "--target", "riscv64"], "unknown target 'riscv64'"),
        (["build", "--compiler", "icc"], "unknown compiler 'icc'"),
        (["build", "--target", "aarch64", "--cpu", "cortex-a9"], "unknown CPU model 'cortex-a9'"),
        (["info", "--target", "arm", "--cpu", "neoverse-n2"], "unknown CPU model 'neoverse-n2' for arm"),
    ],
)
def test_bad_input_is_one_line_and_non_zero(args: list[str], says: str) -> None:
    proc = isaforge(*args)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and says in proc.stderr and "Traceback" not in proc.stderr
    assert "built in" not in proc.stdout  # refused before any build
