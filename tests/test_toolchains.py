"""isaforge.toolchains: the toolchain list, probing, and the Meson cross files (checked in, and used for real)."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from isaforge import toolchains
from isaforge.catalogue import CatalogueError, load

REPO = Path(toolchains.__file__).resolve().parents[2]
ALL = toolchains.toolchains()
IDS = [tc.name for tc in ALL]


def test_one_toolchain_per_arch_and_compiler():
    cat = load()
    assert len(ALL) == len(cat.arches) * len(cat.compilers) == 4
    assert {(tc.arch.name, tc.compiler.name) for tc in ALL} == {(a, c) for a in cat.arches for c in cat.compilers}
    assert len(set(IDS)) == len(IDS)


def test_cross_file_path():
    expected = PurePosixPath("toolchains/meson/aarch64-linux-gnu-gcc.ini")
    assert toolchains.toolchain("aarch64-linux-gnu", "gcc").cross_file == expected
    assert toolchains.toolchain("aarch64", "gcc").cross_file == expected  # the catalogue arch name works too
    assert toolchains.toolchain("arm-linux-gnueabihf", "clang").cross_file == PurePosixPath(
        "toolchains/meson/arm-linux-gnueabihf-clang.ini"
    )


@pytest.mark.parametrize(
    ("target", "compiler", "word"), [("riscv64-linux-gnu", "gcc", "target"), ("arm", "icc", "compiler")]
)
def test_unknown_target_or_compiler_is_one_line(target, compiler, word):
    with pytest.raises(CatalogueError) as err:
        toolchains.toolchain(target, compiler)
    message = str(err.value)
    assert "\n" not in message
    assert f"unknown {word}" in message
    assert "choose one of" in message


def test_repo_root_is_this_checkout():
    assert toolchains.repo_root() == REPO
    assert (REPO / "src" / "isaforge" / "isa.toml").is_file()


@pytest.mark.parametrize("tc", ALL, ids=IDS)
def test_checked_in_cross_file_is_up_to_date(tc):
    path = REPO / tc.cross_file
    assert path.is_file(), f"{tc.cross_file} missing: run `isaforge toolchain write`"
    assert path.read_text() == toolchains.render_cross_file(tc), (
        f"{tc.cross_file} is out of date: run `isaforge toolchain write`"
    )


def test_no_stale_cross_files():
    assert toolchains.stale_cross_files(REPO) == []
    assert sorted(p.name for p in (REPO / toolchains.CROSS_DIR).glob("*.ini")) == sorted(f"{n}.ini" for n in IDS)


@pytest.mark.parametrize("tc", ALL, ids=IDS)
def test_render_cross_file(tc):
    text = toolchains.render_cross_file(tc)
    assert text == toolchains.render_cross_file(tc)
    assert text.startswith(toolchains.CROSS_HEADER + "\n")
    assert text.endswith("\n") and not text.endswith("\n\n")
    lines = text.splitlines()
    c_line = "c = [" + ", ".join(f"'{part}'" for part in tc.compiler.command(tc.arch)) + "]"
    assert c_line in lines
    assert f"exe_wrapper = ['{tc.arch.qemu}', '-L', '{tc.arch.sysroot}']" in lines
    assert "-cpu" not in text  # the CPU model comes from QEMU_CPU at test time
    assert "pkg-config = 'pkg-config'" in lines
    assert f"isaforge_arch = '{tc.arch.name}'" in lines
    assert f"isaforge_triple = '{tc.triple}'" in lines
    assert f"cpu_family = '{tc.arch.meson_cpu_family}'" in lines
    assert f"cpu = '{tc.arch.meson_cpu}'" in lines
    assert "endian = 'little'" in lines
    assert "system = 'linux'" in lines
    if tc.compiler.name == "clang":
        assert "c_link_args = ['-fuse-ld=lld']" in lines
        assert "ar = 'llvm-ar-19'" in lines
    else:
        assert "[built-in options]" not in lines
        assert f"ar = '{tc.triple}-gcc-ar'" in lines


# -- CMake toolchain files (toolchains/cmake/) ---------------------------------------------------------------------


@pytest.mark.parametrize("tc", ALL, ids=IDS)
def test_checked_in_cmake_toolchain_is_up_to_date(tc):
    path = REPO / tc.cmake_toolchain
    assert path.is_file(), f"{tc.cmake_toolchain} missing: run `isaforge toolchain write`"
    assert path.read_text() == toolchains.render_cmake_toolchain(tc), (
        f"{tc.cmake_toolchain} is out of date: run `isaforge toolchain write`"
    )


def test_no_stale_cmake_toolchains(tmp_path):
    assert toolchains.stale_cmake_files(REPO) == []
    assert sorted(p.name for p in (REPO / toolchains.CMAKE_DIR).iterdir()) == sorted(f"{n}.cmake" for n in IDS)
    folder = tmp_path / toolchains.CMAKE_DIR
    folder.mkdir(parents=True)
    (folder / "riscv64-linux-gnu-gcc.cmake").write_text(toolchains.CROSS_HEADER + "\nset(CMAKE_SYSTEM_NAME Linux)\n")
    (folder / "mine.cmake").write_text("set(CMAKE_SYSTEM_NAME Linux)\n")  # not generated: left alone
    assert toolchains.stale_cmake_files(tmp_path) == [toolchains.CMAKE_DIR / "riscv64-linux-gnu-gcc.cmake"]


@pytest.mark.parametrize("tc", ALL, ids=IDS)
def test_render_cmake_toolchain(tc):
    text = toolchains.render_cmake_toolchain(tc)
    assert text.startswith(toolchains.CROSS_HEADER + "\n") and text.endswith(")\n")
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


# -- Conan host profiles (toolchains/conan/) -----------------------------------------------------------------------

CONAN_FILES = toolchains.conan_files()


@pytest.mark.parametrize("rel", list(CONAN_FILES), ids=[p.name for p in CONAN_FILES])
def test_checked_in_conan_file_is_up_to_date(rel):
    path = REPO / rel
    assert path.is_file(), f"{rel} missing: run `isaforge toolchain write`"
    assert path.read_text() == CONAN_FILES[rel], f"{rel} is out of date: run `isaforge toolchain write`"


def test_no_stale_conan_files():
    assert toolchains.stale_conan_files(REPO) == []
    assert sorted(p.name for p in (REPO / toolchains.CONAN_DIR).iterdir()) == sorted(p.name for p in CONAN_FILES)
    assert len(CONAN_FILES) == len(ALL) + len(load().arches)  # a profile per toolchain, a machine file per arch


def test_stale_conan_file_is_reported(tmp_path):
    folder = tmp_path / toolchains.CONAN_DIR
    folder.mkdir(parents=True)
    (folder / "riscv64-linux-gnu-gcc").write_text(toolchains.CROSS_HEADER + "\n[settings]\n")
    (folder / "my-own-profile").write_text("[settings]\nos=Linux\n")  # not generated: left alone
    assert toolchains.stale_conan_files(tmp_path) == [toolchains.CONAN_DIR / "riscv64-linux-gnu-gcc"]


def _sections(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith("["):
            current = line.strip("[]")
            out[current] = []
        else:
            out[current].append(line)
    return out


@pytest.mark.parametrize("tc", ALL, ids=IDS)
def test_render_conan_profile(tc):
    text = toolchains.render_conan_profile(tc)
    assert text == toolchains.render_conan_profile(tc)
    assert text.startswith(toolchains.CROSS_HEADER + "\n")
    assert text.endswith("\n") and not text.endswith("\n\n")
    sections = _sections(text)
    assert list(sections) == ["settings", "buildenv", "conf"]
    settings = dict(line.split("=", 1) for line in sections["settings"])
    assert settings["os"] == "Linux"
    assert settings["arch"] == {"aarch64": "armv8", "arm": "armv7hf"}[tc.arch.name]
    assert settings["compiler"] == tc.compiler.name
    assert settings["compiler.version"] == {"gcc": "12", "clang": "19"}[tc.compiler.name]
    assert settings["build_type"] == "Release"
    env = dict(line.split("=", 1) for line in sections["buildenv"])
    assert env["CC"] == " ".join(tc.c)
    assert env["AR"] == tc.ar and env["STRIP"] == tc.strip
    conf = dict(line.split("=", 1) for line in sections["conf"])
    assert json.loads(conf["tools.build:compiler_executables"])["c"] == tc.c[0]
    assert conf["tools.gnu:pkg_config"] == "pkg-config"
    machine_file = tc.conan_machine_file.name
    assert json.loads(conf["tools.meson.mesontoolchain:extra_machine_files"]) == ["{{ profile_dir }}/" + machine_file]
    assert conf["user.isaforge:qemu_cpu"] == "max"
    assert "can_run" not in text  # cross builds run their programs through the exe_wrapper, never natively
    if tc.compiler.name == "clang":
        target = f"--target={tc.triple}"
        assert json.loads(conf["tools.build:cflags"]) == [target]
        assert json.loads(conf["tools.build:exelinkflags"]) == [target, "-fuse-ld=lld"]
        assert json.loads(conf["tools.build:sharedlinkflags"]) == [target, "-fuse-ld=lld"]
        assert env["CXX"] == f"clang++-19 {target}"
    else:
        assert "tools.build:cflags" not in conf and "tools.build:exelinkflags" not in conf
        assert env["CXX"] == f"{tc.triple}-g++"


@pytest.mark.parametrize("tc", ALL, ids=IDS)
def test_render_conan_profile_with_the_machine_file_by_absolute_path(tc, tmp_path):
    text = toolchains.render_conan_profile(tc, tmp_path / "x" / "..")
    conf = dict(line.split("=", 1) for line in _sections(text)["conf"])
    included = json.loads(conf["tools.meson.mesontoolchain:extra_machine_files"])
    assert included == [str(tmp_path.resolve() / f"{tc.triple}-qemu.ini")]
    assert "profile_dir" not in text
    assert f"({included[0]})" in text  # the comment names it too


@pytest.mark.parametrize("arch", list(load().arches))
def test_render_qemu_machine_file(arch):
    spec = load().arch(arch)
    text = toolchains.render_qemu_machine_file(spec)
    assert text.startswith(toolchains.CROSS_HEADER + "\n")
    assert _sections(text) == {"binaries": [f"exe_wrapper = ['{spec.qemu}', '-L', '{spec.sysroot}']"]}
    assert "-cpu" not in text  # the CPU model comes from QEMU_CPU


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("qemu-aarch64 version 10.0.2 (Debian 1:10.0.2+ds-2+deb13u1~bpo12+1)\nCopyright (c) 2003-2025", (10, 0, 2)),
        ("qemu-arm version 7.2.0 (Debian 1:7.2+dfsg-7)", (7, 2, 0)),
        ("qemu-arm version 9.1", (9, 1, 0)),
        ("no version here", None),
    ],
)
def test_parse_qemu_version(text, version):
    assert toolchains.parse_qemu_version(text) == version


# -- probing ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tc", ALL, ids=IDS)
def test_probe_usable_here(tc):
    result = toolchains.probe(tc)
    assert result.usable, f"{tc.name}: {'; '.join(result.reasons)}"
    assert result.status == "usable"


@pytest.mark.parametrize("tc", ALL, ids=IDS)
def test_probe_with_nothing_on_path(tc, tmp_path):
    result = toolchains.probe(tc, path=str(tmp_path))
    assert not result.usable
    assert result.status == "unusable"
    text = "\n".join(result.reasons)
    assert f"{tc.compiler.command(tc.arch)[0]} not found" in text
    packages = tc.compiler.debian_packages or tc.arch.debian_packages
    assert f"apt-get install {' '.join(packages)}" in text
    assert "ci/install-toolchains.sh" in text
    assert f"{tc.arch.qemu} not found" in text


def _link_tools(folder: Path, names: list[str]) -> None:
    for name in names:
        found = shutil.which(name)
        assert found, name
        (folder / name).symlink_to(found)


def _tools(tc: toolchains.Toolchain) -> list[str]:
    return [tc.c[0], tc.ar, tc.strip, *([tc.linker] if tc.linker else []), tc.arch.qemu]


@pytest.mark.parametrize("tc", [tc for tc in ALL if tc.linker], ids=[tc.name for tc in ALL if tc.linker])
def test_probe_reports_missing_linker(tc, tmp_path):
    _link_tools(tmp_path, [t for t in _tools(tc) if t != tc.linker])
    result = toolchains.probe(tc, path=str(tmp_path))
    assert result.reasons == (
        f"{tc.linker} not found; apt-get install clang-19 lld-19 llvm-19 (or run ci/install-toolchains.sh)",
    )


@pytest.mark.parametrize("version", ["7.2.0", "9.2.4"])
def test_probe_reports_old_qemu(tmp_path, version):
    tc = toolchains.toolchain("aarch64-linux-gnu", "gcc")
    _link_tools(tmp_path, [t for t in _tools(tc) if t != tc.arch.qemu])
    fake = tmp_path / tc.arch.qemu
    fake.write_text(f"#!/bin/sh\necho 'qemu-aarch64 version {version} (Debian)'\n")
    fake.chmod(0o755)
    result = toolchains.probe(tc, path=str(tmp_path))
    assert len(result.reasons) == 1
    assert f"qemu-aarch64 is version {version}, older than 10" in result.reasons[0]


def test_probe_reports_unparseable_qemu(tmp_path):
    tc = toolchains.toolchain("arm-linux-gnueabihf", "gcc")
    _link_tools(tmp_path, [t for t in _tools(tc) if t != tc.arch.qemu])
    fake = tmp_path / tc.arch.qemu
    fake.write_text("#!/bin/sh\necho 'something else'\n")
    fake.chmod(0o755)
    (reason,) = toolchains.probe(tc, path=str(tmp_path)).reasons
    assert reason.startswith("`qemu-arm --version` reports no version")


def test_probe_reports_missing_sysroot(tmp_path):
    tc = toolchains.toolchain("aarch64-linux-gnu", "gcc")
    gone = tmp_path / "no-sysroot"
    moved = toolchains.Toolchain(dataclasses.replace(tc.arch, sysroot=str(gone)), tc.compiler)
    (reason,) = toolchains.probe(moved).reasons
    assert reason == (
        f"sysroot {gone} missing; apt-get install gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu "
        "libc6-dev-arm64-cross (or run ci/install-toolchains.sh)"
    )


# -- the cross files, used for real: meson setup, compile, link, and `meson test` under QEMU ----------------------

HELLO_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>

#if defined(ISF_EXPECT_AARCH64) && !defined(__aarch64__)
#error "not compiled for aarch64"
#endif
#if defined(ISF_EXPECT_ARM) && !(defined(__arm__) && defined(__ARM_PCS_VFP) && __ARM_ARCH >= 7)
#error "not compiled for armv7 hard-float"
#endif

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  unsigned long want1 = strtoul(argv[1], NULL, 0), want2 = strtoul(argv[2], NULL, 0);
  unsigned long have1 = getauxval(AT_HWCAP), have2 = getauxval(AT_HWCAP2);
  printf("hwcap=%#lx hwcap2=%#lx\n", have1, have2);
  if ((have1 & want1) != want1 || (have2 & want2) != want2) {
    printf("missing hwcap bits %#lx hwcap2 bits %#lx\n", want1 & ~have1, want2 & ~have2);
    return 1;
  }
  puts("isaforge cross test ok");
  return 0;
}
"""

MESON_BUILD = """\
project('t', 'c')
assert(meson.is_cross_build(), 'not a cross build')
assert(meson.get_external_property('isaforge_arch') == '{arch}')
assert(meson.get_external_property('isaforge_triple') == '{triple}')
assert(host_machine.cpu_family() == '{family}')
assert(meson.get_compiler('c').get_id() == '{compiler}')
exe = executable('hello', 'hello.c', c_args: ['-DISF_EXPECT_{macro}'])
test('hello', exe, args: ['{hwcap1:#x}', '{hwcap2:#x}'])
"""


def _max_cpu_hwcaps(arch: str) -> tuple[int, int]:
    """The AT_HWCAP / AT_HWCAP2 bits QEMU's `max` CPU must show, from the catalogue."""
    cat = load()
    words = {1: 0, 2: 0}
    for feat in cat.cpu_features(arch, "max"):
        for word, bit in cat.features[feat].per_arch[arch].hwcap:
            words[word] |= 1 << bit
    return words[1], words[2]


# The two tests below build and run a program per toolchain: they take the run's toolchains (--isaforge-toolchains,
# every toolchain by default) from the plugin's `cross_build`, so make check builds only its own.


def _meson() -> tuple[list[str], dict[str, str]]:
    # Meson and Ninja from the Python running the tests (a venv) first, then $PATH.
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    meson = shutil.which("meson", path=env["PATH"])
    if meson is None or shutil.which("ninja", path=env["PATH"]) is None:
        pytest.skip("meson and ninja are needed: pip install meson ninja")
    env["QEMU_CPU"] = "max"
    return [meson], env


def test_cross_file_builds_and_runs_under_qemu(cross_build, tmp_path):
    tc = cross_build.toolchain
    result = toolchains.probe(tc)
    if not result.usable:
        pytest.skip(f"{tc.name} unusable here: {'; '.join(result.reasons)}")
    meson, env = _meson()
    src = tmp_path / "src"
    src.mkdir()
    hwcap1, hwcap2 = _max_cpu_hwcaps(tc.arch.name)
    (src / "meson.build").write_text(
        MESON_BUILD.format(
            arch=tc.arch.name,
            triple=tc.triple,
            family=tc.arch.meson_cpu_family,
            compiler=tc.compiler.name,
            macro=tc.arch.name.upper(),
            hwcap1=hwcap1,
            hwcap2=hwcap2,
        )
    )
    (src / "hello.c").write_text(HELLO_C)
    build = tmp_path / "build"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([*meson, *args], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, f"meson {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
        return proc

    run("setup", "--cross-file", str(REPO / tc.cross_file), str(build), str(src))
    run("compile", "-C", str(build))
    proc = run("test", "-C", str(build), "--print-errorlogs", "--verbose")
    assert "isaforge cross test ok" in proc.stdout
    assert re.search(r"^Ok:\s+1\s*$", proc.stdout, re.MULTILINE), proc.stdout
    log = (build / "meson-logs" / "testlog.txt").read_text()
    assert tc.arch.qemu in log  # the test really went through the exe_wrapper
    if tc.compiler.link_args:
        # lld, not the GNU linker, made the executable
        comment = subprocess.run(
            ["llvm-readelf-19", "-p", ".comment", str(build / "hello")], capture_output=True, text=True, check=False
        )
        if comment.returncode == 0:
            assert re.search(r"Linker: .*LLD", comment.stdout), comment.stdout


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
    result = toolchains.probe(tc)
    if not result.usable:
        pytest.skip(f"{tc.name} unusable here: {'; '.join(result.reasons)}")
    if shutil.which("cmake") is None or shutil.which("ctest") is None:
        pytest.skip("cmake is needed: apt-get install cmake")
    _, env = _meson()  # ninja from the venv, QEMU_CPU=max
    src, prefix = tmp_path / "src", tmp_path / "prefix"
    (prefix / "lib" / "cmake" / "dep").mkdir(parents=True)
    (prefix / "lib" / "cmake" / "dep" / "depConfig.cmake").write_text("set(dep_FOUND TRUE)\n")
    src.mkdir()
    hwcap1, hwcap2 = _max_cpu_hwcaps(tc.arch.name)
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
