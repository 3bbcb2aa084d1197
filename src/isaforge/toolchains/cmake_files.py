"""CMake toolchain files (toolchains/cmake/<triple>-<compiler>.cmake): the CMake twins of the Meson cross files,
deterministic, a function of the catalogue only."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from isaforge.catalogue import Catalogue
from isaforge.toolchains.generated import CROSS_HEADER, stale_files
from isaforge.toolchains.model import CMAKE_DIR, Toolchain, cxx_command, toolchains


def _cmake_quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _cmake_list(values: list[str] | tuple[str, ...]) -> str:
    return _cmake_quote(";".join(values))


def render_cmake_toolchain(tc: Toolchain) -> str:
    """The CMake toolchain file of `tc`: deterministic, a function of the catalogue only, the CMake twin of the Meson
    cross file (same compiler command, archiver, linker and QEMU wrapper)."""
    c, cxx = tc.c, cxx_command(tc)
    # clang's --target is CMake's CMAKE_<LANG>_COMPILER_TARGET (CMake adds it to every compile and link, try_compile
    # included); any other word of the catalogue's command goes into the initial flags.
    target = next((a.removeprefix("--target=") for a in c[1:] if a.startswith("--target=")), None)
    extra = [a for a in c[1:] if not a.startswith("--target=")]
    lines = [
        CROSS_HEADER,
        f"# CMake toolchain file: {tc.triple} with {tc.compiler.name}. Tests (ctest, add_test) run under",
        f"# {' '.join(tc.exe_wrapper)}; pick the emulated CPU model with the QEMU_CPU environment variable:",
        f"#   cmake -S . -B build -G Ninja -DCMAKE_TOOLCHAIN_FILE=toolchains/cmake/{tc.name}.cmake",
        "#   cmake --build build && QEMU_CPU=max ctest --test-dir build",
        "",
        "set(CMAKE_SYSTEM_NAME Linux)",
        f"set(CMAKE_SYSTEM_PROCESSOR {tc.arch.meson_cpu_family})",
        "",
        f"set(CMAKE_C_COMPILER {_cmake_quote(c[0])})",
        f"set(CMAKE_CXX_COMPILER {_cmake_quote(cxx[0])})",
        # Preprocessed assembly (.S) goes through the C compiler driver, with the same target and flags: else CMake's
        # ASM language would run the driver for the build machine's target (clang: "unknown target CPU").
        f"set(CMAKE_ASM_COMPILER {_cmake_quote(c[0])})",
    ]
    langs = ("C", "CXX", "ASM")
    if target:
        lines += [f"set(CMAKE_{lang}_COMPILER_TARGET {target})" for lang in langs]
    if extra:
        lines += [f"set(CMAKE_{lang}_FLAGS_INIT {_cmake_quote(' '.join(extra))})" for lang in langs]
    lines += [
        f"set(CMAKE_AR {_cmake_quote(tc.ar)} CACHE FILEPATH {_cmake_quote('archiver (isaforge catalogue)')})",
        f"set(CMAKE_STRIP {_cmake_quote(tc.strip)} CACHE FILEPATH {_cmake_quote('strip (isaforge catalogue)')})",
    ]
    if tc.compiler.link_args:
        link = _cmake_quote(" ".join(tc.compiler.link_args))
        lines += [f"set(CMAKE_{kind}_LINKER_FLAGS_INIT {link})" for kind in ("EXE", "SHARED", "MODULE")]
    lines += [
        "",
        "# Programs built for the target run under QEMU user mode: ctest, add_custom_command and try_run use it.",
        f"set(CMAKE_CROSSCOMPILING_EMULATOR {_cmake_list(tc.exe_wrapper)})",
        "",
        "# Libraries and headers for the target come from its sysroot (and the roots given with",
        "# -DCMAKE_FIND_ROOT_PATH=<prefix>, where a cross-built dependency such as an installed isaforge lives),",
        "# programs from this machine; config packages (find_package) also from CMAKE_PREFIX_PATH as given.",
        f"if(NOT {_cmake_quote(tc.arch.sysroot)} IN_LIST CMAKE_FIND_ROOT_PATH)",
        f"  list(APPEND CMAKE_FIND_ROOT_PATH {_cmake_quote(tc.arch.sysroot)})",
        "endif()",
        "set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)",
        "set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)",
        "set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)",
        "set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)",
    ]
    return "\n".join(lines) + "\n"


def cmake_files(cat: Catalogue | None = None) -> dict[PurePosixPath, str]:
    """Every CMake toolchain file: repo-relative path -> text."""
    return {tc.cmake_toolchain: render_cmake_toolchain(tc) for tc in toolchains(cat)}


def stale_cmake_files(root: Path, cat: Catalogue | None = None) -> list[PurePosixPath]:
    """Generated toolchain files under toolchains/cmake/ that the catalogue no longer makes (repo-relative)."""
    return stale_files(root, CMAKE_DIR, cmake_files(cat), "*.cmake")
