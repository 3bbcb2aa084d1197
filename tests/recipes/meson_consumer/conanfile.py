"""A second consumer of the isaforge package, with Meson: PkgConfigDeps + MesonToolchain, run as a test_package
(`conan test tests/recipes/meson_consumer isaforge/<version> -pr:h <profile> -pr:b default`). Its program runs
through `meson test`, so under QEMU with the exe_wrapper of the profile's extra machine file, on the CPU model of
`user.isaforge:qemu_cpu`; a run in which Meson skipped the test (no wrapper) fails."""

from __future__ import annotations

import json
import os

from conan import ConanFile
from conan.errors import ConanException
from conan.tools.build import can_run
from conan.tools.env import Environment
from conan.tools.files import load
from conan.tools.gnu import PkgConfigDeps
from conan.tools.layout import basic_layout
from conan.tools.meson import Meson, MesonToolchain


class IsaforgeMesonConsumer(ConanFile):
    settings = "os", "arch", "compiler", "build_type"
    test_type = "explicit"

    def requirements(self) -> None:
        self.requires(self.tested_reference_str)

    def layout(self) -> None:
        basic_layout(self)

    def generate(self) -> None:
        PkgConfigDeps(self).generate()
        MesonToolchain(self).generate()

    def build(self) -> None:
        meson = Meson(self)
        meson.configure()
        meson.build()

    def test(self) -> None:
        env = Environment()
        if not can_run(self):
            cpu = str(self.conf.get("user.isaforge:qemu_cpu", default="max"))
            env.define("QEMU_CPU", cpu)
            self.output.info(f"meson test under QEMU, CPU model {cpu}")
        with env.vars(self, scope="consumer_test").apply():
            self.run(f'meson test -C "{self.build_folder}" --print-errorlogs --verbose')
        log = os.path.join(self.build_folder, "meson-logs", "testlog.json")
        results = [json.loads(line)["result"] for line in load(self, log).splitlines() if line.strip()]
        if results.count("OK") != len(results) or not results:
            raise ConanException(f"meson consumer: tests did not all run and pass: {results} (no exe_wrapper?)")
