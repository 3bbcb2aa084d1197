"""examples/engine-cmake for real: `conan create` of the engine with isaforge's host profiles (isaforge as requires
and tool_requires, the engine's ctest under QEMU on the chosen model, its test_package), from the checkout, which
must stay as it was; and the same engine with plain CMake against a `meson install` of libisaforge that was moved
after installing (find_package(isaforge CONFIG) through CMAKE_PREFIX_PATH), its tests under QEMU, its build
directory through check-isolation, reconfiguring when the catalogue or the kernel tree changes, and the one-line
refusals at configure time."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from isaforge import builds
from isaforge.catalogue import load
from isaforge.toolchains.model import Toolchain
from tests.recipes import conan_env
from tests.recipes.conan_env import REPO, require

EXAMPLE = REPO / "examples" / "engine-cmake"
# The engine's own builds: none is in make check.
pytestmark = pytest.mark.e2e
ENGINE = "ecm"
OPS = ("sumsq_s8", "clamp_f16")


@dataclass(frozen=True)
class Kernel:
    name: str
    op: str
    variant: str


def example_kernels(arch: str) -> list[Kernel]:
    """The example's kernels of one arch (reference included), from its tree."""
    cat = load()
    arch_dir = cat.arch(arch).kernel_dir
    out = []
    for path in sorted((EXAMPLE / "kernels").glob("*/*/*.c")) + sorted((EXAMPLE / "kernels").glob("reference/*.c")):
        if path.parent.parent.name == arch_dir or path.parent.name == "reference":
            variant = path.stem.rsplit("_", 1)[1]
            out.append(Kernel(path.stem, next(op for op in OPS if path.stem.startswith(op)), variant))
    return out


# ctest runs test_engine twice: as is, and with ECM_DISABLE=fp16,dotprod (CMakeLists.txt).
CTEST = {"1": frozenset(), "2": frozenset({"fp16", "dotprod"})}


def active(arch: str, cpu: str, caps: frozenset[str]) -> set[str]:
    """The features of `cpu` left by the caps (a capped feature takes whatever cannot exist without it along)."""
    cat = load()
    return {f for f in cat.cpu_features(arch, cpu) if not cat.implied_closure(arch, f) & caps}


def runnable(arch: str, features: set[str], kernel: Kernel) -> bool:
    return kernel.variant == "ref" or load().variant_features(arch, kernel.variant) <= features


def expected_choice(arch: str, features: set[str]) -> dict[str, str]:
    """Per op, the kernel of the most advanced variant runnable (one kernel per op and variant here)."""
    cat = load()
    out = {}
    for op in OPS:
        mine = [k for k in example_kernels(arch) if k.op == op and runnable(arch, features, k)]
        out[op] = max(mine, key=lambda k: cat.variant(k.variant).rank).name
    return out


def assert_engine_tests_ran(output: str, arch: str, cpu: str) -> None:
    """Both ctest runs of test_engine passed, every kernel checked or refused as the catalogue says `cpu` (and the
    cap) allows, and dispatch chose the most advanced one."""
    assert re.search(r"100% tests passed, 0 tests failed out of 2\b", output), output[-4000:]
    kernels = example_kernels(arch)
    assert {k.variant for k in kernels} >= {"ref", "neon", "dotprod", "i8mm", "fp16"}
    for number, caps in CTEST.items():
        lines = "\n".join(line for line in output.splitlines() if line.startswith(f"{number}: ecm test"))
        assert f"{number}: ecm test: ok" in lines, output[-4000:]
        features = active(arch, cpu, caps)
        for k in kernels:
            verdict = "ok" if runnable(arch, features, k) else "refused"
            assert re.search(rf"ecm test: {k.op} {k.name}: {verdict}\b", lines), f"{k.name} not {verdict} ({caps})"
        for op, name in expected_choice(arch, features).items():
            chose = rf"ecm test: {op}: \d+ kernel\(s\) checked, dispatch chooses {name}$"
            assert re.search(chose, lines, re.MULTILINE), (op, name, caps)
        for cap in caps:
            assert f"ecm test: ECM_DISABLE=fp16,dotprod: {cap} is not active" in lines


def checkout_state() -> str:
    """What git sees (ignored files too) under the folders `conan create` reads."""
    proc = subprocess.run(
        ["git", "status", "--porcelain", "--ignored", "--", "examples/engine-cmake", "recipes"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout


# -- Conan: the engine's own `conan create` ----------------------------------------------------------------------
# One leg in the default slice: the recipe is the same on both arches, and tests/commands/test_test_qemu.py builds
# and proves this engine on cortex-a53/a7 and max through CMake (both arches and compilers; all four toolchains in
# make ci); the other legs are slow. It is armv8-clang's, whose isaforge package is the session's one
# (conan_env.cli_create, which tests/commands/test_conan.py checks; the same worker, conan_env.GROUP):
# --build=missing finds it, so only the engine is built here.
CREATE = [
    pytest.param("aarch64-linux-gnu-gcc", "cortex-a53", id="armv8-gcc@cortex-a53", marks=pytest.mark.slow),
    pytest.param("arm-linux-gnueabihf-clang", "max", id="armv7hf-clang@max", marks=pytest.mark.slow),
    pytest.param("aarch64-linux-gnu-clang", "max", id="armv8-clang@max"),
    pytest.param("arm-linux-gnueabihf-gcc", "cortex-a7", id="armv7hf-gcc@cortex-a7", marks=pytest.mark.slow),
]


@conan_env.GROUP
@pytest.mark.parametrize(("name", "cpu"), CREATE)
def test_conan_create_builds_the_engine_and_runs_its_tests_under_qemu(name, cpu):
    tc = require(name)
    conan = conan_env.with_package(tc)
    before = checkout_state()
    proc = conan.run(
        "create",
        str(EXAMPLE),
        *conan_env.cross_args(tc),
        "-c",
        f"user.isaforge:qemu_cpu={cpu}",
        "--format=json",
        cwd=REPO,
    )
    out = proc.stderr
    assert proc.returncode == 0, out[-6000:]
    # the generator of the tool_requires package (not the host package's copy) made the kernel libraries
    configure = re.search(r"isaforge_add_kernel_library\(ecm\): (.*) \(.*generator (\S+)\)", out)
    assert configure, out[-6000:]
    libs, generator = configure.group(1).split(";"), Path(configure.group(2))
    arch = tc.arch.name
    assert libs == [f"ecm_{arch}_{v}" for v in ("neon", "fp16", "dotprod", "i8mm")] + ["ecm_reference"]
    assert generator.name == "enginegen.py" and generator.is_file()
    assert not (generator.parents[4] / "lib").exists(), generator  # the tool package: scripts, no library
    # …with the files the host package's Meson install put in the same place
    nodes = json.loads(proc.stdout)["graph"]["nodes"].values()
    folders = {n["context"]: Path(n["package_folder"]) for n in nodes if n["ref"].startswith(conan_env.REF)}
    assert folders["build"] == generator.parents[4]
    host_generator = folders["host"] / "share" / "isaforge" / "python" / "isaforge"
    assert sorted(p.name for p in generator.parent.iterdir()) == sorted(p.name for p in host_generator.iterdir())
    # the host package's pkg-config variables for Meson consumers: the baseline as words (Meson escapes the spaces)
    pc = json.loads((folders["host"] / "res" / "isaforge" / "pkgconfig.json").read_text())
    assert pc["isaforge_baseline"].split()[0] == load().arch(arch).baseline[0] and "\\" not in pc["isaforge_baseline"]
    assert pc["isaforge_enginegen"] == "${prefix}/share/isaforge/python/isaforge/enginegen.py"
    # ctest ran the engine's test under the profile arch's QEMU (from the tool_requires' conf), on the model
    assert f"ecm tests under {tc.arch.qemu} -L {tc.arch.sysroot}, CPU model {cpu}" in out
    assert_engine_tests_ran(out, arch, cpu)
    # test_package linked the package and ran both ops under QEMU
    choice = expected_choice(arch, active(arch, cpu, frozenset()))
    assert f"ecm test_package: sumsq_s8 kernel = {choice['sumsq_s8']}, clamp_f16 kernel = {choice['clamp_f16']}" in out
    assert "ecm test_package: ok" in out
    assert checkout_state() == before
    print(f"{name} on {cpu}: {choice}")


# -- plain CMake against a moved `meson install` -------------------------------------------------------------------
TOOLCHAIN = "aarch64-linux-gnu-gcc"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QEMU_", "ISAFORGE_", "ECM_"))}
    env["PATH"] = conan_env.tool_path()
    return env


def _run(cmd: list[str], cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env={**_env(), **env}, capture_output=True, text=True, check=False, timeout=900)


@pytest.fixture(scope="module")
def installed_prefix(tmp_path_factory) -> Path:
    """libisaforge for aarch64 with gcc, installed by Meson and then moved: the CMake files must find it anyway. The
    install is the session's shared one (builds.ensure_installed, which test-qemu uses too), copied: moving it would
    take it from the other tests."""
    require(TOOLCHAIN)
    for tool in ("cmake", "meson", "ninja"):
        if shutil.which(tool, path=conan_env.tool_path()) is None:
            pytest.skip(f"{tool} not found")
    first = builds.ensure_installed(builds.build_for(*TOOLCHAIN.rsplit("-", 1)))
    moved = tmp_path_factory.mktemp("isaforge-install") / "moved" / "prefix"
    shutil.copytree(first, moved, symlinks=True)
    assert str(first) in (moved / "lib" / "pkgconfig" / "isaforge.pc").read_text()  # it names where it was installed
    return moved


def _toolchain_file(tc: Toolchain, path: Path) -> Path:
    compiler, *rest = tc.c
    lines = [
        "set(CMAKE_SYSTEM_NAME Linux)",
        f"set(CMAKE_SYSTEM_PROCESSOR {tc.arch.name})",
        f"set(CMAKE_C_COMPILER {compiler})",
        f'set(CMAKE_AR {tc.ar} CACHE FILEPATH "")',
        f"set(CMAKE_CROSSCOMPILING_EMULATOR {' '.join(tc.exe_wrapper)})",
    ]
    for flag in rest:
        if flag.startswith("--target="):
            lines.append(f"set(CMAKE_C_COMPILER_TARGET {flag.removeprefix('--target=')})")
    path.write_text("\n".join(lines) + "\n")
    return path


def _configure(source: Path, build: Path, prefix: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    tc = require(TOOLCHAIN)
    return _run(
        [
            "cmake",
            "-S",
            str(source),
            "-B",
            str(build),
            "-G",
            "Ninja",
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DCMAKE_TOOLCHAIN_FILE={_toolchain_file(tc, build.parent / 'toolchain.cmake')}",
            f"-DCMAKE_PREFIX_PATH={prefix}",
            *extra,
        ]
    )


def test_plain_cmake_against_a_moved_meson_install(installed_prefix, tmp_path):
    tc = require(TOOLCHAIN)
    source = conan_env.copy_tree(EXAMPLE, tmp_path / "engine-cmake")
    build = tmp_path / "build"
    configured = _configure(source, build, installed_prefix)
    assert configured.returncode == 0, configured.stdout[-4000:] + configured.stderr
    # the installed generator, found from the config's own (moved) location
    assert f"generator {installed_prefix}/share/isaforge/python/isaforge/enginegen.py" in configured.stdout
    built = _run(["cmake", "--build", str(build), "-j", "2"])
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr
    for cpu in ("cortex-a53", "max"):
        ran = _run(["ctest", "--test-dir", str(build), "--no-tests=error", "--output-on-failure", "-V"], QEMU_CPU=cpu)
        assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr
        assert f"{tc.arch.qemu}" in ran.stdout
        assert_engine_tests_ran(ran.stdout, tc.arch.name, cpu)
    # the dispatch, reference and the engine's own code at the baseline, each kernel at its variant's flags only
    isolation = _run([str(Path(sys.executable).parent / "isaforge"), "check-isolation", str(build)])
    assert isolation.returncode == 0, isolation.stdout + isolation.stderr
    assert "no violations" in isolation.stdout
    manifest = build / "ecm-isaforge" / "isaforge-kernels-ecm.json"
    assert manifest.is_file()
    # public header installed with the library
    installed = _run(["cmake", "--install", str(build), "--prefix", str(tmp_path / "ecm-prefix")])
    assert installed.returncode == 0, installed.stderr
    assert {p.name for p in (tmp_path / "ecm-prefix" / "include").iterdir()} == {"ecm.h", "ecm_dispatch.h"}
    assert (tmp_path / "ecm-prefix" / "lib" / "libecm.a").is_file()

    # an edited catalogue or a kernel file removed reconfigures: the i8mm library goes with its only kernel
    (source / "kernels" / "aarch64" / "i8mm" / "sumsq_s8_2x8_i8mm.c").unlink()
    (source / "kernels" / "aarch64" / "i8mm").rmdir()
    rebuilt = _run(["cmake", "--build", str(build), "-j", "2"])
    assert rebuilt.returncode == 0, rebuilt.stdout[-4000:] + rebuilt.stderr
    assert "Re-running CMake" in rebuilt.stdout
    assert "isaforge_add_kernel_library(ecm): ecm_aarch64_neon;ecm_aarch64_fp16;ecm_aarch64_dotprod;ecm_reference" in (
        rebuilt.stdout
    )
    assert "sumsq_s8_2x8_i8mm" not in manifest.read_text()


def test_configure_refusals_are_one_line(installed_prefix, tmp_path):
    source = conan_env.copy_tree(EXAMPLE, tmp_path / "engine-cmake")
    # an op without its reference kernel: the generator's message, and nothing generated
    (source / "kernels" / "reference" / "clamp_f16_1x1_ref.c").unlink()
    proc = _configure(source, tmp_path / "b1", installed_prefix)
    assert proc.returncode != 0
    assert re.search(r"enginegen: \S*engine\.toml: op clamp_f16 has no reference kernel; add ", proc.stderr), (
        proc.stderr
    )
    assert not (tmp_path / "b1" / "ecm-isaforge" / "ecm_dispatch.c").exists()
    # a generator that is not there
    proc = _configure(EXAMPLE, tmp_path / "b2", installed_prefix, f"-DISAFORGE_ENGINEGEN={tmp_path}/nowhere.py")
    assert proc.returncode != 0
    assert f"the generator '{tmp_path}/nowhere.py' does not exist; set ISAFORGE_ENGINEGEN" in proc.stderr
    assert not (EXAMPLE / "build").exists()
    # a .S kernel in a project that did not enable ASM: the fix, naming the project
    source = _with_assembly_kernel(tmp_path / "asm", "C")
    proc = _configure(source, tmp_path / "b3", installed_prefix)
    assert proc.returncode != 0
    said = r"isaforge_add_kernel_library\(ecm\): \S*/sumsq_s8_1x16_neon\.S is assembly and the ASM language is not "
    assert re.search(said + r"enabled; add it to the project: project\(ecm LANGUAGES C ASM\)\n", proc.stderr), (
        proc.stderr
    )


# -- .S kernels: CMake's ASM language, with the variant's flags and the toolchain's target ---------------------------

# The example's aarch64 neon sumsq_s8 kernel, the same steps as its C twin, in preprocessed assembly: the macro and
# the comments only survive a compile that runs the C preprocessor (ASM), and the NEON instructions only one with the
# variant's flags for the right target.
SUMSQ_NEON_S = """\
/* int64_t ecm_sumsq_s8_1x16_neon(const int8_t *x, size_t n): x0 = x, x1 = n */
#define KERNEL ecm_sumsq_s8_1x16_neon
    .text
    .globl KERNEL
    .type KERNEL, %function
    .p2align 4
KERNEL:
    movi    v0.2d, #0                   /* int64 lanes: the total */
    mov     x2, xzr                     /* the tail's sum */
1:  cmp     x1, #16
    b.lo    2f
    ld1     {v1.16b}, [x0], #16
    smull   v2.8h, v1.8b, v1.8b         /* squares, at most 16384: int16 */
    smull2  v3.8h, v1.16b, v1.16b
    saddlp  v4.4s, v2.8h                /* at most 65536 per int32 lane */
    sadalp  v4.4s, v3.8h
    sadalp  v0.2d, v4.4s
    sub     x1, x1, #16
    b       1b
2:  cbz     x1, 3f
    ldrsb   w3, [x0], #1
    smaddl  x2, w3, w3, x2
    sub     x1, x1, #1
    b       2b
3:  addp    d0, v0.2d
    fmov    x3, d0
    add     x0, x2, x3
    ret
    .size KERNEL, .-KERNEL
    .section .note.GNU-stack, "", %progbits
"""


def _with_assembly_kernel(tmp_path: Path, languages: str) -> Path:
    """The example with its aarch64 neon sumsq_s8 kernel in assembly instead of C, and `project(... LANGUAGES …)`."""
    source = conan_env.copy_tree(EXAMPLE, tmp_path / "engine-cmake")
    neon = source / "kernels" / "aarch64" / "neon"
    (neon / "sumsq_s8_1x16_neon.c").unlink()
    (neon / "sumsq_s8_1x16_neon.S").write_text(SUMSQ_NEON_S)
    lists = source / "CMakeLists.txt"
    lists.write_text(lists.read_text().replace("LANGUAGES C)", f"LANGUAGES {languages})", 1))
    return source


@pytest.mark.parametrize("name", ["aarch64-linux-gnu-gcc", "aarch64-linux-gnu-clang"])
def test_assembly_kernel_built_as_asm_and_run(installed_prefix, tmp_path, name):
    """A .S kernel through isaforge_add_kernel_library with isaforge's own CMake toolchain file (toolchains/cmake/),
    compiled as ASM with its variant's flags and the target, chosen by dispatch and checked by the engine's tests
    under QEMU. libisaforge is the gcc install for both compilers: a C library, the same ABI."""
    tc = require(name)
    source = _with_assembly_kernel(tmp_path, "C ASM")
    build = tmp_path / "build"
    configured = _run(["cmake", "-S", str(source), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                       f"-DCMAKE_TOOLCHAIN_FILE={REPO / tc.cmake_toolchain}", f"-DCMAKE_PREFIX_PATH={installed_prefix}",
                       f"-DCMAKE_FIND_ROOT_PATH={installed_prefix}"])  # fmt: skip
    assert configured.returncode == 0, configured.stdout[-4000:] + configured.stderr
    built = _run(["cmake", "--build", str(build), "-j", "2"])
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr
    commands = json.loads((build / "compile_commands.json").read_text())
    (asm,) = [c["command"] for c in commands if c["file"].endswith("sumsq_s8_1x16_neon.S")]
    variant_flags = " ".join(load().variant_flags("aarch64", tc.compiler.name, "neon"))
    assert "-x c " not in asm and variant_flags in asm and "-DISAFORGE_VARIANT=neon" in asm, asm
    assert f"-I{build / 'ecm-isaforge'}" in asm, asm
    if tc.compiler.name == "clang":  # CMake spells CMAKE_ASM_COMPILER_TARGET `-target <triple>`
        assert f"-target {tc.triple}" in asm or f"--target={tc.triple}" in asm, asm
    trace = tmp_path / "trace.txt"
    ran = _run(["ctest", "--test-dir", str(build), "--no-tests=error", "--output-on-failure", "-V"],
               QEMU_CPU="cortex-a53", ISAFORGE_TRACE=str(trace))  # fmt: skip
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr
    # A53 has NEON only: the assembly kernel is dispatch's choice, and the tests checked it against the reference
    assert_engine_tests_ran(ran.stdout, "aarch64", "cortex-a53")
    assert "ran ecm sumsq_s8_1x16_neon" in trace.read_text().splitlines()
