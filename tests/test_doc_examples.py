"""The README's "Using libisaforge from an engine" example, compiled as it stands with each cross compiler against
the built libisaforge and run under QEMU: a fully-connected layer with [n][k] weights, bias and ReLU6 on 1, 3 and 8
threads, m = 1 and larger, held to numpy (small integers: every fp32 sum is exact, so equality is the check)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from isaforge import process, qemu
from isaforge.pytest_plugin import TargetCpu
from tests.conftest import ROOT

SECTION = "## Using libisaforge from an engine"
N, K = 37, 29
ROWS = (1, 3, 70)
WORKERS = (1, 3, 8)

HARNESS = """
#include <stdio.h>
#include "fc.c"

static float value(size_t i, size_t j, int salt) { return (float)((int)((i * 7 + j * 3 + salt) % 5) - 2); }

int main(void) {
    float w[N][K], b[N], x[70][K], y[70][N];
    for (size_t j = 0; j < N; j++) {
        b[j] = value(j, 0, 4);
        for (size_t p = 0; p < K; p++) w[j][p] = value(j, p, 2);
    }
    for (size_t i = 0; i < 70; i++)
        for (size_t p = 0; p < K; p++) x[i][p] = value(i, p, 1);
    fc_layer fc;
    if (fc_create(&fc, &w[0][0], b, N, K) != ISF_OK) return 1;
    size_t rows[] = {ROWS}, workers[] = {WORKERS};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        for (size_t t = 0; t < sizeof workers / sizeof workers[0]; t++) {
            if (fc_forward(&fc, &x[0][0], &y[0][0], rows[r], workers[t]) != ISF_OK) return 2;
            for (size_t i = 0; i < rows[r]; i++)
                for (size_t j = 0; j < N; j++) printf("%g\\n", y[i][j]);
        }
    isf_gemm_destroy(fc.plan);
    return 0;
}
"""


def readme_example() -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index(SECTION) :]
    match = re.search(r"```c\n(.*?)```", section, re.S)
    assert match, f"no C block under {SECTION!r} in README.md"
    return match[1]


def expected() -> list[float]:
    def value(i: np.ndarray, j: np.ndarray, salt: int) -> np.ndarray:
        return ((i * 7 + j * 3 + salt) % 5 - 2).astype(np.float64)

    w = value(*np.indices((N, K)), 2)
    b = value(np.arange(N), np.zeros(N, dtype=int), 4)
    x = value(*np.indices((70, K)), 1)
    out: list[float] = []
    for rows in ROWS:
        y = np.clip(x[:rows] @ w.T + b, 0.0, 6.0)
        out += list(y.ravel()) * len(WORKERS)
    return out


def test_the_example_is_about_twenty_lines() -> None:
    code = [line for line in readme_example().splitlines() if line.strip() and not line.startswith("#include")]
    assert len(code) <= 24, f"{len(code)} lines"


@pytest.mark.cpus(["max"])
def test_the_fully_connected_example_runs_on_the_engine_threads(
    target_cpu: TargetCpu, isaforge_build, tmp_path: Path
) -> None:
    build = target_cpu.build
    directory = isaforge_build(build)
    (tmp_path / "fc.c").write_text(readme_example())
    defines = {"N": N, "K": K, "ROWS": ", ".join(map(str, ROWS)), "WORKERS": ", ".join(map(str, WORKERS))}
    harness = "".join(f"#define {k} {v}\n" for k, v in defines.items()) + HARNESS
    (tmp_path / "main.c").write_text(harness)
    exe = tmp_path / "fc"
    assert build.toolchain is not None
    cmd = [*build.toolchain.c, "-std=c11", "-O1", "-Wall", "-Werror", "-Wno-missing-braces"]
    cmd += [f"-I{ROOT / 'include'}", str(tmp_path / "main.c"), str(directory / "libisaforge.a")]
    cmd += ["-lpthread", "-lm", "-o", str(exe)]
    process.run(cmd, what="the README example", timeout=120)
    result = qemu.run(build.arch, "max", exe, [])
    assert result.returncode == 0, result.describe()
    got = [float(v) for v in result.stdout.split()]
    assert got == expected()
