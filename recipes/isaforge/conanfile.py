"""Conan 2 recipe of libisaforge: Arm GEMM micro-kernels chosen at run time from the CPU's features.

Built with Meson from the repository's own sources (exported with the recipe); every ISA variant of the catalogue
(src/isaforge/isa.toml) is an option. Cross builds run the library's Meson tests under QEMU user mode through the
exe_wrapper of the host profile's extra Meson machine file (toolchains/conan/), on the CPU model given by the conf
`user.isaforge:qemu_cpu`. Meson and Ninja come from the environment (no tool_requires).

An engine uses the package twice (docs/conan.md, examples/engine-cmake):
- `requires`: libisaforge, its headers, the CMake build modules (isaforge_add_kernel_library,
  ISAFORGE_BASELINE_C_FLAGS) and the pkg-config variables isaforge_enginegen / isaforge_baseline;
- `tool_requires`: the kernel-library generator only (nothing is compiled), for the machine that builds. It sets
  ISAFORGE_ENGINEGEN in the build environment and, for the arch of the consumer (settings_target), the conf
  `user.isaforge:exe_wrapper` (the QEMU command that runs its cross-built tests), so an engine's recipe needs no
  table of arches of its own.
"""

from __future__ import annotations

import configparser
import io
import json
import os
import shutil
import tomllib

from conan import ConanFile
from conan.errors import ConanException, ConanInvalidConfiguration
from conan.tools.build import can_run, cross_building
from conan.tools.env import Environment
from conan.tools.files import copy, load, rmdir, save
from conan.tools.layout import basic_layout
from conan.tools.meson import Meson, MesonToolchain

required_conan_version = ">=2.0"

_REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
# Conan arch -> catalogue arch (isa.toml [arch.*]); "host" builds only the portable reference kernels.
_ISA_ARCH = {"armv8": "aarch64", "armv7hf": "arm", "x86_64": "host"}
_COMPILERS = ("gcc", "clang")
_QEMU_CPU_CONF = "user.isaforge:qemu_cpu"
_DEFAULT_QEMU_CPU = "max"
_EXE_WRAPPER_CONF = "user.isaforge:exe_wrapper"
# Where meson.build installs the generator (and the modules it imports); the tool package holds the same files.
_GENERATOR_DIR = os.path.join("share", "isaforge", "python", "isaforge")
# What meson.build reads from the source tree (check: conan create builds from exactly this).
_SOURCES = (
    "meson.build",
    "meson.options",
    "VERSION",
    "include/*",
    "kernels/*",
    "tools/*",
    "tests/kernels/meson.build",
    "tests/kernels/*.c",
    "tests/kernels/*.h",
    "cmake/*",
    "src/isaforge/codegen.py",
    "src/isaforge/generator_files.txt",
)


def _generator_files(root: str) -> list[str]:
    """The entries of src/isaforge/generator_files.txt (the one list of what the build runs of the package)."""
    with open(os.path.join(root, "src", "isaforge", "generator_files.txt"), encoding="utf-8") as f:
        text = f.read()
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _catalogue_path() -> str:
    """isa.toml next to the exported recipe, else the repository's (recipe used from the source tree)."""
    here = os.path.dirname(os.path.abspath(__file__))
    exported = os.path.join(here, "isa.toml")
    return exported if os.path.isfile(exported) else os.path.join(_REPO, "src", "isaforge", "isa.toml")


def _variants() -> dict[str, tuple[str, ...]]:
    """Every variant of the catalogue but the always-built reference: name -> catalogue arches it exists on."""
    with open(_catalogue_path(), "rb") as f:
        raw = tomllib.load(f)
    return {name: tuple(v["arches"]) for name, v in raw["variant"].items() if name != "ref"}


_VARIANTS = _variants()


def _qemu_command(isa_arch: str) -> list[str]:
    """`qemu-<arch> -L <sysroot>` of a catalogue arch, from isa.toml."""
    with open(_catalogue_path(), "rb") as f:
        arch = tomllib.load(f)["arch"][isa_arch]
    return [arch["qemu"], "-L", arch["sysroot"]]


def _machine_file_binaries(path: str) -> dict[str, str]:
    """The [binaries] of a Meson machine file (values as written)."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(path)
    return dict(parser["binaries"]) if parser.has_section("binaries") else {}


class IsaforgeConan(ConanFile):
    name = "isaforge"
    description = "Arm GEMM micro-kernels (aarch64, armv7 hard-float) dispatched at run time from the CPU's hwcaps"
    license = "Apache-2.0"
    topics = ("gemm", "arm", "neon", "sve", "simd", "dispatch")
    package_type = "library"
    settings = "os", "arch", "compiler", "build_type"
    options = {  # noqa: RUF012 - Conan's class attributes
        "shared": [True, False],
        "fPIC": [True, False],
        # True: build the variant if the compiler can (Meson `auto`); False: never (`disabled`).
        **{name: [True, False] for name in _VARIANTS},
        "inst_encode": ["auto", "always", "never"],
    }
    default_options = {  # noqa: RUF012
        "shared": False,
        "fPIC": True,
        **dict.fromkeys(_VARIANTS, True),
        "inst_encode": "auto",
    }

    # -- metadata ------------------------------------------------------------------------------------------------
    def set_version(self) -> None:
        self.version = self.version or load(self, os.path.join(self.recipe_folder, _REPO, "VERSION")).strip()

    def export(self) -> None:
        # The options are read from the catalogue when the recipe is loaded, also from the cache.
        copy(self, "isa.toml", os.path.join(self.recipe_folder, _REPO, "src", "isaforge"), self.export_folder)
        # The licence travels with the recipe, so package() finds it next to the exported conanfile.
        copy(self, "LICENSE", os.path.join(self.recipe_folder, _REPO), self.export_folder)

    def export_sources(self) -> None:
        root = os.path.join(self.recipe_folder, _REPO)
        package = os.path.join("src", "isaforge")
        for pattern in (*_SOURCES, *(os.path.join(package, name) for name in _generator_files(root))):
            copy(self, pattern, root, self.export_sources_folder, excludes=("*.pyc", "__pycache__/*"))

    # -- configuration -------------------------------------------------------------------------------------------
    @property
    def _isa_arch(self) -> str | None:
        return _ISA_ARCH.get(str(self.settings.arch))

    @property
    def _is_tool(self) -> bool:
        """A tool_requires: only the generator, which runs on the build machine whatever the consumer builds for."""
        return self.context == "build"

    def config_options(self) -> None:
        # Variants that do not exist on this arch (all of them on the host) are not options of its package.
        isa_arch = self._isa_arch
        for name, arches in _VARIANTS.items():
            if isa_arch is not None and isa_arch not in arches:
                self.options.rm_safe(name)
        if isa_arch == "host":
            self.options.rm_safe("inst_encode")

    def configure(self) -> None:
        if self.options.shared:
            self.options.rm_safe("fPIC")
        # C only.
        self.settings.rm_safe("compiler.libcxx")
        self.settings.rm_safe("compiler.cppstd")

    def layout(self) -> None:
        basic_layout(self)

    def package_id(self) -> None:
        if self._is_tool:
            # Python scripts: the same for every build machine, compiler and option. One package per arch built
            # for, because package_info() hands the consumer that arch's QEMU command.
            self.info.settings.clear()
            self.info.options.clear()
            if self.settings_target is not None:
                target = self.settings_target.copy()
                for name in target.fields:
                    if name not in ("os", "arch"):
                        target.rm_safe(name)
                self.info.settings_target = target

    def validate(self) -> None:
        if self._is_tool:
            return  # nothing is compiled
        if self.settings.os != "Linux":
            raise ConanInvalidConfiguration(f"{self.ref} builds for Linux only, not os={self.settings.os}")
        if self._isa_arch is None:
            raise ConanInvalidConfiguration(
                f"{self.ref} builds for arch={'/'.join(_ISA_ARCH)}, not arch={self.settings.arch}"
            )
        if str(self.settings.compiler) not in _COMPILERS:
            raise ConanInvalidConfiguration(
                f"{self.ref} builds with {' or '.join(_COMPILERS)}, not compiler={self.settings.compiler}"
            )

    # -- build -----------------------------------------------------------------------------------------------------
    def generate(self) -> None:
        if self._is_tool:
            return
        tc = MesonToolchain(self)
        if tc.b_staticpic is not None:
            tc.b_staticpic = bool(tc.b_staticpic)  # a plain bool, not Conan's option value
        for name in _VARIANTS:
            value = self.options.get_safe(name)
            if value is not None:
                tc.project_options[f"variant_{name}"] = "auto" if value else "disabled"
        if self.options.get_safe("inst_encode") is not None:
            tc.project_options["inst_encode"] = str(self.options.inst_encode)
        # tools.build:skip_test: the thirteen test programs would be compiled for nothing.
        tc.project_options["tests"] = self._run_tests
        tc.generate()

    def _check_build_tools(self) -> None:
        missing = [tool for tool in ("meson", "ninja") if shutil.which(tool) is None]
        if missing:
            raise ConanException(
                f"{self.ref}: {' and '.join(missing)} not found on PATH; isaforge takes Meson and Ninja from the "
                "environment (pip install meson ninja, or activate the isaforge venv)"
            )

    @property
    def _run_tests(self) -> bool:
        return not self.conf.get("tools.build:skip_test", check_type=bool)

    def _exe_wrapper(self) -> str | None:
        """The exe_wrapper that the extra Meson machine files (or the extra_variables conf) give, as written."""
        files = self.conf.get("tools.meson.mesontoolchain:extra_machine_files", default=[], check_type=list)
        wrapper = None
        for path in files:
            if not os.path.isfile(path):
                raise ConanException(f"{self.ref}: extra Meson machine file {path} does not exist")
            wrapper = _machine_file_binaries(path).get("exe_wrapper", wrapper)
        extra = self.conf.get("tools.meson.mesontoolchain:extra_variables", default={}, check_type=dict)
        return extra.get("binaries", {}).get("exe_wrapper", wrapper)

    def build(self) -> None:
        if self._is_tool:
            return
        self._check_build_tools()
        needs_wrapper = cross_building(self) and not can_run(self)
        if self._run_tests and needs_wrapper and self._exe_wrapper() is None:
            # Meson would skip every test of a cross build it cannot run; say so before building anything.
            raise ConanException(
                f"{self.ref}: cross build for arch={self.settings.arch} and no exe_wrapper to run its tests: set "
                "tools.meson.mesontoolchain:extra_machine_files to a Meson machine file with "
                "`exe_wrapper = ['qemu-<arch>', '-L', '<sysroot>']` (the isaforge profiles in toolchains/conan/ do), "
                "or skip the tests with -c tools.build:skip_test=True"
            )
        meson = Meson(self)
        meson.configure()
        meson.build()
        if self._run_tests:
            self._meson_test(needs_wrapper)

    def _meson_test(self, under_qemu: bool) -> None:
        env = Environment()
        if under_qemu:
            cpu = str(self.conf.get(_QEMU_CPU_CONF, default=_DEFAULT_QEMU_CPU))
            env.define("QEMU_CPU", cpu)
            self.output.info(f"running the Meson tests under QEMU, CPU model {cpu} ({_QEMU_CPU_CONF})")
        log = os.path.join(self.build_folder, "meson-logs", "testlog.json")
        if os.path.exists(log):
            os.remove(log)
        with env.vars(self, scope="isaforge_test").apply():
            self.run(f'meson test -C "{self.build_folder}" --print-errorlogs --verbose')
        results = [json.loads(line)["result"] for line in load(self, log).splitlines() if line.strip()]
        if not any(r in ("OK", "EXPECTEDFAIL") for r in results):
            raise ConanException(
                f"{self.ref}: no Meson test ran ({len(results)} tests, results: {', '.join(sorted(set(results)))}): "
                "a cross build needs an exe_wrapper (tools.meson.mesontoolchain:extra_machine_files)"
            )

    # -- package ----------------------------------------------------------------------------------------------------
    def _built_variants(self) -> dict[str, list[str]]:
        """variant -> compile flags, for the variants Meson built (it drops those the compiler cannot build)."""
        with open(os.path.join(self.build_folder, "meson-info", "intro-targets.json")) as f:
            targets = {t["name"] for t in json.load(f)}
        isa_arch = self._isa_arch
        answer = self._codegen("--arch", isa_arch, "--compiler", str(self.settings.compiler), "configure")
        built = {}
        for line in answer.splitlines():
            fields = line.split("|")  # variant|<name>|<flags>|… (codegen.py, configure_answer)
            if fields[0] == "variant" and f"isf_{isa_arch}_{fields[1]}" in targets:
                built[fields[1]] = fields[2].split()
        return built

    def _codegen(self, *args: str) -> str:
        """An answer of src/isaforge/codegen.py about the source tree (the catalogue's one reader for builds)."""
        cmd = ["python3", os.path.join(self.source_folder, "src", "isaforge", "codegen.py"),
               "--source-root", self.source_folder, *args]  # fmt: skip
        out = io.StringIO()
        self.run(" ".join(f'"{c}"' for c in cmd), stdout=out, quiet=True)
        return out.getvalue()

    def _pc_variables(self) -> dict[str, str]:
        """The variables of the isaforge.pc Meson installed (isaforge_enginegen, isaforge_baseline, …)."""
        pc = load(self, os.path.join(self.package_folder, "lib", "pkgconfig", "isaforge.pc"))
        out = {}
        for line in pc.splitlines():
            name, sep, value = line.partition("=")
            if sep and name.startswith("isaforge_"):
                # Meson's `variables` escape spaces (`-march=armv7-a\ -mfpu=…`), which pkg-config hands back as is.
                out[name.strip()] = value.strip().replace("\\ ", " ")
        return out

    def package(self) -> None:
        copy(self, "LICENSE", self.recipe_folder, os.path.join(self.package_folder, "licenses"))
        if self._is_tool:
            answer = dict(line.split("|", 1) for line in self._codegen("configure").splitlines())
            package = os.path.join(self.source_folder, "src", "isaforge")
            generator_dir = os.path.join(self.package_folder, _GENERATOR_DIR)
            for path in answer["generator-files"].split() + answer["generator-engine-files"].split():
                # relative to src/isaforge/: the engine package keeps its folder
                copy(self, os.path.relpath(path, "src/isaforge"), package, generator_dir)
            return
        meson = Meson(self)
        meson.install()
        # PkgConfigDeps writes the consumers' isaforge.pc from package_info(); it carries Meson's variables on.
        save(
            self,
            os.path.join(self.package_folder, "res", "isaforge", "pkgconfig.json"),
            json.dumps(self._pc_variables()),
        )
        rmdir(self, os.path.join(self.package_folder, "lib", "pkgconfig"))
        variants = self._built_variants()
        # For engines that compile their own kernels with the same flags (the Meson subproject gives them as
        # isaforge_variant_c_args; Conan consumers get them as pkg-config variables and this CMake module).
        save(self, os.path.join(self.package_folder, "res", "isaforge", "variants.json"), json.dumps(variants))
        cmake = ["# Generated by the isaforge recipe: the compile flags of every ISA variant this package built."]
        cmake.append(f'set(ISAFORGE_VARIANTS "{";".join(variants)}")')
        cmake += [f'set(ISAFORGE_VARIANT_{n.upper()}_C_ARGS "{";".join(f)}")' for n, f in variants.items()]
        module = os.path.join(self.package_folder, "lib", "cmake", "isaforge-variants.cmake")
        save(self, module, "\n".join(cmake) + "\n")

    def package_info(self) -> None:
        if self._is_tool:
            self._tool_package_info()
            return
        self.cpp_info.libs = ["isaforge"]
        self.cpp_info.includedirs = ["include"]
        self.cpp_info.resdirs = ["res"]
        self.cpp_info.system_libs = ["pthread"]
        self.cpp_info.set_property("pkg_config_name", "isaforge")
        self.cpp_info.set_property("cmake_file_name", "isaforge")
        self.cpp_info.set_property("cmake_target_name", "isaforge::isaforge")
        # The config CMakeDeps writes includes these: isaforge-vars.cmake (ISAFORGE_BASELINE_C_FLAGS, the generator's
        # path in this package unless ISAFORGE_ENGINEGEN says otherwise) and isaforge_add_kernel_library().
        modules = ["isaforge-variants.cmake", "isaforge/isaforge-vars.cmake", "isaforge/isaforge-kernels.cmake"]
        self.cpp_info.set_property("cmake_build_modules", [os.path.join("lib", "cmake", m) for m in modules])
        res = os.path.join(self.package_folder or "", "res", "isaforge")
        if self.package_folder and os.path.isfile(os.path.join(res, "variants.json")):
            with open(os.path.join(res, "variants.json")) as f:
                variants = json.load(f)
            with open(os.path.join(res, "pkgconfig.json")) as f:
                content = json.load(f)  # isaforge_enginegen=${prefix}/share/…, isaforge_baseline=…
            content["isaforge_variants"] = " ".join(variants)
            content.update({f"isaforge_variant_{n}_c_args": " ".join(flags) for n, flags in variants.items()})
            self.cpp_info.set_property("pkg_config_custom_content", content)

    def _tool_package_info(self) -> None:
        self.cpp_info.includedirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.bindirs = []
        self.buildenv_info.define_path(
            "ISAFORGE_ENGINEGEN", os.path.join(self.package_folder, _GENERATOR_DIR, "enginegen.py")
        )
        target = self.settings_target
        isa_arch = _ISA_ARCH.get(str(target.arch)) if target is not None else None
        if isa_arch not in (None, "host") and str(target.arch) != str(self.settings.arch):
            self.conf_info.define(_EXE_WRAPPER_CONF, _qemu_command(isa_arch))
