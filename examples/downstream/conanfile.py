"""The downstream engine built against the isaforge Conan package (pkg-config through PkgConfigDeps, Meson through
MesonToolchain), with any isaforge host profile:

    conan create recipes/isaforge -pr:h toolchains/conan/aarch64-linux-gnu-gcc -pr:b default
    conan build examples/downstream -of build/engine -pr:h toolchains/conan/aarch64-linux-gnu-gcc -pr:b default \\
        -c user.isaforge:qemu_cpu=cortex-a53

`build()` runs the engine's Meson test: natively when this machine can, else under QEMU through the exe_wrapper of
the profile's extra Meson machine file, on the CPU model of `user.isaforge:qemu_cpu`.
"""

from __future__ import annotations

from conan import ConanFile
from conan.tools.build import can_run
from conan.tools.env import Environment
from conan.tools.gnu import PkgConfigDeps
from conan.tools.layout import basic_layout
from conan.tools.meson import Meson, MesonToolchain


class EngineConan(ConanFile):
    name = "engine"
    version = "0.1.0"
    package_type = "application"
    settings = "os", "arch", "compiler", "build_type"

    def requirements(self) -> None:
        self.requires("isaforge/[>=0.1 <1]")

    def layout(self) -> None:
        basic_layout(self)

    def configure(self) -> None:
        self.settings.rm_safe("compiler.libcxx")
        self.settings.rm_safe("compiler.cppstd")

    def generate(self) -> None:
        PkgConfigDeps(self).generate()
        tc = MesonToolchain(self)
        tc.project_options["isaforge_from"] = "pkg-config"
        tc.generate()

    def build(self) -> None:
        meson = Meson(self)
        meson.configure()
        meson.build()
        if self.conf.get("tools.build:skip_test", check_type=bool):
            return
        env = Environment()
        if not can_run(self):
            cpu = str(self.conf.get("user.isaforge:qemu_cpu", default="max"))
            env.define("QEMU_CPU", cpu)
            self.output.info(f"running the engine under QEMU, CPU model {cpu}")
        with env.vars(self, scope="engine_test").apply():
            self.run(f'meson test -C "{self.build_folder}" --print-errorlogs --verbose')

    def package(self) -> None:
        Meson(self).install()
