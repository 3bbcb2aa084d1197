"""test_package: consume isaforge as an engine would (CMake, CMakeDeps + CMakeToolchain), build a small GEMM program
and run it: natively when this machine can, else under QEMU user mode with the exe_wrapper of the host profile's
extra Meson machine file (the same qemu and sysroot the library's own tests used), on the CPU model of the conf
`user.isaforge:qemu_cpu`. A cross build without a wrapper fails: a package nobody ran is not tested."""

from __future__ import annotations

import ast
import configparser
import os
import shutil
import tempfile

from conan import ConanFile
from conan.errors import ConanException
from conan.tools.build import can_run
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout

QEMU_CPU_CONF = "user.isaforge:qemu_cpu"
DEFAULT_QEMU_CPU = "max"


class IsaforgeTestConan(ConanFile):
    settings = "os", "arch", "compiler", "build_type"
    test_type = "explicit"

    def requirements(self) -> None:
        self.requires(self.tested_reference_str)

    def layout(self) -> None:
        # Built outside the source folder, so that `conan create recipes/isaforge` leaves the checkout as it was:
        # in tools.cmake.cmake_layout:test_folder when set, else in a temporary folder that test() removes.
        given = self.conf.get("tools.cmake.cmake_layout:test_folder")
        self._scratch = None if given else tempfile.mkdtemp(prefix="isaforge-test-package-")
        cmake_layout(self, build_folder=given or self._scratch)

    def generate(self) -> None:
        CMakeDeps(self).generate()
        tc = CMakeToolchain(self)
        tc.user_presets_path = False  # nothing written next to the sources
        tc.generate()

    def build(self) -> None:
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def _exe_wrapper(self) -> list[str]:
        files = self.conf.get("tools.meson.mesontoolchain:extra_machine_files", default=[], check_type=list)
        wrapper: list[str] = []
        for path in files:
            parser = configparser.ConfigParser(interpolation=None)
            parser.read(path)
            if parser.has_option("binaries", "exe_wrapper"):
                value = ast.literal_eval(parser.get("binaries", "exe_wrapper"))
                wrapper = [value] if isinstance(value, str) else list(value)
        if not wrapper:
            raise ConanException(
                f"isaforge test_package: cannot run arch={self.settings.arch} programs here and no exe_wrapper: set "
                "tools.meson.mesontoolchain:extra_machine_files to a Meson machine file with "
                "`exe_wrapper = ['qemu-<arch>', '-L', '<sysroot>']` (the isaforge profiles in toolchains/conan/ do)"
            )
        return wrapper

    def test(self) -> None:
        try:
            self._run_test_package()
        finally:
            # Set tools.cmake.cmake_layout:test_folder to keep the build.
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)

    def _run_test_package(self) -> None:
        program = os.path.join(self.cpp.build.bindir, "test_package")
        if can_run(self):
            self.run(program, env="conanrun")
            return
        cpu = str(self.conf.get(QEMU_CPU_CONF, default=DEFAULT_QEMU_CPU))
        command = [*self._exe_wrapper(), "-cpu", cpu, program]
        self.output.info(f"running under QEMU, CPU model {cpu} ({QEMU_CPU_CONF})")
        self.run(" ".join(f'"{part}"' for part in command), env="conanrun")
