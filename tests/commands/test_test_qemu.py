"""`isaforge test-qemu`: real Meson (and CMake) builds of engines outside the tree, their tests under real QEMU models
and caps, and the verdicts on the traces those runs wrote; the pure parts (cap order, verdicts, matrix, JSON) on
small hand-made inputs. Engines here are written into tmp_path by the tests: one op or two, ref/neon/dotprod."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from isaforge import coverage, projects, qemu, source_tree
from isaforge.catalogue import load
from isaforge.cli import build_parser
from isaforge.commands.test_qemu import _split_models, run_env, run_files, selected_models, selected_toolchains
from isaforge.coverage import Kernel, Manifest, Run, Trace
from isaforge.errors import IsaforgeError
from isaforge.toolchains.model import Toolchain, toolchains
from isaforge.toolchains.probing import probe
from tests.conftest import assert_one_line_error

REPO = Path(source_tree.__file__).resolve().parents[2]
CAT = load()


def isaforge(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QEMU_", "ISAFORGE_"))}
    env["PYTHONPATH"] = str(REPO / "src")
    return subprocess.run(
        [sys.executable, "-m", "isaforge", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def usable(name: str) -> Toolchain:
    tc = next(tc for tc in toolchains() if tc.name == name)
    found = probe(tc)
    if not found.usable:
        pytest.skip(f"{name} unusable here: {'; '.join(found.reasons)}")
    return tc


# -- a small engine, written where a user would have it: outside the isaforge tree ----------------------------------

ENGINE_TOML = """\
[engine]
name = "tiny"

[signature.dot]
returns = "int32_t"
params = "const int8_t *a, const int8_t *b, size_t n"
args = "a, b, n"
doc = "Dot product of n int8 values."

[op.dot_s8]
signature = "dot"
doc = "int8 dot product"

[op.sum_s8]
signature = "dot"
doc = "sum of a (b unused); {called}"
"""

REF = """\
#include "tiny_dispatch.h"

int32_t tiny_{op}_s8_1x1_ref(const int8_t *a, const int8_t *b, size_t n) {{
    int32_t s = 0;
    for (size_t i = 0; i < n; i++) {{
        s += a[i] * {b};
    }}
    return s;
}}
"""

NEON = """\
#include <arm_neon.h>

#include "tiny_dispatch.h"

int32_t tiny_dot_s8_1x8_neon(const int8_t *a, const int8_t *b, size_t n) {
    int32x4_t acc = vdupq_n_s32(0);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        acc = vpadalq_s16(acc, vmull_s8(vld1_s8(a + i), vld1_s8(b + i)));
    }
    int32_t s = vgetq_lane_s32(acc, 0) + vgetq_lane_s32(acc, 1) + vgetq_lane_s32(acc, 2) + vgetq_lane_s32(acc, 3);
    for (; i < n; i++) {
        s += a[i] * b[i];
    }
    return s;
}
"""

DOTPROD = """\
#include <arm_neon.h>

#include "tiny_dispatch.h"

int32_t tiny_dot_s8_1x16_dotprod(const int8_t *a, const int8_t *b, size_t n) {
    int32x4_t acc = vdupq_n_s32(0);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        acc = vdotq_s32(acc, vld1q_s8(a + i), vld1q_s8(b + i));
    }
    int32_t s = vgetq_lane_s32(acc, 0) + vgetq_lane_s32(acc, 1) + vgetq_lane_s32(acc, 2) + vgetq_lane_s32(acc, 3);
    for (; i < n; i++) {
        s += a[i] * b[i];
    }
    return s;
}
"""

TEST_C = """\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiny_dispatch.h"

int main(void) {
    int8_t a[37], b[37];
    int32_t dot = 0, sum = 0;
    for (int i = 0; i < 37; i++) {
        a[i] = (int8_t)(i % 11 - 5);
        b[i] = (int8_t)(i % 7 - 3);
        dot += a[i] * b[i];
        sum += a[i];
    }
    int failed = tiny_dot_s8(a, b, 37) != dot;
    printf("dot_s8: %s\\n", tiny_kernel_name(TINY_OP_DOT_S8));
    if (CALL_SUM) {
        failed += tiny_sum_s8(a, b, 37) != sum;
    }
    /* A suite that breaks under one cap: test-qemu must name the run. */
    const char *cap = getenv("ISAFORGE_DISABLE");
    if (FAIL_UNDER_CAP[0] != '\\0' && cap != NULL && strstr(cap, FAIL_UNDER_CAP) != NULL) {
        failed++;
    }
    return failed;
}
"""

MESON_BUILD = """\
project('tiny', 'c', meson_version: '>=1.4', default_options: ['c_std=c11'])
isaforge = dependency('isaforge')
add_project_arguments(isaforge.get_variable('isaforge_baseline').split(), language: 'c')
libs = []
foreach line : run_command(find_program('python3'), isaforge.get_variable('isaforge_enginegen'), files('engine.toml'),
    '-o', meson.current_build_dir(), '--cc', meson.get_compiler('c').cmd_array(), check: true).stdout().splitlines()
  lib = line.split('|')
  libs += static_library(lib[0], lib[2].split(), c_args: lib[1].split(), dependencies: isaforge)
endforeach
tiny = static_library('tiny', isaforge.get_variable('isaforge_engine_dir') / 'engine_dispatch.c', link_whole: libs,
  dependencies: isaforge)
test('tiny', executable('test_tiny', 'test_tiny.c', link_with: tiny, dependencies: isaforge, c_args: {c_args}))
"""


# The same engine for CMake, reading isaforge's pkg-config file (found through CMAKE_PREFIX_PATH, which test-qemu
# sets to the installed prefix) and running the generator itself: no isaforge CMake helper needed.
CMAKE_LISTS = """\
cmake_minimum_required(VERSION 3.24)
project(tiny C)
find_package(PkgConfig REQUIRED)
pkg_check_modules(ISAFORGE REQUIRED IMPORTED_TARGET isaforge)
pkg_get_variable(generator isaforge isaforge_enginegen)
pkg_get_variable(engine_dir isaforge isaforge_engine_dir)
pkg_get_variable(baseline isaforge isaforge_baseline)
separate_arguments(baseline UNIX_COMMAND "${{baseline}}")
add_compile_options(${{baseline}})
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(cc ${{CMAKE_C_COMPILER}})
if(CMAKE_C_COMPILER_TARGET)
  list(APPEND cc --target=${{CMAKE_C_COMPILER_TARGET}})
endif()
execute_process(COMMAND ${{Python3_EXECUTABLE}} ${{generator}} ${{CMAKE_CURRENT_SOURCE_DIR}}/engine.toml
  -o ${{CMAKE_CURRENT_BINARY_DIR}} --cc ${{cc}} OUTPUT_VARIABLE out COMMAND_ERROR_IS_FATAL ANY)
string(REPLACE "\\n" ";" lines "${{out}}")
set(libs)
foreach(line IN LISTS lines)
  if(line STREQUAL "")
    continue()
  endif()
  string(REPLACE "|" ";" fields "${{line}}")
  list(GET fields 0 name)
  list(GET fields 1 flags)
  list(GET fields 2 sources)
  separate_arguments(flags UNIX_COMMAND "${{flags}}")
  separate_arguments(sources UNIX_COMMAND "${{sources}}")
  add_library(${{name}} STATIC ${{sources}})
  target_compile_options(${{name}} PRIVATE ${{flags}})
  target_include_directories(${{name}} PRIVATE ${{CMAKE_CURRENT_BINARY_DIR}})
  target_link_libraries(${{name}} PRIVATE PkgConfig::ISAFORGE)
  list(APPEND libs ${{name}})
endforeach()
add_library(tiny STATIC ${{engine_dir}}/engine_dispatch.c)
target_include_directories(tiny PUBLIC ${{CMAKE_CURRENT_BINARY_DIR}})
target_link_libraries(tiny PUBLIC "$<LINK_LIBRARY:WHOLE_ARCHIVE,${{libs}}>" PkgConfig::ISAFORGE)
add_executable(test_tiny test_tiny.c)
target_compile_definitions(test_tiny PRIVATE {defines})
target_link_libraries(test_tiny PRIVATE tiny)
enable_testing()
add_test(NAME tiny COMMAND test_tiny)
"""


def write_engine(root: Path, call_sum: bool = True, fail_under_cap: str = "", cmake: bool = False) -> Path:
    """The engine: dot_s8 in ref/neon/dotprod on both arches, sum_s8 in ref only; its test checks both ops' results
    (sum_s8 only when `call_sum`) and fails when ISAFORGE_DISABLE names `fail_under_cap`. Built with Meson, or with
    CMake when `cmake`."""
    root.mkdir(parents=True)
    (root / "engine.toml").write_text(ENGINE_TOML.format(called="called" if call_sum else "never called"))
    (root / "kernels" / "reference").mkdir(parents=True)
    (root / "kernels" / "reference" / "dot_s8_1x1_ref.c").write_text(REF.format(op="dot", b="b[i]"))
    (root / "kernels" / "reference" / "sum_s8_1x1_ref.c").write_text(REF.format(op="sum", b="1 + 0 * b[i]"))
    for arch_dir in ("aarch64", "aarch32"):
        for variant, text, name in (("neon", NEON, "dot_s8_1x8_neon"), ("dotprod", DOTPROD, "dot_s8_1x16_dotprod")):
            folder = root / "kernels" / arch_dir / variant
            folder.mkdir(parents=True)
            (folder / f"{name}.c").write_text(text)
    (root / "test_tiny.c").write_text(TEST_C)
    if cmake:
        defines = f'CALL_SUM={int(call_sum)} FAIL_UNDER_CAP="{fail_under_cap}"'
        (root / "CMakeLists.txt").write_text(CMAKE_LISTS.format(defines=defines))
        return root
    c_args = [f"-DCALL_SUM={int(call_sum)}", f'-DFAIL_UNDER_CAP="{fail_under_cap}"']
    (root / "meson.build").write_text(MESON_BUILD.format(c_args=repr(c_args)))
    return root


# -- bad input: one line ------------------------------------------------------------------------------------------


def test_a_folder_without_build_files_is_one_line(tmp_path):
    (tmp_path / "README").write_text("no build files here\n")
    proc = isaforge("test-qemu", "--project", str(tmp_path))
    assert_one_line_error(proc, str(tmp_path), "neither meson.build nor CMakeLists.txt", "Meson or CMake")
    assert not (tmp_path / "build-isaforge").exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--project", "/nonexistent/engine"], "/nonexistent/engine is not a directory"),
        (["--qemu-cpu", "cortex-a9"], "unknown CPU model 'cortex-a9'"),
        (["--toolchains", "riscv64-linux-gnu-gcc"], "unknown toolchain 'riscv64-linux-gnu-gcc'"),
        (["--targets", "riscv64"], "unknown target 'riscv64'"),
        (["--compilers", "icc"], "unknown compiler 'icc'"),
    ],
)
def test_bad_selection_is_one_line(tmp_path, args, says):
    (tmp_path / "meson.build").write_text("project('p', 'c')\n")
    proc = isaforge("test-qemu", *(args if "--project" in args else ["--project", str(tmp_path), *args]))
    assert_one_line_error(proc, says)


def _declaring(root: Path, arches: str) -> Path:
    """A project whose only engine catalogue declares `arches` (a TOML list)."""
    root.mkdir(parents=True)
    (root / "meson.build").write_text("project('p', 'c')\n")
    (root / "engine.toml").write_text(f'[engine]\nname = "tiny"\narches = {arches}\n')
    return root


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--targets", "arm"], "--targets names arm-linux-gnueabihf, but the engine's catalogue"),
        (["--toolchains", "arm-linux-gnueabihf-gcc"], "--toolchains names arm-linux-gnueabihf, but"),
        (["-D", "warning_level"], "-D 'warning_level' is not KEY=VALUE; give a build option as -D KEY=VALUE"),
    ],
)
def test_an_arch_the_engine_does_not_declare_or_a_bad_option_is_one_line(tmp_path, args, says):
    project = _declaring(tmp_path / "p", '["aarch64"]')
    proc = isaforge("test-qemu", "--project", str(project), *args)
    assert_one_line_error(proc, says)
    if "--targets" in args:
        assert "engine.toml) declares arches = ['aarch64']; leave arm out, or add it to [engine] arches" in proc.stderr
    assert not (project / "build-isaforge").exists()


def test_the_declared_arches_choose_the_default_toolchains(tmp_path):
    def chosen(project: Path, *args: str) -> list[str]:
        parsed = build_parser().parse_args(["test-qemu", "--project", str(project), *args])
        declared = projects.declared_arches(project, project / "build-isaforge")
        return [tc.name for tc in selected_toolchains(CAT, parsed, declared)]

    aarch64 = _declaring(tmp_path / "a", '["aarch64"]')
    assert chosen(aarch64) == ["aarch64-linux-gnu-gcc", "aarch64-linux-gnu-clang"]
    assert chosen(aarch64, "--compilers", "clang") == ["aarch64-linux-gnu-clang"]
    assert chosen(_declaring(tmp_path / "b", '["arm", "aarch64"]')) == [tc.name for tc in toolchains()]
    (tmp_path / "b" / "engine.toml").write_text('[engine]\nname = "tiny"\n')  # no arches: every one, as before
    assert len(chosen(tmp_path / "b")) == 4
    (tmp_path / "b" / "engine.toml").write_text('[engine]\nname = "tiny"\narches = ["riscv64"]\n')
    with pytest.raises(IsaforgeError, match=r"engine.toml: \[engine\] arches names 'riscv64'; choose from: aarch64"):
        chosen(tmp_path / "b")


@pytest.mark.e2e
def test_a_project_that_writes_no_manifest_is_one_line(tmp_path):
    tc = usable("aarch64-linux-gnu-gcc")
    project = tmp_path / "plain"
    project.mkdir()
    (project / "meson.build").write_text("project('plain', 'c')\ntest('t', executable('t', 't.c'))\n")
    (project / "t.c").write_text("int main(void) { return 0; }\n")
    report = tmp_path / "r.json"
    proc = isaforge("test-qemu", "--project", str(project), "--toolchains", tc.name, "--qemu-cpu", "max",
                    "--json", str(report))  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    *progress, error = proc.stderr.strip().splitlines()  # the steps it got through, then the error
    assert progress[-1] == f"{tc.name}: build"
    assert error.startswith("isaforge: error: ") and "wrote no kernel manifest (isaforge-kernels-*.json)" in error
    # the error ended the run, and the report says where
    (build,) = json.loads(report.read_text())["builds"]
    assert build["passed"] is False and build["step"] == "manifest" and "wrote no kernel manifest" in build["error"]


@pytest.mark.e2e
def test_a_generator_error_is_its_own_line_and_the_next_build_goes_on(tmp_path):
    """A catalogue the generator refuses fails configure on every toolchain: each build says so with the generator's
    own line (from Meson's log), and each is tried and reported."""
    names = [usable("aarch64-linux-gnu-gcc").name, usable("arm-linux-gnueabihf-clang").name]
    engine = write_engine(tmp_path / "tiny")
    (engine / "kernels" / "reference" / "sum_s8_1x1_ref.c").unlink()
    report = tmp_path / "r.json"
    proc = isaforge("test-qemu", "--project", str(engine), "--toolchains", ",".join(names),
                    "--qemu-cpu", "cortex-a53,cortex-a7", "--json", str(report))  # fmt: skip
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    fails = [line for line in proc.stdout.splitlines() if line.startswith("  FAIL ")]
    assert len(fails) == 2, proc.stdout
    for line in fails:
        assert line.startswith(f"  FAIL configure: enginegen: {engine / 'engine.toml'}: op sum_s8 has no reference "), (
            line
        )
    assert "FAILED (2 failures)" in proc.stdout.splitlines()[-1]
    builds = json.loads(report.read_text())["builds"]
    assert [f"{b['target']}-{b['compiler']}" for b in builds] == names
    for build, line in zip(builds, fails, strict=True):
        assert build["passed"] is False and build["step"] == "configure"
        assert line == f"  FAIL configure: {build['error']}"


# -- an engine proven end to end, and the verdicts on the traces its runs wrote --------------------------------------


# The tests reading the `proven` engine: one worker builds and proves it for them all (pytest-xdist).
PROVEN = pytest.mark.xdist_group("proven")


@pytest.fixture(scope="module")
def proven(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess[str], dict]:
    """The small engine built for aarch64 with gcc and proven on cortex-a53 and max (with the cap walk)."""
    tc = usable("aarch64-linux-gnu-gcc")
    engine = write_engine(tmp_path_factory.mktemp("engines") / "tiny")
    report = engine.parent / "r.json"
    proc = isaforge("test-qemu", "--project", str(engine), "--toolchains", tc.name,
                    "--qemu-cpu", "cortex-a53,max", "--json", str(report), cwd=engine.parent)  # fmt: skip
    return engine, proc, json.loads(report.read_text()) if report.is_file() else {}


@pytest.mark.e2e
@PROVEN
def test_engine_is_proven_with_its_matrix_and_json(proven):
    engine, proc, report = proven
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    lines = out.splitlines()
    header = next(line for line in lines if line.strip().startswith("kernel"))
    assert header.split() == ["kernel", "cortex-a53", "max", "caps", "on", "max"]
    rows = {line.split()[0]: line.split()[1:] for line in lines if line.startswith("  ") and "_s8_" in line}
    # most preferred first within dot_s8, then sum_s8
    assert list(rows) == ["dot_s8_1x16_dotprod", "dot_s8_1x8_neon", "dot_s8_1x1_ref", "sum_s8_1x1_ref"]
    assert rows["dot_s8_1x16_dotprod"] == ["·", "✓", "·"]  # refused on A53 and under every cap
    assert rows["dot_s8_1x8_neon"] == ["✓", "-", "✓", "-dotprod"]  # dispatch's choice once dotprod is capped
    assert rows["dot_s8_1x1_ref"] == ["-", "-", "✓", "-neon"]  # and the reference once neon is
    assert "aarch64-linux-gnu-gcc: 4 kernels, 4 ran, ok (4 test runs)" in out
    assert out.rstrip().splitlines()[-1].startswith("test-qemu: tiny: 1 build, proven in ")
    assert report["builds"] == [
        {
            "target": "aarch64-linux-gnu",
            "compiler": "gcc",
            "builddir": str(engine / "build-isaforge" / "aarch64-linux-gnu-gcc"),
            "passed": True,
        }
    ]
    dotprod = report["kernels"]["dot_s8_1x16_dotprod@aarch64-linux-gnu-gcc"]
    assert dotprod["target"] == "aarch64-linux-gnu" and dotprod["compiler"] == "gcc"
    assert dotprod["variant"] == "dotprod" and dotprod["ran"] == ["max"]
    assert dotprod["refused"][0] == "cortex-a53" and dotprod["failures"] == []
    assert report["kernels"]["dot_s8_1x1_ref@aarch64-linux-gnu-gcc"]["ran"] == [
        coverage.cap_walk(CAT, "aarch64")[-1].label  # the deepest cap of what max has
    ]
    for key, kernel in report["kernels"].items():
        assert kernel["ran"], key
        assert kernel["variant"] == "ref" or kernel["refused"], key
    # Nothing of the engine's is left in the tree it came from but the build directory.
    assert sorted(p.name for p in engine.iterdir()) == ["build-isaforge", "engine.toml", "kernels", "meson.build",
                                                       "test_tiny.c"]  # fmt: skip


def _observed(engine: Path) -> list[tuple[Run, Trace]]:
    """The runs test-qemu made and the traces they wrote (its logs folder), as the command judged them."""
    logs = engine / "build-isaforge" / "aarch64-linux-gnu-gcc-logs"
    runs = [Run("cortex-a53"), Run("max"), *coverage.cap_walk(CAT, "aarch64", {"neon", "dotprod"})]
    return [(run, coverage.read_trace(run_files(logs, run)[0])) for run in runs]


@pytest.mark.e2e
@PROVEN
def test_verdicts_on_the_real_traces(proven):
    engine, proc, _ = proven
    assert proc.returncode == 0, proc.stdout + proc.stderr
    observed = _observed(engine)
    assert all(trace.ran for _, trace in observed)  # every run wrote its trace
    (manifest,) = coverage.find_manifests(engine / "build-isaforge" / "aarch64-linux-gnu-gcc")
    assert manifest.owner == "tiny" and manifest.arch == "aarch64" and manifest.compiler == "gcc"
    results = coverage.evaluate(CAT, "aarch64", [manifest], observed)
    assert [r.failures for r in results] == [[], [], [], []]

    # The same traces against a catalogue that disagrees with what dispatch did: had the neon kernel needed dotprod,
    # it ran where dotprod is absent (on A53, and on max with dotprod capped); had the dotprod kernel needed only
    # neon, dispatch refused it where all it needs is there.
    def lying(name: str, requires: set[str]) -> Manifest:
        kernels = tuple(
            Kernel(k.owner, k.name, k.op, k.variant, frozenset(requires)) if k.name == name else k
            for k in manifest.kernels
        )
        return Manifest(manifest.path, manifest.owner, manifest.arch, manifest.compiler, kernels, {})

    (_, neon, *_) = coverage.evaluate(CAT, "aarch64", [lying("dot_s8_1x8_neon", {"neon", "dotprod"})], observed)
    assert neon.failures[0] == "dot_s8_1x8_neon ran on cortex-a53, which lacks dotprod"
    assert [run.label for run in neon.wrong_runs] == ["cortex-a53", observed[2][0].label]
    (dotprod, *_) = coverage.evaluate(CAT, "aarch64", [lying("dot_s8_1x16_dotprod", {"neon"})], observed)
    assert dotprod.failures[0] == (
        "dot_s8_1x16_dotprod was refused on cortex-a53, which has all it needs (neon): dispatch disagrees with "
        "the catalogue"
    )


SUM_NEON = """\
#include <arm_neon.h>

#include "tiny_dispatch.h"

int32_t tiny_sum_s8_1x8_neon(const int8_t *a, const int8_t *b, size_t n) {
    (void)b;
    int32x4_t acc = vdupq_n_s32(0);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        acc = vpadalq_s16(acc, vmovl_s8(vld1_s8(a + i)));
    }
    int32_t s = vgetq_lane_s32(acc, 0) + vgetq_lane_s32(acc, 1) + vgetq_lane_s32(acc, 2) + vgetq_lane_s32(acc, 3);
    for (; i < n; i++) {
        s += a[i];
    }
    return s;
}
"""


def _buildoptions(builddir: Path) -> dict[str, object]:
    intro = json.loads((builddir / "meson-info" / "intro-buildoptions.json").read_text())
    return {option["name"]: option["value"] for option in intro}


@pytest.mark.e2e
@PROVEN
def test_an_added_kernel_is_picked_up_in_the_same_build_directory(proven, tmp_path):
    """Meson runs the generator at configure time only and does not see a new kernel file: test-qemu reconfigures
    the build directory it has (not a fresh one) when the project's files changed."""
    engine, proc, _ = proven
    assert proc.returncode == 0, proc.stdout + proc.stderr
    builddir = engine / "build-isaforge" / "aarch64-linux-gnu-gcc"
    assert _buildoptions(builddir)["buildtype"] == "release"  # as engines ship, not Meson's debug
    kept = builddir / "kept-by-reconfigure"
    kept.write_text("")
    (engine / "kernels" / "aarch64" / "neon" / "sum_s8_1x8_neon.c").write_text(SUM_NEON)
    report = tmp_path / "r.json"
    again = isaforge("test-qemu", "--project", str(engine), "--toolchains", "aarch64-linux-gnu-gcc",
                     "--qemu-cpu", "cortex-a53,max", "--json", str(report), cwd=engine.parent)  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    assert kept.is_file()
    assert "aarch64-linux-gnu-gcc: 5 kernels, 5 ran, ok" in again.stdout
    kernels = json.loads(report.read_text())["kernels"]
    assert kernels["sum_s8_1x8_neon@aarch64-linux-gnu-gcc"]["ran"][:2] == ["cortex-a53", "max"]
    assert kernels["sum_s8_1x1_ref@aarch64-linux-gnu-gcc"]["ran"] == [
        coverage.cap_walk(CAT, "aarch64")[-1].label  # the deepest cap of what max has
    ]


@pytest.mark.e2e
@pytest.mark.slow  # a new configuration and build (~15 s); tests/test_projects.py checks the command lines
@PROVEN
def test_another_build_type_or_option_reconfigures(proven):
    engine, proc, _ = proven
    assert proc.returncode == 0, proc.stdout + proc.stderr
    again = isaforge("test-qemu", "--project", str(engine), "--toolchains", "aarch64-linux-gnu-gcc",
                     "--qemu-cpu", "cortex-a53", "--buildtype", "debug", "-D", "warning_level=3",
                     cwd=engine.parent)  # fmt: skip
    assert again.returncode == 1, again.stdout + again.stderr  # on A53 alone the dotprod kernel never runs
    options = _buildoptions(engine / "build-isaforge" / "aarch64-linux-gnu-gcc")
    assert (options["buildtype"], options["warning_level"]) == ("debug", "3")


@pytest.mark.e2e
@pytest.mark.slow  # two CMake runs (~20 s), in make ci: the slice proves the engine-cmake example through CMake
@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is needed: apt-get install cmake")
def test_a_cmake_engine_is_proven_with_ctest(tmp_path):
    tc = usable("arm-linux-gnueabihf-gcc")
    engine = write_engine(tmp_path / "tiny", cmake=True)
    report = tmp_path / "r.json"
    proc = isaforge("test-qemu", "--project", str(engine), "--toolchains", tc.name, "--qemu-cpu", "cortex-a15,max",
                    "--json", str(report))  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    builddir = engine / "build-isaforge" / tc.name
    assert (builddir / "CMakeCache.txt").is_file() and (builddir / "compile_commands.json").is_file()
    cache = (builddir / "CMakeCache.txt").read_text()
    assert f"CMAKE_TOOLCHAIN_FILE:FILEPATH={engine / 'build-isaforge' / tc.name}.cmake" in cache
    assert "CMAKE_BUILD_TYPE:STRING=Release" in cache
    log = (engine / "build-isaforge" / f"{tc.name}-logs" / "test-cortex-a15.log").read_text()
    assert "ctest" in log.splitlines()[0] and "100% tests passed" in log
    assert "arm-linux-gnueabihf-gcc: 4 kernels, 4 ran, ok" in proc.stdout
    kernels = json.loads(report.read_text())["kernels"]
    assert kernels["dot_s8_1x8_neon@arm-linux-gnueabihf-gcc"]["ran"][0] == "cortex-a15"
    assert kernels["dot_s8_1x16_dotprod@arm-linux-gnueabihf-gcc"]["refused"][0] == "cortex-a15"
    # a kernel file added: CMake's configure step, which test-qemu always runs, reads the kernel tree again
    (engine / "kernels" / "aarch32" / "neon" / "sum_s8_1x8_neon.c").write_text(SUM_NEON)
    again = isaforge("test-qemu", "--project", str(engine), "--toolchains", tc.name, "--qemu-cpu", "cortex-a15,max",
                     "--json", str(report))  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr[-3000:]
    assert "arm-linux-gnueabihf-gcc: 5 kernels, 5 ran, ok" in again.stdout
    assert (
        json.loads(report.read_text())["kernels"]["sum_s8_1x8_neon@arm-linux-gnueabihf-gcc"]["ran"][0] == "cortex-a15"
    )


@pytest.mark.e2e
def test_a_kernel_no_test_reaches_fails(tmp_path):
    tc = usable("aarch64-linux-gnu-gcc")
    engine = write_engine(tmp_path / "tiny", call_sum=False)
    report = tmp_path / "r.json"
    proc = isaforge("test-qemu", "--project", str(engine), "--toolchains", tc.name, "--qemu-cpu", "cortex-a53,max",
                    "--json", str(report))  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "  FAIL sum_s8_1x1_ref never ran in 4 test runs: no test calls its op, or dispatch never chose it" in (
        proc.stdout
    )
    assert "aarch64-linux-gnu-gcc: 4 kernels, 3 ran, 1 kernel failing (4 test runs)" in proc.stdout
    assert "FAILED (1 failure)" in proc.stdout.splitlines()[-1]
    kernels = json.loads(report.read_text())["kernels"]
    assert kernels["sum_s8_1x1_ref@aarch64-linux-gnu-gcc"]["ran"] == []
    assert kernels["dot_s8_1x1_ref@aarch64-linux-gnu-gcc"]["failures"] == []


@pytest.mark.e2e
def test_a_test_run_that_fails_names_its_model_and_cap(tmp_path):
    tc = usable("arm-linux-gnueabihf-clang")
    engine = write_engine(tmp_path / "tiny", fail_under_cap="dotprod")
    proc = isaforge("test-qemu", "--project", str(engine), "--toolchains", tc.name, "--qemu-cpu", "cortex-a7,max")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    walk = coverage.cap_order(CAT, "arm")
    cap = ",".join(walk[: walk.index("dotprod") + 1])
    _, log = run_files(engine / "build-isaforge" / f"{tc.name}-logs", Run("max", tuple(cap.split(","))))
    assert f"  FAIL the tests failed on max (ISAFORGE_DISABLE={cap}): exit status 1; full output in {log}" in (
        proc.stdout
    )
    assert log.is_file()
    assert f"{tc.name}: coverage not evaluated" in proc.stdout


# -- the example engines and libisaforge itself ------------------------------------------------------------------------

EXAMPLES = sorted(p.name for p in (REPO / "examples").glob("engine-*") if p.is_dir())
# Both arches and both compilers in the default slice (aarch64 with gcc, arm with clang), on the baseline-only models
# and max; each toolchain compiles the examples differently, so make ci runs the other two pairings too (slow).
SLICE = ["aarch64-linux-gnu-gcc", "arm-linux-gnueabihf-clang"]
OTHER_PAIRINGS = ["aarch64-linux-gnu-clang", "arm-linux-gnueabihf-gcc"]


@pytest.mark.e2e
@pytest.mark.parametrize(
    "toolchains",
    [pytest.param(SLICE, id="slice"), pytest.param(OTHER_PAIRINGS, id="other-pairings", marks=pytest.mark.slow)],
)
# The slice copies engine-meson outside the tree; engine-cmake's build is proven there by its Conan package
# (tests/recipes/test_engine_cmake.py) and the vendored example's through CMake below: their copies run in make ci.
# Every example in make ci; the slice proves a copied engine outside the tree from the installed wheel
# (tests/packaging/test_wheel.py), engine-meson and engine-vendored in the tree.
@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES)
def test_example_engine_copied_outside_the_tree_is_proven(example, toolchains, tmp_path):
    for name in toolchains:
        usable(name)
    copy = tmp_path / example
    shutil.copytree(REPO / "examples" / example, copy, symlinks=True)  # its subprojects/isaforge link now dangles
    sme = SLICE_SVL if toolchains == SLICE else FULL_SWEEP
    data = prove_example(copy, toolchains, tmp_path, sme)
    if example == "engine-vendored":
        assert_the_vendored_twin_is_chosen_on_its_core(data, toolchains, sme)


# cortex-a55: the vendored example's core-tuned twin is chosen there and nowhere else.
EXAMPLE_MODELS = "cortex-a53,cortex-a55,cortex-a7,max"
# The SME kernels' runs: test-qemu's whole SVL sweep (FA64 off, the SVE length apart) in make ci; its two ends and
# the negative in make test's slice, asked for by name (test-qemu then adds no sweep of its own).
FULL_SWEEP = [r.model for r in coverage.sme_runs(CAT, "aarch64", {"sme2"})]
SLICE_SVL = [FULL_SWEEP[0], FULL_SWEEP[-2], FULL_SWEEP[-1]]


def prove_example(copy: Path, toolchains: list[str], tmp_path: Path, sme: list[str] = FULL_SWEEP) -> dict:
    """test-qemu on the copy; `sme`: the SME runs, asked for by name unless they are test-qemu's own sweep."""
    report = tmp_path / "r.json"
    models = EXAMPLE_MODELS if sme == FULL_SWEEP else ",".join([EXAMPLE_MODELS, *sme])
    proc = isaforge("test-qemu", "--project", str(copy), "--toolchains", ",".join(toolchains),
                    "--qemu-cpu", models, "--json", str(report), cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    print(proc.stdout)
    data = json.loads(report.read_text())
    assert [(b["target"], b["compiler"]) for b in data["builds"]] == [tuple(n.rsplit("-", 1)) for n in toolchains]
    assert {key.split("@")[1] for key in data["kernels"]} == set(toolchains)
    for key, kernel in data["kernels"].items():
        assert kernel["ran"], key  # every kernel ran on at least one model
        assert kernel["variant"] == "ref" or kernel["refused"], key  # and all but the references were refused once
        assert kernel["failures"] == [], key
    return data


def assert_the_vendored_twin_is_chosen_on_its_core(data: dict, toolchains: list[str], sme: list[str]) -> None:
    for tc in (t for t in toolchains if t.startswith("aarch64")):
        twin = data["kernels"][f"vuk_matmul_clamp_f32_f32p8_4x8_neon_a55@{tc}"]
        other = data["kernels"][f"vuk_matmul_clamp_f32_f32p8_4x8_neon_asm@{tc}"]
        assert twin["chosen"] == ["cortex-a55"] and "cortex-a55" not in other["chosen"], (twin, other)
        assert {"cortex-a53", "max"} <= set(other["chosen"])
        both = data["kernels"][f"vuk_dot_s8_f16_16x4_dotprod_fp16@{tc}"]  # fp16 + dotprod
        assert both["variant"] == "fp16+dotprod" and "cortex-a53" in both["refused"] and "cortex-a55" in both["ran"]
        assert_the_sme_kernels_ran_at_every_svl(data, tc, sme)


def assert_the_sme_kernels_ran_at_every_svl(data: dict, tc: str, sme: list[str]) -> None:
    """The SME2 and SME1 kernels ran under the SME QEMU at every SVL asked for (FA64 off, the SVE length apart),
    never where SME is off; the SME1 one also on QEMU 10's max, which has SME but not SME2."""
    sweep = [m for m in sme if "sme=off" not in m]
    for name, on_max in (("vuk_dot_s8_f16_sme2", False), ("vuk_dot_s8_f16_sme", True)):
        kernel = data["kernels"][f"{name}@{tc}"]
        assert kernel["variant"] == name.rsplit("_", 1)[1] and kernel["failures"] == []
        assert [m for m in kernel["ran"] if m.startswith("qemu-sme:")] == sweep, kernel
        assert {"qemu-sme:max,sme=off", "cortex-a53"} <= set(kernel["refused"])
        assert ("max" in kernel["ran"]) == on_max and ("max" in kernel["refused"]) != on_max


@pytest.mark.e2e
@pytest.mark.parametrize(
    "toolchains",
    [
        pytest.param(["aarch64-linux-gnu-clang"], id="aarch64-clang"),  # the .S companion as CMake's ASM with clang
        pytest.param(
            ["aarch64-linux-gnu-gcc", "arm-linux-gnueabihf-gcc", "arm-linux-gnueabihf-clang"],
            id="others",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_the_vendored_example_is_proven_through_cmake(toolchains, tmp_path):
    for name in toolchains:
        usable(name)
    copy = tmp_path / "engine-vendored"
    shutil.copytree(REPO / "examples" / "engine-vendored", copy, symlinks=True)
    (copy / "meson.build").unlink()  # test-qemu takes a Meson project first
    sme = SLICE_SVL if len(toolchains) == 1 else FULL_SWEEP
    data = prove_example(copy, toolchains, tmp_path, sme)
    assert_the_vendored_twin_is_chosen_on_its_core(data, toolchains, sme)


@pytest.mark.slow  # a whole build of its own (~40 s): in make ci, not in make test's slice
def test_libisaforge_is_its_own_first_client(tmp_path):
    """`make test-qemu` in a slice: the checkout as the project, its Meson suite (test_every_kernel among it) on the
    baseline model and max, down the cap walk; every kernel of the catalogue that the build made is proven."""
    tc = usable("arm-linux-gnueabihf-clang")
    report = tmp_path / "r.json"
    proc = isaforge("test-qemu", "--project", str(REPO), "--toolchains", tc.name, "--qemu-cpu", "cortex-a7,max",
                    "--json", str(report), "--builddir-root", str(tmp_path / "builds"))  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    print(proc.stdout)
    data = json.loads(report.read_text())
    manifest = json.loads((tmp_path / "builds" / tc.name / "isaforge-kernels-isf.json").read_text())
    assert {f"{k['name']}@{tc.name}" for k in manifest["kernels"]} == set(data["kernels"])
    assert not (tmp_path / "builds" / f"{tc.name}-install").exists()  # the library is the project: nothing installed
    for key, kernel in data["kernels"].items():
        assert kernel["owner"] == "isf" and kernel["failures"] == [], key
        # test_every_kernel runs each kernel max can run there, whatever dispatch prefers
        assert "max" in kernel["ran"], key
    assert f"{tc.name}: {len(data['kernels'])} kernels, {len(data['kernels'])} ran, ok" in proc.stdout


# -- the pure parts ---------------------------------------------------------------------------------------------------


def test_cap_order_removes_the_most_advanced_feature_first():
    assert coverage.cap_order(CAT, "aarch64") == [
        "sme_lutv2", "sme_f16f16", "sme_b16b16", "sme_fa64", "sme_f64f64", "sme_i16i64", "sme2p1", "sme2", "sme",
        "svebf16", "svei8mm", "sve2", "sve", "bf16", "i8mm", "dotprod", "fp16", "neon"
    ]  # fmt: skip
    assert coverage.cap_order(CAT, "arm") == ["bf16", "i8mm", "dotprod", "fp16", "neon"]
    for arch in CAT.arches:
        order = coverage.cap_order(CAT, arch)
        for i, name in enumerate(order):  # nothing after a feature needs it
            assert not any(name in CAT.implied_closure(arch, later) - {later} for later in order[i + 1 :])


def test_cap_walk_keeps_only_the_steps_that_change_the_choice():
    every = coverage.cap_walk(CAT, "aarch64")  # the features QEMU 10's max has: SME, not SME2
    assert len(every) == 13 and every[0] == Run("max", ("sme_fa64",)) and len(every[-1].disabled) == 13
    assert every[4] == Run("max", ("sme_fa64", "sme_f64f64", "sme_i16i64", "sme", "svebf16"))
    kept = coverage.cap_walk(CAT, "aarch64", {"neon", "dotprod"})
    assert [run.disabled[-1] for run in kept] == ["dotprod", "neon"]
    assert kept[0].label == (
        "max:disable=sme_fa64,sme_f64f64,sme_i16i64,sme,svebf16,svei8mm,sve2,sve,bf16,i8mm,dotprod"
    )
    assert [run.disabled[-1] for run in coverage.cap_walk(CAT, "arm", {"neon", "fp16", "i8mm"})] == [
        "i8mm", "fp16", "neon"
    ]  # fmt: skip


def test_active_features_take_away_the_cap_and_what_needs_it():
    sme = {"sme", "sme_i16i64", "sme_f64f64"}  # SME does not need SVE; FA64 does
    assert (
        coverage.active_features(CAT, "aarch64", Run("max", ("sve",)))
        == {"neon", "fp16", "dotprod", "i8mm", "bf16"} | sme
    )
    assert coverage.active_features(CAT, "aarch64", Run("max", ("fp16",))) == {"neon", "dotprod", "i8mm", "bf16"}
    assert coverage.active_features(CAT, "aarch64", Run("max", ("sme",))) == set(
        CAT.cpu_features("aarch64", "max,sme=off")
    )
    assert coverage.active_features(CAT, "aarch64", Run("cortex-a53")) == {"neon"}


def test_parse_trace_keeps_only_events():
    trace = coverage.parse_trace("ran eng k1\nrefused eng k2\nran eng k1\nnoise\nran eng\nrefused isf gemm x\n")
    assert trace.ran == {("eng", "k1")} and trace.refused == {("eng", "k2")}


def _kernel(name: str, variant: str, requires: set[str], op: str = "dot_s8") -> Kernel:
    return Kernel("eng", name, op, variant, frozenset(requires))


KERNELS = (
    _kernel("dot_s8_1x1_ref", "ref", set()),
    _kernel("dot_s8_1x8_neon", "neon", {"neon"}),
    _kernel("dot_s8_1x16_dotprod", "dotprod", {"neon", "dotprod"}),
)
MANIFEST = Manifest(Path("m.json"), "eng", "aarch64", "gcc", KERNELS, {"i8mm": "gcc cannot"})


def test_matrix_cells_order_and_dropped_rows():
    a53, max_ = Run("cortex-a53"), Run("max")
    caps = coverage.cap_walk(CAT, "aarch64", {"neon", "dotprod"})
    observed = [
        (a53, coverage.parse_trace("ran eng dot_s8_1x8_neon\nrefused eng dot_s8_1x16_dotprod\n")),
        (max_, coverage.parse_trace("ran eng dot_s8_1x1_ref\nran eng dot_s8_1x1_ref\nrefused eng dot_s8_1x8_neon\n")),
        (caps[0], coverage.parse_trace("ran eng dot_s8_1x8_neon\nrefused eng dot_s8_1x16_dotprod\n")),
        (caps[1], coverage.parse_trace("ran eng dot_s8_1x16_dotprod\n")),
    ]
    results = coverage.evaluate(CAT, "aarch64", [MANIFEST], observed)
    text = coverage.matrix(CAT, results, [a53, max_], caps, MANIFEST.dropped)
    rows = [line.split() for line in text.splitlines()]
    assert rows[0] == ["kernel", "cortex-a53", "max", "caps", "on", "max"]
    assert rows[1] == ["dot_s8_1x16_dotprod", "·", "-", "✗", "-neon"]  # ran with neon capped: a failure
    assert rows[2] == ["dot_s8_1x8_neon", "✓", "!", "✓", "-dotprod"]  # refused on max, which has neon: a failure
    assert rows[3] == ["dot_s8_1x1_ref", "-", "✓", "-"]
    assert rows[4] == ["(i8mm", "kernels)", "not", "built", "not", "built", "not", "built"]
    ref, neon, dotprod = results
    assert ref.failures == []
    assert neon.failures == [
        "dot_s8_1x8_neon was refused on max, which has all it needs (neon): dispatch disagrees with the catalogue"
    ]
    assert dotprod.failures == [f"dot_s8_1x16_dotprod ran on {caps[1].label}, which lacks dotprod, neon"]
    assert coverage.summary("b", results, 4) == "b: 3 kernels, 3 ran, 2 kernels failing (4 test runs)"


def test_a_refusal_that_the_same_run_explains_is_no_failure():
    """A test that caps itself (ENG_DISABLE in its own environment, isf_set_feature_mask) makes dispatch refuse a
    kernel in its process only: the kernel (or one dispatch prefers to it) ran in another process of the run."""
    ref, neon, dotprod = coverage.evaluate(CAT, "aarch64", [MANIFEST], [
        (Run("max"), coverage.parse_trace("ran eng dot_s8_1x16_dotprod\nrefused eng dot_s8_1x16_dotprod\n"
                                          "refused eng dot_s8_1x8_neon\nran eng dot_s8_1x1_ref\n")),
    ])  # fmt: skip
    assert (ref.failures, dotprod.failures) == ([], [])
    assert neon.refused == [Run("max")] and neon.wrong_refusals == []
    assert neon.failures == [
        "dot_s8_1x8_neon never ran in 1 test run: no test calls its op, or dispatch never chose it"
    ]


def test_report_keys_and_owner_prefix_on_a_clash():
    run = Run("max")
    results = coverage.evaluate(
        CAT, "aarch64", [MANIFEST, Manifest(Path("n.json"), "two", "aarch64", "gcc", (Kernel("two", "dot_s8_1x1_ref",
        "dot_s8", "ref", frozenset()),), {})], [(run, coverage.parse_trace("ran eng dot_s8_1x1_ref\n"))]
    )  # fmt: skip
    report = coverage.report([
        coverage.BuildReport("aarch64-linux-gnu", "gcc", Path("/b"), tuple(results), dropped={"i8mm": "gcc cannot"}),
        coverage.BuildReport("arm-linux-gnueabihf", "gcc", Path("/c"), (), "the tests failed on max", step="tests"),
    ])  # fmt: skip
    assert report["builds"] == [
        # not passed: two of its kernels never ran
        {"target": "aarch64-linux-gnu", "compiler": "gcc", "builddir": "/b", "passed": False,
         "dropped": {"i8mm": "gcc cannot"}},
        {"target": "arm-linux-gnueabihf", "compiler": "gcc", "builddir": "/c", "passed": False, "step": "tests",
         "error": "the tests failed on max"},
    ]  # fmt: skip
    assert set(report["kernels"]) == {
        "eng:dot_s8_1x1_ref@aarch64-linux-gnu-gcc",
        "two:dot_s8_1x1_ref@aarch64-linux-gnu-gcc",
        "dot_s8_1x8_neon@aarch64-linux-gnu-gcc",
        "dot_s8_1x16_dotprod@aarch64-linux-gnu-gcc",
    }
    assert report["kernels"]["eng:dot_s8_1x1_ref@aarch64-linux-gnu-gcc"]["ran"] == ["max"]


def test_manifests_of_dependencies_are_left_out_and_broken_ones_are_one_line(tmp_path):
    good = {"owner": "eng", "arch": "aarch64", "compiler": "gcc", "catalogue": "/e.toml", "kernels": [], "dropped": {}}
    for folder in ("", "sub", "subprojects/isaforge", "_deps/isaforge-build"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / f"isaforge-kernels-{folder.split('/')[0] or 'eng'}.json").write_text(json.dumps(good))
    assert [m.path.relative_to(tmp_path).as_posix() for m in coverage.find_manifests(tmp_path)] == [
        "isaforge-kernels-eng.json", "sub/isaforge-kernels-sub.json"
    ]  # fmt: skip
    (tmp_path / "isaforge-kernels-eng.json").write_text('{"owner": "eng", "kernels": []}')
    with pytest.raises(IsaforgeError, match=r"isaforge-kernels-eng.json: manifest field 'arch' missing"):
        coverage.find_manifests(tmp_path)
    (tmp_path / "isaforge-kernels-eng.json").write_text("{")
    with pytest.raises(IsaforgeError, match=r"isaforge-kernels-eng.json: not a readable kernel manifest"):
        coverage.find_manifests(tmp_path)


# -- SME runs -------------------------------------------------------------------------------------------------------


def test_models_keep_their_qemu_properties():
    assert _split_models(["cortex-a53,qemu-sme:max,sme=off,sve=off", "max"]) == [
        "cortex-a53", "qemu-sme:max,sme=off,sve=off", "max"
    ]  # fmt: skip


def test_sme_models_are_asked_for_on_aarch64_only():
    models = selected_models(CAT, ["cortex-a7", "qemu-sme:max,sme-default-vector-length=64"])
    assert models == {"aarch64": ["qemu-sme:max,sme-default-vector-length=64"], "arm": ["cortex-a7"]}
    with pytest.raises(IsaforgeError, match="unknown CPU model 'qemu-sme:neoverse-n1' for aarch64"):
        selected_models(CAT, ["qemu-sme:neoverse-n1"])


def test_the_svl_sweep_runs_only_for_sme_kernels():
    assert coverage.sme_runs(CAT, "aarch64", {"neon", "sve", "dotprod"}) == []
    assert coverage.sme_runs(CAT, "arm", {"neon"}) == []
    runs = coverage.sme_runs(CAT, "aarch64", {"neon", "sme2"})
    sweep = [r.model for r in runs[:-1]]
    assert [int(m.split("sme-default-vector-length=")[1].split(",")[0]) for m in sweep] == [16, 32, 64, 128, 256]
    for model in sweep:  # the SVE vector length apart from the SVL, FA64 off, SME2 there
        assert "sme_fa64=off" in model and model.startswith("qemu-sme:max,")
        svl, vl = (int(part.split("=")[1]) for part in model.split(",")[2:4])
        assert svl != vl and "sme2" in CAT.cpu_features("aarch64", model)
    assert runs[-1] == Run("qemu-sme:max,sme=off") and "sme" not in CAT.cpu_features("aarch64", runs[-1].model)


def test_an_sme_run_finds_the_sme_qemu_first_on_path(tmp_path):
    arch = CAT.arch("aarch64")
    env = run_env(Run("qemu-sme:max,sme=off"), tmp_path / "t", [], arch)
    assert env["QEMU_CPU"] == "max,sme=off"
    assert env["PATH"].split(os.pathsep)[0] == str(qemu.sme_binary(arch).parent)
    plain = run_env(Run("max"), tmp_path / "t", [], arch)
    assert plain["QEMU_CPU"] == "max" and str(qemu.sme_binary(arch).parent) not in plain["PATH"].split(os.pathsep)
