"""isaforge.toolchains.cmake_files: the CMake toolchain files, checked in, and used for real."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from isaforge.toolchains.cmake_files import render_cmake_toolchain, stale_cmake_files
from isaforge.toolchains.generated import CROSS_HEADER
from isaforge.toolchains.model import CMAKE_DIR
from isaforge.toolchains.probing import probe
from tests.toolchains.common import ALL, HELLO_C, IDS, REPO, max_cpu_hwcaps, meson_and_env


@pytest.mark.parametrize("tc", ALL, ids=IDS)
def test_checked_in_cmake_toolchain_is_up_to_date(tc):
    path = REPO / tc.cmake_toolchain
    assert path.is_file(), f"{tc.cmake_toolchain} missing: run `isaforge toolchain write`"
    assert path.read_text() == render_cmake_toolchain(tc), (
        f"{tc.cmake_toolchain} is out of date: run `isaforge toolchain write`"
    )


def test_no_stale_cmake_toolchains(tmp_path):
    assert stale_cmake_files(REPO) == []
    assert sorted(p.name for p in (REPO / CMAKE_DIR).iterdir()) == sorted(f"{n}.cmake" for n in IDS)
    folder = tmp_path / CMAKE_DIR
    folder.mkdir(parents=True)
    (folder / "riscv64-linux-gnu-gcc.cmake").write_text(CROSS_HEADER + "\nset(CMAKE_SYSTEM_NAME Linux)\n")
    (folder / "mine.cmake").write_text("set(CMAKE_SYSTEM_NAME Linux)\n")  # not generated: left alone
    assert stale_cmake_files(tmp_path) == [CMAKE_DIR / "riscv64-linux-gnu-gcc.cmake"]


@pytest.mark.parametrize("tc", ALL, ids=IDS)
def test_render_cmake_toolchain(tc):
    text = render_cmake_toolchain(tc)
    assert text.startswith(CROSS_HEADER + "\n") and text.endswith(")\n")
    lines = text.splitlines()
    assert "set(CMAKE_SYSTEM_NAME Linux)" in lines
    assert f"set(CMAKE_SYSTEM_PROCESSOR {tc.arch.meson_cpu_family})" in lines
    assert f'set(CMAKE_C_COMPILER "{tc.c[0]}")' in lines
    assert f'set(CMAKE_ASM_COMPILER "{tc.c[0]}")' in lines  # .S kernels: the same driver as C
    assert f'set(CMAKE_CROSSCOMPILING_EMULATOR "{tc.arch.qemu};-L;{tc.arch.sysroot}")' in lines
    assert f'  list(APPEND CMAKE_FIND_ROOT_PATH "{tc.arch.sysroot}")' in lines
    assert "-cpu" not in text  # the CPU model comes from QEMU_CPU at test time
    if tc.compiler.name == "clang":
        assert f"set(CMAKE_C_COMPILER_TARGET {tc.triple})" in lines
        assert f"set(CMAKE_ASM_COMPILER_TARGET {tc.triple})" in lines
        assert 'set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=lld")' in lines
    else:
        assert "COMPILER_TARGET" not in text and "LINKER_FLAGS" not in text
    assert f'set(CMAKE_AR "{tc.ar}" CACHE FILEPATH "archiver (isaforge catalogue)")' in lines


# -- used for real: cmake configure, build, and ctest under QEMU ---------------------------------------------------
CMAKE_LISTS = """\
cmake_minimum_required(VERSION 3.20)
project(t C)
find_package(dep CONFIG REQUIRED)  # installed outside the sysroot, as test-qemu installs libisaforge
if(NOT CMAKE_CROSSCOMPILING OR NOT CMAKE_C_COMPILER_ID STREQUAL "{cmake_id}")
  message(FATAL_ERROR "not a {cmake_id} cross build")
endif()
add_library(dep_lib STATIC dep.c)
add_executable(hello hello.c)
target_compile_definitions(hello PRIVATE ISF_EXPECT_{macro})
target_link_libraries(hello dep_lib)
enable_testing()
add_test(NAME hello COMMAND hello {hwcap1:#x} {hwcap2:#x})
"""


def test_cmake_toolchain_builds_and_runs_under_qemu(cross_build, tmp_path):
    tc = cross_build.toolchain
    result = probe(tc)
    if not result.usable:
        pytest.skip(f"{tc.name} unusable here: {'; '.join(result.reasons)}")
    if shutil.which("cmake") is None or shutil.which("ctest") is None:
        pytest.skip("cmake is needed: apt-get install cmake")
    _, env = meson_and_env()  # ninja from the venv, QEMU_CPU=max
    src, prefix = tmp_path / "src", tmp_path / "prefix"
    (prefix / "lib" / "cmake" / "dep").mkdir(parents=True)
    (prefix / "lib" / "cmake" / "dep" / "depConfig.cmake").write_text("set(dep_FOUND TRUE)\n")
    src.mkdir()
    hwcap1, hwcap2 = max_cpu_hwcaps(tc.arch.name)
    cmake_id = {"gcc": "GNU", "clang": "Clang"}[tc.compiler.name]
    (src / "CMakeLists.txt").write_text(
        CMAKE_LISTS.format(cmake_id=cmake_id, macro=tc.arch.name.upper(), hwcap1=hwcap1, hwcap2=hwcap2)
    )
    (src / "hello.c").write_text(HELLO_C)
    (src / "dep.c").write_text("int dep(void) { return 0; }\n")
    build = tmp_path / "build"

    def run(*cmd: str) -> str:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout

    run("cmake", "-S", str(src), "-B", str(build), "-G", "Ninja", f"-DCMAKE_TOOLCHAIN_FILE={REPO / tc.cmake_toolchain}",
        f"-DCMAKE_PREFIX_PATH={prefix}")  # fmt: skip
    verbose = run("cmake", "--build", str(build), "-v")
    assert tc.ar in verbose  # the catalogue's archiver made the static library
    if tc.compiler.link_args:
        assert " ".join(tc.compiler.link_args) in verbose
    out = run("ctest", "--test-dir", str(build), "--output-on-failure", "-V")
    assert "isaforge cross test ok" in out
    assert f"{tc.arch.qemu}" in out  # the test really went through the emulator
