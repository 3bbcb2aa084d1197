"""Engines for the generator's tests: catalogues and kernel trees written into a test's folder, the generator run on
them as an engine's build runs it (by path, with a real cross compiler), and its one-line refusals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from isaforge import enginegen

SCRIPT = Path(enginegen.__file__)
GCC64 = ["aarch64-linux-gnu-gcc"]


CATALOGUE = """
[engine]
name = "eng"
{engine_extra}

[signature.dot]
returns = "int32_t"
params = "const int8_t *a, const int8_t *b, size_t n"
args = "a, b, n"
doc = "Dot product."

[op.dot_s8]
signature = "dot"
doc = "int8 dot"
{extra}
"""


KERNEL = """#include "eng_dispatch.h"
int32_t eng_{name}(const int8_t *a, const int8_t *b, size_t n) {{
    int32_t s = 0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}}
"""


def make_engine(root: Path, kernels: list[str], *, extra: str = "", engine_extra: str = "") -> Path:
    """An engine whose kernels are given as '<folder>/<name>' (e.g. 'aarch64/dotprod/dot_s8_1x16x4_dotprod')."""
    root.mkdir(parents=True, exist_ok=True)
    toml = root / "engine.toml"
    toml.write_text(CATALOGUE.format(extra=extra, engine_extra=engine_extra))
    for k in kernels:
        path = root / "kernels" / f"{k}.c"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(KERNEL.format(name=Path(k).name))
    return toml


def run(toml: Path, out: Path, *cc: str, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(SCRIPT), str(toml), "-o", str(out), *extra, "--cc", *(cc or GCC64)]
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def compile_c(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("enginegen: "), proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def refused(toml: Path, out: Path, *needles: str) -> None:
    """The generator refuses `toml` in one line naming every needle, and writes nothing to `out`."""
    one_line_error(run(toml, out), *needles)
    assert not out.exists() or not any(out.iterdir())


def refuses_engine(folder: Path, kernels: list[str], extra: str, engine_extra: str, needles: list[str]) -> None:
    """An engine of these kernels, [op] lines `extra` and [engine] lines `engine_extra` is refused (see refused)."""
    refused(make_engine(folder / "e", kernels, extra=extra, engine_extra=engine_extra), folder / "out", *needles)


GOOD = ["reference/dot_s8_1x1_ref", "aarch64/neon/dot_s8_1x16_neon", "aarch64/dotprod/dot_s8_1x16x4_dotprod"]


# -- kernels declared where they are, feature sets ---------------------------------------------------------------
# A vendored library's kernel, unmodified: its own folder, file and symbol names, a .S companion, two features.
VENDORED_C = """#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

int32_t vlib_dot_tail(const int8_t *a, const int8_t *b, size_t n, int32_t acc);

/* sdot for whole blocks of 16, the .S companion for the rest; the fp16 lane is 0, and needs FEAT_FP16 to exist. */
int32_t vlib_dot_i8_fp16dot(const int8_t *a, const int8_t *b, size_t n) {
    int32x4_t acc = vdupq_n_s32(0);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        acc = vdotq_s32(acc, vld1q_s8(a + i), vld1q_s8(b + i));
    }
    float16x8_t one = vdupq_n_f16((float16_t)n);
    int32_t zero = (int32_t)vgetq_lane_f16(vsubq_f16(one, one), 0);
    return vlib_dot_tail(a + i, b + i, n - i, vaddvq_s32(acc) + zero);
}
"""


VENDORED_S = """    .text
    .global vlib_dot_tail
    .type vlib_dot_tail, %function
// int32_t vlib_dot_tail(const int8_t *a, const int8_t *b, size_t n, int32_t acc)
vlib_dot_tail:
    cbz x2, 2f
1:  ldrsb w4, [x0], #1
    ldrsb w5, [x1], #1
    madd w3, w4, w5, w3
    subs x2, x2, #1
    b.ne 1b
2:  mov w0, w3
    ret
    .size vlib_dot_tail, .-vlib_dot_tail
"""
DECLARED = """
[kernel.vlib_dot_i8_fp16dot]
op = "dot_s8"
arch = "aarch64"
requires = ["fp16", "dotprod"]
sources = ["third_party/vlib/src/dot/vlib_dot_i8_fp16dot.c", "third_party/vlib/src/dot/vlib_dot_tail.S"]
symbol = "vlib_dot_i8_fp16dot"
mr = 1
nr = 16
kr = 4
"""


# The same tile scheduled for Cortex-A55: its own file and symbol, the same .S companion.
TWIN = """
[kernel.vlib_dot_i8_fp16dot_a55]
op = "dot_s8"
arch = "aarch64"
requires = ["dotprod", "fp16"]
sources = ["third_party/vlib/src/dot/vlib_dot_i8_fp16dot_a55.c", "third_party/vlib/src/dot/vlib_dot_tail.S"]
symbol = "vlib_dot_i8_fp16dot_a55"
tuned_for = ["cortex-a55"]
"""


def make_vendored_engine(root: Path, declared: str = DECLARED) -> Path:
    toml = make_engine(root, GOOD, extra=declared)
    src = root / "third_party/vlib/src/dot"
    src.mkdir(parents=True)
    (src / "vlib_dot_i8_fp16dot.c").write_text(VENDORED_C)
    (src / "vlib_dot_i8_fp16dot_a55.c").write_text(
        VENDORED_C.replace("vlib_dot_i8_fp16dot(", "vlib_dot_i8_fp16dot_a55(")
    )
    (src / "vlib_dot_tail.S").write_text(VENDORED_S)
    return toml


# -- ops as interfaces, roles chosen per call ---------------------------------------------------------------------
INTERFACE_ENGINE = """
[engine]
name = "eng"

[signature.mm]
params = "size_t m, size_t n, size_t k, const float *a, const float *packed_b, float *c"
args = "m, n, k, a, packed_b, c"
doc = "C[m][n] = A[m][k] B[k][n], B packed by the kernel's packer"

[signature.count]
returns = "size_t"
params = "void"
args = ""
doc = "a tile size"

[signature.pack]
params = "size_t n, size_t k, const float *b, float *packed_b"
args = "n, k, b, packed_b"
doc = "B[k][n] into panels of nr columns"

[op.mm_f32]
signature = "mm"
doc = "fp32 matrix product"
members = { get_nr = "count", pack_b = "pack" }
packing = ["nr"]
share_packing = true
roles = [{ name = "gemv", when = "m == 1" }, { name = "gemm" }]
{kernels}
"""
INTERFACE_KERNELS = """
[kernel.mm_ref]
op = "mm_f32"
sources = ["vlib/mm_ref.c"]
symbol = "vlib_mm_ref"
members = { get_nr = "vlib_mm_ref_nr", pack_b = "vlib_mm_ref_pack" }
packing = { nr = 4 }

[kernel.vlib_gemv_neon]
op = "mm_f32"
arch = "aarch64"
requires = ["neon"]
roles = ["gemv"]
sources = ["vlib/gemv_neon.c"]
symbol = "vlib_gemv_neon"
members = { get_nr = "vlib_gemv_neon_nr", pack_b = "vlib_gemv_neon_pack" }
packing = { nr = 4 }

[kernel.vlib_gemm_neon]
op = "mm_f32"
arch = "aarch64"
requires = ["neon"]
roles = ["gemm"]
sources = ["vlib/gemm_neon.c"]
symbol = "vlib_gemm_neon"
members = { get_nr = "vlib_gemm_neon_nr", pack_b = "vlib_gemm_neon_pack" }
packing = { nr = 4 }
"""
# One portable body for all three: panels of 4 columns (k rows each), the columns past n zero.
MM_KERNEL = """#include <stddef.h>
#include <string.h>

size_t {sym}_nr(void) {{ return 4; }}
int {sym}_calls; /* for the test: which kernel each call ran */

void {sym}_pack(size_t n, size_t k, const float *b, float *packed_b) {{
    for (size_t j0 = 0; j0 < n; j0 += 4)
        for (size_t p = 0; p < k; p++)
            for (size_t j = j0; j < j0 + 4; j++) *packed_b++ = j < n ? b[p * n + j] : 0.0f;
}}

void {sym}(size_t m, size_t n, size_t k, const float *a, const float *packed_b, float *c) {{
    {sym}_calls++;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {{
            float s = 0;
            for (size_t p = 0; p < k; p++) s += a[i * k + p] * packed_b[(j / 4) * k * 4 + p * 4 + j % 4];
            c[i * n + j] = s;
        }}
}}
"""


def make_interface_engine(root: Path, kernels: str = INTERFACE_KERNELS) -> Path:
    root.mkdir(parents=True)
    toml = root / "engine.toml"
    toml.write_text(INTERFACE_ENGINE.replace("{kernels}", kernels))
    (root / "vlib").mkdir()
    for file, sym in (
        ("mm_ref.c", "vlib_mm_ref"),
        ("gemv_neon.c", "vlib_gemv_neon"),
        ("gemm_neon.c", "vlib_gemm_neon"),
    ):
        (root / "vlib" / file).write_text(MM_KERNEL.format(sym=sym))
    return toml


def refuses_declared(folder: Path, change: tuple[str, str], needles: list[str]) -> None:
    """The vendored engine with DECLARED changed so (a replacement that must apply) is refused (see refused)."""
    assert change[0] in DECLARED
    refused(make_vendored_engine(folder / "e", DECLARED.replace(*change)), folder / "out", *needles)


def refuses_interface(folder: Path, change: tuple[str, str], needles: list[str]) -> None:
    """The interface engine with INTERFACE_KERNELS changed so (a replacement that must apply) is refused."""
    assert change[0] in INTERFACE_KERNELS
    refused(make_interface_engine(folder / "e", INTERFACE_KERNELS.replace(*change)), folder / "out", *needles)
