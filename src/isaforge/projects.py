"""Any Meson or CMake project, cross-built with one of isaforge's toolchains and tested under QEMU: what `isaforge
test-qemu` does to an engine (or to libisaforge itself).

The project finds libisaforge where ensure_installed put it (pkg-config for Meson, CMAKE_PREFIX_PATH for CMake) and
is configured with the toolchain's cross file or CMake toolchain file, rendered from the catalogue next to its build
directory (so an installed isaforge needs no checkout). Tests run through the project's own runner (`meson test`,
`ctest`); the wrapper in those files is QEMU without -cpu, so the environment's QEMU_CPU picks the model.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from isaforge import builds, process
from isaforge.errors import IsaforgeError
from isaforge.toolchains import Toolchain, render_cmake_toolchain, render_cross_file

MESON, CMAKE = "meson", "cmake"
STAMP = ".isaforge-test-qemu"  # how the build directory was configured; another configuration starts afresh
TEST_TIMEOUT = 3 * 3600.0  # a whole suite under a slow emulated model on a shared machine


@dataclass(frozen=True)
class Project:
    directory: Path
    system: str  # MESON or CMAKE

    @property
    def is_isaforge(self) -> bool:
        """libisaforge's own tree: it builds the library itself, so no installed copy is needed."""
        return (
            self.system == MESON
            and (self.directory / "src" / "isaforge" / "isa.toml").is_file()
            and (self.directory / "kernels" / "runtime").is_dir()
        )


def detect(directory: Path) -> Project:
    """The project's build system, from its top-level files; a one-line error naming what is needed otherwise."""
    if not directory.is_dir():
        raise IsaforgeError(
            f"project {directory} is not a directory; --project takes a Meson or CMake project's folder"
        )
    directory = directory.resolve()
    if (directory / "meson.build").is_file():
        return Project(directory, MESON)
    if (directory / "CMakeLists.txt").is_file():
        return Project(directory, CMAKE)
    raise IsaforgeError(
        f"project {directory} has neither meson.build nor CMakeLists.txt; test-qemu needs the top-level folder of a "
        "Meson or CMake project"
    )


@dataclass(frozen=True)
class ProjectBuild:
    """One project built with one toolchain, against the libisaforge installed in `prefix` (None: it is isaforge)."""

    project: Project
    toolchain: Toolchain
    directory: Path
    prefix: Path | None

    @property
    def name(self) -> str:
        return self.toolchain.name

    @property
    def logs(self) -> Path:
        """Logs and traces: beside the build directory, which a new configuration wipes."""
        return self.directory.with_name(f"{self.directory.name}-logs")


def tool_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every tool run: meson and ninja from isaforge's own environment first, and none of the
    QEMU_* / ISAFORGE_* settings of the caller (the runs set their own)."""
    env = builds._tool_env() if base is None else dict(base)
    return {k: v for k, v in env.items() if not k.startswith(("QEMU_", "ISAFORGE_"))}


def _write_if_changed(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)
    return path


def toolchain_file(pb: ProjectBuild) -> Path:
    """The toolchain's cross file (Meson) or toolchain file (CMake), next to the build directory."""
    if pb.project.system == MESON:
        return _write_if_changed(pb.directory.with_name(f"{pb.name}.ini"), render_cross_file(pb.toolchain))
    return _write_if_changed(pb.directory.with_name(f"{pb.name}.cmake"), render_cmake_toolchain(pb.toolchain))


def _which(tool: str, env: Mapping[str, str], why: str) -> str:
    exe = shutil.which(tool, path=env.get("PATH"))
    if exe is None:
        raise IsaforgeError(f"{tool} not found; {why}")
    return exe


def _meson_setup(pb: ProjectBuild, env: Mapping[str, str]) -> list[str]:
    meson = _which("meson", env, "run ci/install-toolchains.sh (or pip install meson ninja)")
    cmd = [meson, "setup", str(pb.directory), str(pb.project.directory), "--cross-file", str(toolchain_file(pb))]
    if pb.prefix is not None:
        # In a cross build Meson looks up the host machine's pkg-config files only along pkg_config_path (the
        # environment's PKG_CONFIG_PATH is for the build machine); cmake_prefix_path serves dependency(method: cmake).
        cmd += [f"-Dpkg_config_path={pb.prefix / 'lib' / 'pkgconfig'}", f"-Dcmake_prefix_path={pb.prefix}"]
    return cmd


def _cmake_configure(pb: ProjectBuild, env: Mapping[str, str]) -> list[str]:
    cmake = _which("cmake", env, "apt-get install cmake (CMake projects need it)")
    _which("ninja", env, "run ci/install-toolchains.sh (or pip install ninja)")
    cmd = [cmake, "-S", str(pb.project.directory), "-B", str(pb.directory), "-G", "Ninja",
           f"-DCMAKE_TOOLCHAIN_FILE={toolchain_file(pb)}", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
           "-DCMAKE_BUILD_TYPE=Release"]  # fmt: skip
    if pb.prefix is not None:
        # A find root too: pkg-config's imported targets (pkg_check_modules) look their libraries up with
        # find_library, which the toolchain file keeps to the roots.
        cmd += [f"-DCMAKE_PREFIX_PATH={pb.prefix}", f"-DCMAKE_FIND_ROOT_PATH={pb.prefix}"]
    return cmd


def configure(pb: ProjectBuild, env: Mapping[str, str] | None = None) -> None:
    """Configure the build directory; one configured otherwise (another toolchain file, prefix, system) is wiped."""
    env = tool_env(env)
    cmd = _meson_setup(pb, env) if pb.project.system == MESON else _cmake_configure(pb, env)
    stamp = pb.directory / STAMP
    wanted = "\n".join([*cmd[1:], toolchain_file(pb).read_text()])
    configured = stamp.is_file() and stamp.read_text() == wanted
    if not configured and pb.directory.exists():
        shutil.rmtree(pb.directory)
    # Meson re-runs its own setup when the project's files change; a configured Meson build needs nothing here.
    # CMake's configure step is incremental and is where an engine's kernel list is read: always run it.
    if configured and pb.project.system == MESON:
        return
    process.run(cmd, what=f"configure of {pb.project.directory.name} for {pb.name}", env=env,
                log=pb.logs / "configure.log", timeout=builds.BUILD_TIMEOUT)  # fmt: skip
    stamp.write_text(wanted)


def compile_project(pb: ProjectBuild, env: Mapping[str, str] | None = None) -> None:
    env = tool_env(env)
    if pb.project.system == MESON:
        cmd = [_which("meson", env, "run ci/install-toolchains.sh"), "compile", "-C", str(pb.directory)]
    else:
        cmd = [_which("cmake", env, "apt-get install cmake"), "--build", str(pb.directory)]
    process.run(cmd, what=f"build of {pb.project.directory.name} for {pb.name}", env=env,
                log=pb.logs / "build.log", timeout=builds.BUILD_TIMEOUT)  # fmt: skip


def test_command(pb: ProjectBuild, env: Mapping[str, str]) -> list[str]:
    if pb.project.system == MESON:
        meson = _which("meson", env, "run ci/install-toolchains.sh")
        return [meson, "test", "-C", str(pb.directory), "--no-rebuild", "--print-errorlogs"]
    ctest = _which("ctest", env, "apt-get install cmake (CMake projects need it)")
    # A project without tests proves nothing: ctest says so with an error instead of passing.
    jobs = str(os.cpu_count() or 1)
    return [ctest, "--test-dir", str(pb.directory), "--output-on-failure", "--no-tests=error", "--parallel", jobs]


def run_tests(pb: ProjectBuild, env: Mapping[str, str], log: Path) -> int:
    """The project's whole test suite with `env` (QEMU_CPU, ISAFORGE_TRACE, ISAFORGE_DISABLE set by the caller on
    top of tool_env()); its exit status, the output in `log`."""
    return process.stream(test_command(pb, env), log, env=env, timeout=TEST_TIMEOUT)
