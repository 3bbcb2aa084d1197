"""test_package of ecm: link the package with CMake (CMakeDeps) and call both ops once, under QEMU for a cross
build (the command from the isaforge tool_requires' conf user.isaforge:exe_wrapper, the CPU model from
user.isaforge:qemu_cpu). Built in a temporary folder, so that `conan create` leaves the checkout as it was."""

from __future__ import annotations

import shutil
import tempfile

from conan import ConanFile
from conan.errors import ConanException
from conan.tools.build import can_run
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout

ISAFORGE = "isaforge/[>=0.1 <1]"


class EcmTestConan(ConanFile):
    settings = "os", "arch", "compiler", "build_type"
    test_type = "explicit"

    def requirements(self) -> None:
        self.requires(self.tested_reference_str)

    def build_requirements(self) -> None:
        self.tool_requires(ISAFORGE)  # only for its conf user.isaforge:exe_wrapper

    def layout(self) -> None:
        given = self.conf.get("tools.cmake.cmake_layout:test_folder")
        self._scratch = None if given else tempfile.mkdtemp(prefix="ecm-test-package-")
        cmake_layout(self, build_folder=given or self._scratch)

    def generate(self) -> None:
        CMakeDeps(self).generate()
        tc = CMakeToolchain(self)
        tc.user_presets_path = False
        tc.generate()

    def build(self) -> None:
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def test(self) -> None:
        try:
            self._run_test_package()
        finally:
            if self._scratch is not None:  # tools.cmake.cmake_layout:test_folder keeps the build
                shutil.rmtree(self._scratch, ignore_errors=True)

    def _run_test_package(self) -> None:
        program = f"{self.cpp.build.bindir}/test_package"
        if can_run(self):
            self.run(program, env="conanrun")
            return
        wrapper = self.conf.get("user.isaforge:exe_wrapper", default=[], check_type=list)
        if not wrapper:
            raise ConanException(f"ecm test_package: cannot run arch={self.settings.arch} programs, no exe_wrapper")
        cpu = str(self.conf.get("user.isaforge:qemu_cpu", default="max"))
        self.run(" ".join(f'"{part}"' for part in [*wrapper, "-cpu", cpu, program]), env="conanrun")
