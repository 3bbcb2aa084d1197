"""engine/c_dispatch.py: the dispatch tables, compiled through engine_dispatch.c and run under QEMU."""

from __future__ import annotations

from pathlib import Path

import pytest

from isaforge.catalogue import load
from isaforge.engine.c_dispatch import DISPATCH_SOURCE
from tests.conftest import ROOT
from tests.engine.engines import (
    DECLARED,
    GCC64,
    GOOD,
    TWIN,
    compile_c,
    make_engine,
    make_interface_engine,
    make_vendored_engine,
    run,
)


def test_generated_sources_compile_with_the_kernels(tmp_path):
    """The dispatch and every kernel compile (the header's prototypes hold each definition to the op's signature)."""
    toml = make_engine(tmp_path / "e", GOOD)
    out = tmp_path / "out"
    proc = run(toml, out)
    assert proc.returncode == 0, proc.stderr
    include = ROOT / "include"
    lines = [*proc.stdout.splitlines(), f"dispatch||{DISPATCH_SOURCE}"]
    for name, flags, sources in (line.split("|") for line in lines):
        for source in sources.split():
            obj = tmp_path / f"{name}-{Path(source).stem}.o"
            cmd = [*GCC64, "-std=c11", "-Wall", "-Werror", *flags.split(), "-I", str(out), "-I", str(include)]
            compiled = compile_c([*cmd, "-c", source, "-o", str(obj)])
            assert compiled.returncode == 0, compiled.stderr


ENGINE_PROGRAM = """#include <stdio.h>
#include <string.h>
#include "eng_dispatch.h"

int main(void) {
    int8_t a[37], b[37];
    int32_t want = 0;
    for (int i = 0; i < 37; i++) {
        a[i] = (int8_t)(i * 7 - 100), b[i] = (int8_t)(50 - i * 3), want += a[i] * b[i];
    }
    const char *kernel = eng_kernel_name(ENG_OP_DOT_S8);
    int vendored = strncmp(kernel, "vlib_", 5) == 0; /* called directly only where it may run */
    printf("%s %d\\n", kernel, eng_dot_s8(a, b, 37) == want && (!vendored || vlib_dot_i8_fp16dot(a, b, 37) == want));
    return 0;
}
"""


def build_engine_program(tmp_path: Path, toml: Path, prefix: Path, program: str = ENGINE_PROGRAM) -> Path:
    """The engine as its build system would make it (each library with its own flags), linked with libisaforge."""
    out = tmp_path / "out"
    proc = run(toml, out)
    assert proc.returncode == 0, proc.stderr
    include = ["-I", str(out), "-I", str(prefix / "include")]
    objects = []
    lines = [*proc.stdout.splitlines(), f"dispatch||{DISPATCH_SOURCE}"]
    for name, flags, sources in (line.split("|") for line in lines):
        for source in sources.split():
            obj = tmp_path / f"{name}-{Path(source).name}.o"
            compiled = compile_c(
                [*GCC64, "-O2", "-march=armv8-a", *flags.split(), *include, "-c", source, "-o", str(obj)]
            )
            assert compiled.returncode == 0, compiled.stderr
            objects.append(str(obj))
    main = tmp_path / "main.c"
    main.write_text(program)
    program = tmp_path / "engine"
    linked = compile_c([*GCC64, "-O2", *include, str(main), *objects, str(prefix / "lib" / "libisaforge.a"),
                        "-lpthread", "-o", str(program)])  # fmt: skip
    assert linked.returncode == 0, linked.stderr
    return program


@pytest.mark.e2e
def test_dispatch_requires_every_feature_of_a_set_and_prefers_the_twin_tuned_for_the_core(tmp_path):
    """On a64fx (fp16 without dotprod) the fp16+dotprod kernels are refused; on cortex-a55 its A55 twin runs, on
    cortex-a76 and max the other (QEMU reports each model's MIDR), and ISAFORGE_CORE says the core instead; the
    engine's own cap taking fp16 away is "capped" in the trace, not "refused"."""
    from isaforge import builds, qemu  # noqa: PLC0415 - only the e2e tests build libisaforge

    prefix = builds.ensure_installed(builds.build_for("aarch64-linux-gnu", "gcc"))
    program = build_engine_program(tmp_path, make_vendored_engine(tmp_path / "e", DECLARED + TWIN), prefix)
    arch = load().arch("aarch64")
    expected = {
        ("cortex-a53", ""): "dot_s8_1x16_neon",
        ("a64fx", ""): "dot_s8_1x16_neon",
        ("cortex-a55", ""): "vlib_dot_i8_fp16dot_a55",
        ("cortex-a76", ""): "vlib_dot_i8_fp16dot",
        ("max", ""): "vlib_dot_i8_fp16dot",
        ("max", "cortex-a55"): "vlib_dot_i8_fp16dot_a55",
        ("cortex-a55", "cortex-a76"): "vlib_dot_i8_fp16dot",
    }
    for (cpu, core), kernel in expected.items():
        result = qemu.run(arch, cpu, program, env={"ISAFORGE_CORE": core} if core else None)
        assert result.returncode == 0, result.describe()
        assert result.stdout.split() == [kernel, "1"], result.describe()
    trace = tmp_path / "trace.txt"
    capped = qemu.run(arch, "max", program, env={"ENG_DISABLE": "fp16", "ISAFORGE_TRACE": str(trace)})
    assert capped.stdout.split()[0] == "dot_s8_1x16x4_dotprod", capped.describe()
    assert "capped eng vlib_dot_i8_fp16dot" in trace.read_text().splitlines()


INTERFACE_PROGRAM = """#include <stdio.h>
#include "eng_dispatch.h"

extern int vlib_mm_ref_calls, vlib_gemv_neon_calls, vlib_gemm_neon_calls;

int main(void) {
    float a[3 * 5], b[5 * 6], packed[8 * 5], c[3 * 6];
    for (int i = 0; i < 15; i++) a[i] = (float)(i % 7 - 3);
    for (int i = 0; i < 30; i++) b[i] = (float)(i % 5 - 2);
    const eng_mm_f32_kernel *gemv = eng_mm_f32_choose(ENG_MM_F32_ROLE_GEMV);
    const eng_mm_f32_kernel *gemm = eng_mm_f32_choose(ENG_MM_F32_ROLE_GEMM);
    gemm->pack_b(6, 5, b, packed); /* packed once, read by both roles' kernels (share_packing) */
    int exact = 1;
    for (size_t m = 1; m <= 3; m += 2) {
        eng_mm_f32(m, 6, 5, a, packed, c);
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < 6; j++) {
                float s = 0;
                for (size_t p = 0; p < 5; p++) s += a[i * 5 + p] * b[p * 6 + j];
                exact &= c[i * 6 + j] == s;
            }
    }
    printf("%s %s %zu %zu %d %d calls %d %d %d\\n", gemv->name, gemm->name, gemm->get_nr(), gemm->nr, exact,
           eng_mm_f32_choose((eng_mm_f32_role)2) == NULL, vlib_gemv_neon_calls, vlib_gemm_neon_calls,
           vlib_mm_ref_calls);
    return 0;
}
"""


@pytest.mark.e2e
def test_roles_are_chosen_per_call_and_a_chosen_interface_is_one_kernel(tmp_path):
    """m == 1 runs the GEMV kernel, other m the GEMM one, on the same CPU, both reading weights packed once by the
    chosen GEMM's own packer; on cortex-a53 with neon capped the portable kernel serves both roles."""
    from isaforge import builds, qemu  # noqa: PLC0415 - only the e2e tests build libisaforge

    prefix = builds.ensure_installed(builds.build_for("aarch64-linux-gnu", "gcc"))
    program = build_engine_program(tmp_path, make_interface_engine(tmp_path / "e"), prefix, INTERFACE_PROGRAM)
    arch = load().arch("aarch64")
    result = qemu.run(arch, "cortex-a53", program)
    # m = 1 ran the GEMV kernel once, m = 3 the GEMM one once
    assert result.stdout.split() == ["vlib_gemv_neon", "vlib_gemm_neon", "4", "4", "1", "1", "calls", "1", "1", "0"], (
        result.describe()
    )
    trace = tmp_path / "trace.txt"
    capped = qemu.run(arch, "cortex-a53", program, env={"ENG_DISABLE": "neon", "ISAFORGE_TRACE": str(trace)})
    assert capped.stdout.split() == ["mm_ref", "mm_ref", "4", "4", "1", "1", "calls", "0", "0", "2"], capped.describe()
    assert {"capped eng vlib_gemv_neon", "capped eng vlib_gemm_neon"} <= set(trace.read_text().splitlines())
