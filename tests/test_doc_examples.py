"""The C examples of the docs, compiled as they stand with each cross compiler against the built libisaforge and run
under QEMU, held to numpy: the README's plan (a fully-connected layer with [n][k] weights, bias and ReLU6, m = 1 and
larger) and docs/api.md's same layer run on the engine's threads (1, 3 and 8). Small integers make every fp32 sum
exact, so equality is the check."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from isaforge import process, qemu
from isaforge.pytest_plugin import TargetCpu
from tests.conftest import ROOT

N, K, ROWS = 37, 29, 70
SIZES = (1, 3, 70)
WORKERS = (1, 3, 8)

# Inputs as the numpy oracle makes them: values in -2..2 drawn from the indices.
INPUTS = """
#include <stdio.h>

static float value(size_t i, size_t j, int salt) { return (float)((int)((i * 7 + j * 3 + salt) % 5) - 2); }
static float w[N][K], b[N], x[ROWS][K], y[ROWS][N];

static void fill(void) {
    for (size_t j = 0; j < N; j++) {
        b[j] = value(j, 0, 4);
        for (size_t p = 0; p < K; p++) w[j][p] = value(j, p, 2);
    }
    for (size_t i = 0; i < ROWS; i++)
        for (size_t p = 0; p < K; p++) x[i][p] = value(i, p, 1);
}

static void print(size_t m) {
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < N; j++) printf("%g\\n", y[i][j]);
}
"""

README_MAIN = """
int main(void) {
    fill();
    size_t sizes[] = {SIZES};
    for (size_t r = 0; r < sizeof sizes / sizeof sizes[0]; r++) {
        if (linear_relu6(&w[0][0], b, &x[0][0], &y[0][0], sizes[r], N, K) != ISF_OK) return 2;
        print(sizes[r]);
    }
    return 0;
}
"""

API_MAIN = """
int main(void) {
    fill();
    fc_layer fc;
    if (fc_create(&fc, &w[0][0], b, N, K) != ISF_OK) return 1;
    size_t sizes[] = {SIZES}, workers[] = {WORKERS};
    for (size_t r = 0; r < sizeof sizes / sizeof sizes[0]; r++)
        for (size_t t = 0; t < sizeof workers / sizeof workers[0]; t++) {
            if (fc_forward(&fc, &x[0][0], &y[0][0], sizes[r], workers[t]) != ISF_OK) return 2;
            print(sizes[r]);
        }
    isf_gemm_destroy(fc.plan);
    return 0;
}
"""


def c_example(page: str, heading: str) -> str:
    """The first C block under `heading` of `page`."""
    text = (ROOT / page).read_text()
    section = text[text.index(heading) :]
    match = re.search(r"```c\n(.*?)```", section, re.S)
    assert match, f"no C block under {heading!r} in {page}"
    return match[1]


def readme_example() -> str:
    return c_example("README.md", "## libisaforge from an engine")


def api_example() -> str:
    return c_example("docs/api.md", "## Example: a fully-connected layer on the engine's threads")


def expected(repeats: int) -> list[float]:
    def value(i: np.ndarray, j: np.ndarray, salt: int) -> np.ndarray:
        return ((i * 7 + j * 3 + salt) % 5 - 2).astype(np.float64)

    w = value(*np.indices((N, K)), 2)
    b = value(np.arange(N), np.zeros(N, dtype=int), 4)
    x = value(*np.indices((ROWS, K)), 1)
    out: list[float] = []
    for rows in SIZES:
        out += list(np.clip(x[:rows] @ w.T + b, 0.0, 6.0).ravel()) * repeats
    return out


def code_lines(example: str) -> int:
    return len([line for line in example.splitlines() if line.strip() and not line.startswith("#include")])


def test_the_examples_stay_short() -> None:
    assert code_lines(readme_example()) <= 12, "the README's example is a newcomer's first read"
    assert code_lines(api_example()) <= 24


def run_example(target_cpu: TargetCpu, isaforge_build, tmp_path: Path, example: str, main: str) -> list[float]:
    """The example compiled with `main` against the built libisaforge and run on `max`: the numbers it prints."""
    build = target_cpu.build
    directory = isaforge_build(build)
    (tmp_path / "example.c").write_text(example)
    defines = {
        "N": N,
        "K": K,
        "ROWS": ROWS,
        "SIZES": ", ".join(map(str, SIZES)),
        "WORKERS": ", ".join(map(str, WORKERS)),
    }
    harness = "".join(f"#define {k} {v}\n" for k, v in defines.items()) + '#include "example.c"\n' + INPUTS + main
    (tmp_path / "main.c").write_text(harness)
    exe = tmp_path / "example"
    assert build.toolchain is not None
    cmd = [*build.toolchain.c, "-std=c11", "-O1", "-Wall", "-Werror", "-Wno-missing-braces"]
    cmd += [f"-I{ROOT / 'include'}", str(tmp_path / "main.c"), str(directory / "libisaforge.a")]
    cmd += ["-lpthread", "-lm", "-o", str(exe)]
    process.run(cmd, what="a docs example", timeout=120)
    result = qemu.run(build.arch, "max", exe, [])
    assert result.returncode == 0, result.describe()
    return [float(v) for v in result.stdout.split()]


@pytest.mark.cpus(["max"])
def test_the_readme_plan_example_runs(target_cpu: TargetCpu, isaforge_build, tmp_path: Path) -> None:
    assert run_example(target_cpu, isaforge_build, tmp_path, readme_example(), README_MAIN) == expected(1)


@pytest.mark.cpus(["max"])
def test_the_api_example_runs_on_the_engine_threads(target_cpu: TargetCpu, isaforge_build, tmp_path: Path) -> None:
    got = run_example(target_cpu, isaforge_build, tmp_path, api_example(), API_MAIN)
    assert got == expected(len(WORKERS))
