"""ecm, an engine whose kernels isaforge builds and dispatches, as a Conan 2 package cross-built with isaforge's
profiles (README.md):

    conan create recipes/isaforge -pr:h toolchains/conan/aarch64-linux-gnu-gcc -pr:b default
    conan create examples/engine-cmake -pr:h toolchains/conan/aarch64-linux-gnu-gcc -pr:b default --build=missing \\
        -c user.isaforge:qemu_cpu=cortex-a53

isaforge is both a `requires` (libisaforge, its headers, and the CMake build modules that give
isaforge_add_kernel_library) and a `tool_requires` (the generator, ISAFORGE_ENGINEGEN, and for a cross build the
conf user.isaforge:exe_wrapper: the QEMU command that runs this arch's programs). build() runs the engine's tests
with ctest, under that QEMU on the CPU model of `user.isaforge:qemu_cpu`; a build whose tests did not run fails.
"""

from __future__ import annotations

from conan import ConanFile
from conan.errors import ConanException
from conan.tools.build import can_run, cross_building
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.env import Environment

ISAFORGE = "isaforge/[>=0.1 <1]"


class EcmConan(ConanFile):
    name = "ecm"
    version = "0.1.0"
    description = "Example engine: int8 sum of squares and fp16 clamp, kernels dispatched by isaforge"
    license = "Apache-2.0"
    package_type = "static-library"
    settings = "os", "arch", "compiler", "build_type"
    options = {"fPIC": [True, False]}  # noqa: RUF012 - Conan's class attributes
    default_options = {"fPIC": True}  # noqa: RUF012
    exports_sources = "CMakeLists.txt", "engine.toml", "include/*", "src/*", "kernels/*", "tests/*"

    def configure(self) -> None:
        self.settings.rm_safe("compiler.libcxx")
        self.settings.rm_safe("compiler.cppstd")

    def requirements(self) -> None:
        # ecm.h includes the generated ecm_dispatch.h, which includes <isaforge/isaforge.h>.
        self.requires(ISAFORGE, transitive_headers=True)

    def build_requirements(self) -> None:
        self.tool_requires(ISAFORGE)

    def layout(self) -> None:
        cmake_layout(self)

    @property
    def _exe_wrapper(self) -> list[str]:
        return self.conf.get("user.isaforge:exe_wrapper", default=[], check_type=list)

    def generate(self) -> None:
        tc = CMakeToolchain(self)
        tc.user_presets_path = False  # nothing written next to the sources
        if self._exe_wrapper:
            tc.cache_variables["CMAKE_CROSSCOMPILING_EMULATOR"] = ";".join(self._exe_wrapper)
        tc.generate()
        CMakeDeps(self).generate()

    def build(self) -> None:
        cmake = CMake(self)
        cmake.configure()
        cmake.build()
        if self.conf.get("tools.build:skip_test", check_type=bool):
            return
        env = Environment()
        if cross_building(self) and not can_run(self):
            if not self._exe_wrapper:
                raise ConanException(
                    f"{self.ref}: cannot run arch={self.settings.arch} programs and no user.isaforge:exe_wrapper (the "
                    "isaforge tool_requires sets it for arm and aarch64); or skip with -c tools.build:skip_test=True"
                )
            cpu = str(self.conf.get("user.isaforge:qemu_cpu", default="max"))
            env.define("QEMU_CPU", cpu)
            self.output.info(f"ecm tests under {' '.join(self._exe_wrapper)}, CPU model {cpu}")
        with env.vars(self, scope="ecm_test").apply():
            cmake.ctest(cli_args=["--no-tests=error", "--output-on-failure", "--verbose"])

    def package(self) -> None:
        CMake(self).install()

    def package_info(self) -> None:
        self.cpp_info.libs = ["ecm"]
