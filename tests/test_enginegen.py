"""enginegen: an engine's catalogue and kernel tree, checked, probed with the real compiler and generated."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from isaforge import enginegen
from isaforge.catalogue import load
from isaforge.codegen import GENERATOR_FILES
from isaforge.engine.c_dispatch import DISPATCH_CODE, DISPATCH_SOURCE

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


GOOD = ["reference/dot_s8_1x1_ref", "aarch64/neon/dot_s8_1x16_neon", "aarch64/dotprod/dot_s8_1x16x4_dotprod"]


def test_generates_libraries_dispatch_and_manifest(tmp_path):
    toml = make_engine(tmp_path / "e", [*GOOD, "aarch32/neon/dot_s8_1x8_neon"])
    out = tmp_path / "out"
    proc = run(toml, out)
    assert proc.returncode == 0, proc.stderr
    lines = [line.split("|") for line in proc.stdout.splitlines()]
    by_name = {name: (flags.split(), sources.split()) for name, flags, sources in lines}
    assert list(by_name) == ["eng_aarch64_neon", "eng_aarch64_dotprod", "eng_reference"]
    flags, sources = by_name["eng_aarch64_dotprod"]
    assert flags == ["-march=armv8.2-a+dotprod", "-DISAFORGE_VARIANT=dotprod"]
    assert [Path(s).name for s in sources] == ["dot_s8_1x16x4_dotprod.c"]
    # the aarch32 kernel stays out of an aarch64 build; the references are at the baseline
    assert by_name["eng_reference"][0] == []
    assert [Path(s).name for s in by_name["eng_reference"][1]] == ["dot_s8_1x1_ref.c"]
    manifest = json.loads((out / "isaforge-kernels-eng.json").read_text())
    assert manifest["owner"] == "eng" and manifest["arch"] == "aarch64" and manifest["compiler"] == "gcc"
    assert [k["name"] for k in manifest["kernels"]] == ["dot_s8_1x16x4_dotprod", "dot_s8_1x16_neon", "dot_s8_1x1_ref"]
    assert manifest["kernels"][0]["requires"] == ["dotprod", "neon"]
    header = (out / "eng_dispatch.h").read_text()
    assert "int32_t eng_dot_s8(const int8_t *a, const int8_t *b, size_t n);" in header
    assert "int32_t eng_dot_s8_1x16x4_dotprod(const int8_t *a, const int8_t *b, size_t n);" in header


def test_generated_sources_compile_with_the_kernels(tmp_path):
    """The dispatch and every kernel compile (the header's prototypes hold each definition to the op's signature)."""
    toml = make_engine(tmp_path / "e", GOOD)
    out = tmp_path / "out"
    proc = run(toml, out)
    assert proc.returncode == 0, proc.stderr
    include = Path(__file__).resolve().parents[1] / "include"
    lines = [*proc.stdout.splitlines(), f"dispatch||{DISPATCH_SOURCE}"]
    for name, flags, sources in (line.split("|") for line in lines):
        for source in sources.split():
            obj = tmp_path / f"{name}-{Path(source).stem}.o"
            cmd = [*GCC64, "-std=c11", "-Wall", "-Werror", *flags.split(), "-I", str(out), "-I", str(include)]
            compiled = compile_c([*cmd, "-c", source, "-o", str(obj)])
            assert compiled.returncode == 0, compiled.stderr


def test_a_definition_that_breaks_the_signature_does_not_compile(tmp_path):
    toml = make_engine(tmp_path / "e", GOOD)
    bad = tmp_path / "e/kernels/aarch64/neon/dot_s8_1x16_neon.c"
    bad.write_text(bad.read_text().replace("size_t n", "int n"))
    out = tmp_path / "out"
    assert run(toml, out).returncode == 0
    include = Path(__file__).resolve().parents[1] / "include"
    compiled = compile_c([*GCC64, "-I", str(out), "-I", str(include), "-c", str(bad), "-o", str(tmp_path / "x.o")])
    assert compiled.returncode != 0 and "conflicting types" in compiled.stderr


@pytest.mark.parametrize(
    ("kernels", "extra", "engine_extra", "needles"),
    [
        pytest.param([*GOOD, "aarch64/neon/dot_s8_neon"], "", "", ["dot_s8_neon.c", "rename"], id="grammar"),
        pytest.param([*GOOD, "aarch64/neon/dot_u8_1x4_neon"], "", "", ["unknown op 'dot_u8'"], id="unknown-op"),
        pytest.param([*GOOD, "aarch64/avx/dot_s8_1x4_avx"], "", "", ["'avx' is not a variant"], id="unknown-variant"),
        pytest.param(GOOD[1:], "", "", ["op dot_s8 has no reference", "dot_s8_1x1_ref.c"], id="no-reference"),
        pytest.param([*GOOD, "aarch32/sve/dot_s8_1x4_sve"], "", "", ["does not exist on arm"], id="sve-on-arm"),
        pytest.param(GOOD, "", 'variants = ["neon"]', ["dotprod is not in [engine] variants"], id="variant-left-out"),
        pytest.param(GOOD, "", 'variants = ["dotprot"]', ["unknown variant 'dotprot'"], id="unknown-listed"),
        pytest.param(
            [*GOOD, "aarch64/neon/dot_s8_1x32_neon"], "", "", ["2 dot_s8 kernels", "[prefer] neon"], id="unordered"
        ),
        pytest.param(GOOD, "\n[op.gemm_s8]\nsignature = 'gemm'\ndoc = 'x'\n", "", ["signature 'gemm'"], id="no-sig"),
        pytest.param(GOOD, "", 'flavour = "x"', ["unknown key 'flavour' in [engine]"], id="unknown-key"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, kernels, extra, engine_extra, needles):
    toml = make_engine(tmp_path / "e", kernels, extra=extra, engine_extra=engine_extra)
    out = tmp_path / "out"
    one_line_error(run(toml, out), *needles)
    assert not out.exists() or not any(out.iterdir())


def test_prefer_orders_kernels_of_one_variant(tmp_path):
    extra = '\n[prefer]\nneon = ["dot_s8_1x32_neon", "dot_s8_1x16_neon"]\n'
    toml = make_engine(tmp_path / "e", [*GOOD, "aarch64/neon/dot_s8_1x32_neon"], extra=extra)
    out = tmp_path / "out"
    assert run(toml, out).returncode == 0
    names = [k["name"] for k in json.loads((out / "isaforge-kernels-eng.json").read_text())["kernels"]]
    assert names == ["dot_s8_1x16x4_dotprod", "dot_s8_1x32_neon", "dot_s8_1x16_neon", "dot_s8_1x1_ref"]


def test_a_variant_the_compiler_cannot_build(tmp_path):
    """A real compiler that cannot build Arm variants (the machine's own gcc) forced to aarch64: a listed variant is
    an error; an unlisted one is dropped, said on stderr and in the manifest."""
    listed = make_engine(tmp_path / "a", GOOD, engine_extra='variants = ["neon", "dotprod"]')
    one_line_error(
        run(listed, tmp_path / "out-a", "gcc", extra=("--arch", "aarch64")), "variant neon: gcc cannot compile"
    )
    unlisted = make_engine(tmp_path / "b", GOOD)
    proc = run(unlisted, tmp_path / "out-b", "gcc", extra=("--arch", "aarch64"))
    assert proc.returncode == 0, proc.stderr
    assert "variant dotprod dropped" in proc.stderr
    manifest = json.loads((tmp_path / "out-b/isaforge-kernels-eng.json").read_text())
    assert "dotprod" in manifest["dropped"]
    assert [line.split("|")[0] for line in proc.stdout.splitlines()] == ["eng_reference"]


def test_missing_catalogue_and_compiler(tmp_path):
    one_line_error(run(tmp_path / "nope.toml", tmp_path / "out"), "nope.toml", "no such file")
    toml = make_engine(tmp_path / "e", GOOD)
    one_line_error(run(toml, tmp_path / "out", "no-such-cc"), "cannot run the compiler no-such-cc")


def test_one_engine_per_output_directory(tmp_path):
    out = tmp_path / "out"
    assert run(make_engine(tmp_path / "a", GOOD), out).returncode == 0
    other = make_engine(tmp_path / "b", GOOD)
    other.write_text(other.read_text().replace('name = "eng"', 'name = "other"'))
    one_line_error(run(other, out), "already holds the dispatch of engine eng", "its own directory")


def test_regenerating_leaves_unchanged_files_alone(tmp_path):
    toml = make_engine(tmp_path / "e", GOOD)
    out = tmp_path / "out"
    assert run(toml, out).returncode == 0
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    assert run(toml, out).returncode == 0
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before


def test_the_generator_leaves_its_installed_tree_as_it_was(tmp_path):
    """An installed prefix or a Conan package must not gain a __pycache__ when an engine's build runs the generator
    (whatever PYTHONDONTWRITEBYTECODE says in the user's shell)."""
    installed = tmp_path / "share" / "isaforge" / "python" / "isaforge"
    installed.mkdir(parents=True)
    for name in GENERATOR_FILES:
        (installed / name).parent.mkdir(exist_ok=True)
        (installed / name).write_bytes((SCRIPT.parent / name).read_bytes())
    toml = make_engine(tmp_path / "engine", GOOD)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cmd = [sys.executable, str(installed / "enginegen.py"), str(toml), "-o", str(tmp_path / "out"), "--cc", *GCC64]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    folders = {str(PurePosixPath(name).parent) for name in GENERATOR_FILES} - {"."}
    assert sorted(p.relative_to(installed).as_posix() for p in installed.rglob("*")) == sorted(
        {*GENERATOR_FILES, *folders}
    )


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


def test_a_declared_kernel_is_built_where_it_is_with_its_feature_set(tmp_path):
    toml = make_vendored_engine(tmp_path / "e")
    out = tmp_path / "out"
    proc = run(toml, out)
    assert proc.returncode == 0, proc.stderr
    by_name = {name: (flags.split(), sources.split()) for name, flags, sources in (line.split("|") for line in
               proc.stdout.splitlines())}  # fmt: skip
    assert list(by_name) == ["eng_aarch64_neon", "eng_aarch64_dotprod", "eng_aarch64_fp16_dotprod", "eng_reference"]
    flags, sources = by_name["eng_aarch64_fp16_dotprod"]
    assert flags == ["-march=armv8.2-a+dotprod+fp16", "-DISAFORGE_VARIANT=fp16+dotprod"]
    assert [Path(s).relative_to(tmp_path / "e").as_posix() for s in sources] == [
        "third_party/vlib/src/dot/vlib_dot_i8_fp16dot.c",
        "third_party/vlib/src/dot/vlib_dot_tail.S",
    ]
    manifest = json.loads((out / "isaforge-kernels-eng.json").read_text())
    first = manifest["kernels"][0]  # two features outrank one
    assert first == {
        "name": "vlib_dot_i8_fp16dot", "op": "dot_s8", "variant": "fp16+dotprod",
        "requires": ["dotprod", "fp16", "neon"], "tuned_for": [], "roles": ["any"], "packing": {},
    }  # fmt: skip
    header = (out / "eng_dispatch.h").read_text()
    assert "int32_t vlib_dot_i8_fp16dot(const int8_t *a, const int8_t *b, size_t n);" in header
    assert '{"vlib_dot_i8_fp16dot", "fp16+dotprod", 1, 16, 4, 0, 0x7u, {0},' in (out / DISPATCH_CODE).read_text()


def test_a_declared_kernel_for_aarch64_stays_out_of_an_arm_build(tmp_path):
    toml = make_vendored_engine(tmp_path / "e")
    proc = run(toml, tmp_path / "out", "arm-linux-gnueabihf-gcc")
    assert proc.returncode == 0, proc.stderr
    assert "vlib" not in proc.stdout and "fp16_dotprod" not in proc.stdout


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


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        pytest.param(
            ("sources = [", 'sources = ["third_party/vlib/nope.c", '),
            ["nope.c does not exist", "relative to"],
            id="missing-source",
        ),
        pytest.param(
            ('symbol = "vlib_dot_i8_fp16dot"', 'symbol = "vlib_dot_s8"'),
            ["symbol vlib_dot_s8 is defined in none of its sources"],
            id="undefined-symbol",
        ),
        pytest.param(('"fp16", "dotprod"', '"fp16", "dotprot"'), ["unknown feature 'dotprot'"], id="unknown-feature"),
        pytest.param(('arch = "aarch64"', 'arch = "arm"\nrequires_x = 1'), ["unknown key 'requires_x'"], id="key"),
        pytest.param(
            ('arch = "aarch64"\nrequires = ["fp16", "dotprod"]', 'arch = ["aarch64", "arm"]\nrequires = ["sve"]'),
            ["[kernel.vlib_dot_i8_fp16dot] requires: sve does not exist on arm"],
            id="feature-not-on-arch",
        ),
        pytest.param(
            (
                "mr = 1",
                'mr = 1\n[kernel.vlib_again]\nop = "dot_s8"\narch = "aarch64"\nrequires = ["dotprod"]\n'
                'sources = ["third_party/vlib/src/dot/vlib_dot_i8_fp16dot.c"]\nsymbol = "vlib_dot_i8_fp16dot"',
            ),
            ["belongs to", "fp16+dotprod", "vlib_again (dotprod)"],
            id="one-file-two-flag-sets",
        ),
        pytest.param(('op = "dot_s8"', 'op = "dot_u8"'), ["op 'dot_u8' is not an [op.*]"], id="unknown-op"),
        pytest.param(
            ("mr = 1", 'mr = 1\ntuned_for = ["cortex-a99"]'),
            ["tuned_for: unknown CPU part 'cortex-a99'"],
            id="unknown-core",
        ),
        pytest.param(
            ("[kernel.vlib_dot_i8_fp16dot]", "[kernel.dot_s8_1x16_neon]"),
            ["two kernels named dot_s8_1x16_neon on aarch64"],
            id="same-name",
        ),
    ],
)
def test_a_bad_declared_kernel_is_one_line_and_writes_nothing(tmp_path, change, needles):
    assert change[0] in DECLARED
    toml = make_vendored_engine(tmp_path / "e", DECLARED.replace(*change))
    out = tmp_path / "out"
    one_line_error(run(toml, out), *needles)
    assert not out.exists() or not any(out.iterdir())


def test_a_build_for_an_arch_the_engine_does_not_declare(tmp_path):
    toml = make_vendored_engine(tmp_path / "e")
    toml.write_text(toml.read_text().replace('name = "eng"', 'name = "eng"\narches = ["aarch64"]'))
    assert run(toml, tmp_path / "ok").returncode == 0
    one_line_error(run(toml, tmp_path / "out", "arm-linux-gnueabihf-gcc"), "this build is for arm", "arches")


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


def test_an_interface_op_declares_its_kernel_struct_roles_and_chooser(tmp_path):
    out = tmp_path / "out"
    proc = run(make_interface_engine(tmp_path / "e"), out)
    assert proc.returncode == 0, proc.stderr
    header = (out / "eng_dispatch.h").read_text()
    assert "typedef enum { ENG_MM_F32_ROLE_GEMV = 0, ENG_MM_F32_ROLE_GEMM = 1 } eng_mm_f32_role;" in header
    assert "    eng_mm_f32_get_nr_fn get_nr;\n    eng_mm_f32_pack_b_fn pack_b;\n    size_t nr; /* packing */" in header
    assert "size_t vlib_gemv_neon_nr(void);" in header
    manifest = json.loads((out / "isaforge-kernels-eng.json").read_text())
    assert [k["name"] for k in manifest["kernels"]] == ["vlib_gemm_neon", "vlib_gemv_neon", "mm_ref"]
    assert [(k["roles"], k["packing"]) for k in manifest["kernels"]] == [
        (["gemm"], {"nr": 4}), (["gemv"], {"nr": 4}), (["gemv", "gemm"], {"nr": 4})
    ]  # fmt: skip
    # which kernels read the same packed weights
    assert manifest["packing_groups"] == {"mm_f32": [["vlib_gemm_neon", "vlib_gemv_neon", "mm_ref"]]}


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


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        pytest.param(
            ("packing = { nr = 4 }\n\n[kernel.vlib_gemm_neon]", "packing = { nr = 8 }\n\n[kernel.vlib_gemm_neon]"),
            ["shares packed operands", "vlib_gemv_neon"],
            id="packing-disagrees",
        ),
        pytest.param(
            (
                'members = { get_nr = "vlib_gemv_neon_nr", pack_b = "vlib_gemv_neon_pack" }',
                'members = { get_nr = "vlib_gemv_neon_nr" }',
            ),
            ["members lacks pack_b"],
            id="member-missing",
        ),
        pytest.param(('roles = ["gemv"]', 'roles = ["gemvv"]'), ["has no role 'gemvv'"], id="unknown-role"),
        pytest.param(
            ('get_nr = "vlib_gemm_neon_nr"', 'get_nr = "vlib_gemm_neon_mr"'),
            ["members.get_nr vlib_gemm_neon_mr is defined in none"],
            id="member-undefined",
        ),
    ],
)
def test_a_bad_interface_kernel_is_one_line_and_writes_nothing(tmp_path, change, needles):
    assert change[0] in INTERFACE_KERNELS
    out = tmp_path / "out"
    one_line_error(run(make_interface_engine(tmp_path / "e", INTERFACE_KERNELS.replace(*change)), out), *needles)
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        pytest.param(
            ('when = "m == 1"', 'when = "rows == 1"'),
            ["'rows' is not an integer parameter", "m, n, k"],
            id="unknown-parameter",
        ),
        pytest.param(('when = "m == 1"', 'when = "a == 1"'), ["'a' is not an integer parameter"], id="pointer"),
        pytest.param(('when = "m == 1"', 'when = "m === 1"'), ["is not <param>"], id="rule-syntax"),
        pytest.param(
            ('{ name = "gemm" }', '{ name = "gemm", when = "m > 1" }'), ["the last role serves"], id="last-rule"
        ),
    ],
)
def test_a_bad_role_rule_is_one_line(tmp_path, change, needles):
    toml = make_interface_engine(tmp_path / "e")
    assert change[0] in toml.read_text()
    toml.write_text(toml.read_text().replace(*change))
    one_line_error(run(toml, tmp_path / "out"), *needles)


def test_twins_tuned_for_one_core_compete_only_within_a_role(tmp_path):
    tuned = INTERFACE_KERNELS.replace('roles = ["gemv"]', 'roles = ["gemv"]\ntuned_for = ["cortex-a55"]')
    apart = tuned.replace('roles = ["gemm"]', 'roles = ["gemm"]\ntuned_for = ["cortex-a55"]')
    assert run(make_interface_engine(tmp_path / "apart", apart), tmp_path / "out-apart").returncode == 0
    rival = apart.replace('roles = ["gemm"]', 'roles = ["gemv"]')
    proc = run(make_interface_engine(tmp_path / "rival", rival), tmp_path / "out")
    one_line_error(proc, "vlib_gemv_neon and vlib_gemm_neon are both mm_f32 kernels of neon tuned for cortex-a55")
