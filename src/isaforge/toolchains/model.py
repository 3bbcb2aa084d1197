"""The toolchain model: one compiler targeting one arch, with everything a cross build and a QEMU test run need, and
where the files generated for it live in the checkout. Everything is derived from isa.toml.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from isaforge.catalogue import Arch, Catalogue, Compiler, load

CROSS_DIR = PurePosixPath("toolchains/meson")
CONAN_DIR = PurePosixPath("toolchains/conan")
CMAKE_DIR = PurePosixPath("toolchains/cmake")


@dataclass(frozen=True)
class Toolchain:
    """One compiler targeting one arch, with everything a cross build and a QEMU test run need."""

    arch: Arch
    compiler: Compiler

    @property
    def triple(self) -> str:
        return self.arch.triple

    @property
    def name(self) -> str:
        return f"{self.arch.triple}-{self.compiler.name}"

    @property
    def c(self) -> list[str]:
        return self.compiler.command(self.arch)

    @property
    def ar(self) -> str:
        return self.compiler.tool(self.compiler.ar, self.arch)

    @property
    def strip(self) -> str:
        return self.compiler.tool(self.compiler.strip, self.arch)

    @property
    def linker(self) -> str | None:
        return self.compiler.tool(self.compiler.linker, self.arch) if self.compiler.linker else None

    @property
    def exe_wrapper(self) -> list[str]:
        """QEMU user mode with the arch's sysroot; the CPU model comes from QEMU_CPU at test time."""
        return [self.arch.qemu, "-L", self.arch.sysroot]

    @property
    def cross_file(self) -> PurePosixPath:
        """The repo-relative path of this toolchain's Meson cross file."""
        return CROSS_DIR / f"{self.name}.ini"

    @property
    def cmake_toolchain(self) -> PurePosixPath:
        """The repo-relative path of this toolchain's CMake toolchain file."""
        return CMAKE_DIR / f"{self.name}.cmake"

    @property
    def conan_profile(self) -> PurePosixPath:
        """The repo-relative path of this toolchain's Conan host profile."""
        return CONAN_DIR / self.name

    @property
    def conan_machine_file(self) -> PurePosixPath:
        """The repo-relative path of the Meson machine file the Conan profile adds (its QEMU exe_wrapper)."""
        return qemu_machine_file(self.arch)


def toolchains(cat: Catalogue | None = None) -> list[Toolchain]:
    """Every arch x compiler of the catalogue, arches then compilers in catalogue order."""
    cat = cat or load()
    return [Toolchain(arch, compiler) for arch in cat.arches.values() for compiler in cat.compilers.values()]


def toolchain(target: str, compiler: str, cat: Catalogue | None = None) -> Toolchain:
    """The toolchain of a target (triple or catalogue arch name) and a compiler name; CatalogueError if unknown."""
    cat = cat or load()
    return Toolchain(cat.arch_by_triple(target), cat.compiler(compiler))


def qemu_machine_file(arch: Arch) -> PurePosixPath:
    """The repo-relative path of the Meson machine file with the QEMU exe_wrapper of `arch`, for Conan."""
    return CONAN_DIR / f"{arch.triple}-qemu.ini"


def cxx_command(tc: Toolchain) -> list[str]:
    """The C++ driver next to the catalogue's C compiler (`<triple>-gcc` -> `<triple>-g++`, `clang-19` ->
    `clang++-19`), for engines written in C++ that use the Conan profiles."""
    c, *rest = tc.c
    cxx = re.sub(r"gcc$", "g++", c) if c.endswith("gcc") else re.sub(r"^clang(?=-|$)", "clang++", c)
    return [cxx, *rest]
