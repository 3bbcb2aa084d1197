"""Any Meson or CMake project, cross-built with one of isaforge's toolchains and tested under QEMU: what `isaforge
test-qemu` does to an engine (or to libisaforge itself).

The project finds libisaforge where ensure_installed put it (pkg-config for Meson, CMAKE_PREFIX_PATH for CMake) and
is configured with the toolchain's cross file or CMake toolchain file, rendered from the catalogue next to its build
directory (so an installed isaforge needs no checkout). Tests run through the project's own runner (`meson test`,
`ctest`); the wrapper in those files is QEMU without -cpu, so the environment's QEMU_CPU picks the model.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from isaforge import builds, process
from isaforge.errors import IsaforgeError
from isaforge.toolchains.cmake_files import render_cmake_toolchain
from isaforge.toolchains.meson_files import render_cross_file
from isaforge.toolchains.model import Toolchain

MESON, CMAKE = "meson", "cmake"
STAMP = ".isaforge-test-qemu"  # how the build directory was configured; another configuration starts afresh
TEST_TIMEOUT = 3 * 3600.0  # a whole suite under a slow emulated model on a shared machine
# Meson's build types and CMake's names for them; release is what engines ship.
BUILD_TYPES = {"release": "Release", "debug": "Debug", "debugoptimized": "RelWithDebInfo", "minsize": "MinSizeRel"}
DEFAULT_BUILD_TYPE = "release"


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


def source_files(directory: Path, skip: Path | None = None) -> Iterator[Path]:
    """The project's own files: no hidden folder, no build folder (build*, the builddir root `skip`), no
    subprojects/ (dependencies, with catalogues and kernels of their own)."""
    for root, dirs, files in os.walk(directory):
        here = Path(root)
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith((".", "build")) and d != "subprojects" and (skip is None or here / d != skip)
        )
        yield from (here / f for f in sorted(files))


def engine_catalogues(directory: Path, skip: Path | None = None) -> dict[Path, dict]:
    """The engine catalogues of a project: its TOML files with an [engine] table at the top level (the generator's
    input); other TOML files, and ones that do not parse (the generator reports its own), are not catalogues."""
    found = {}
    for path in source_files(directory, skip):
        if path.suffix != ".toml":
            continue
        try:
            data = tomllib.loads(path.read_text(errors="replace"))
        except (OSError, tomllib.TOMLDecodeError):
            continue
        if isinstance(data.get("engine"), dict):
            found[path] = data["engine"]
    return found


def declared_arches(directory: Path, skip: Path | None = None) -> dict[Path, list[str]] | None:
    """Each engine catalogue's `[engine] arches`, when every catalogue of the project declares them; None when there
    is no catalogue or one leaves them open (every arch)."""
    catalogues = engine_catalogues(directory, skip)
    if not catalogues or any("arches" not in engine for engine in catalogues.values()):
        return None
    declared = {}
    for path, engine in catalogues.items():
        arches = engine["arches"]
        if not isinstance(arches, list) or not arches or not all(isinstance(a, str) for a in arches):
            raise IsaforgeError(f'{path}: [engine] arches must be a list of arch names, e.g. arches = ["aarch64"]')
        declared[path] = arches
    return declared


def source_fingerprint(directory: Path, skip: Path | None = None) -> str:
    """The project's file list with each file's mtime: a kernel file added, moved or removed, or a catalogue edited,
    changes it. Meson runs the generator at configure time (run_command) and does not watch either."""
    digest = hashlib.sha256()
    for path in source_files(directory, skip):
        try:
            mtime = path.stat().st_mtime_ns
        except OSError:
            continue  # gone while walking
        digest.update(f"{path.relative_to(directory)}\0{mtime}\n".encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class ProjectBuild:
    """One project built with one toolchain, against the libisaforge installed in `prefix` (None: it is isaforge)."""

    project: Project
    toolchain: Toolchain
    directory: Path
    prefix: Path | None
    buildtype: str = DEFAULT_BUILD_TYPE  # Meson's name (BUILD_TYPES)
    options: tuple[str, ...] = ()  # KEY=VALUE, given to meson setup / cmake as -D

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
    cmd = [meson, "setup", str(pb.directory), str(pb.project.directory), "--cross-file", str(toolchain_file(pb)),
           f"--buildtype={pb.buildtype}"]  # fmt: skip
    if pb.prefix is not None:
        # In a cross build Meson looks up the host machine's pkg-config files only along pkg_config_path (the
        # environment's PKG_CONFIG_PATH is for the build machine); cmake_prefix_path serves dependency(method: cmake).
        cmd += [f"-Dpkg_config_path={pb.prefix / 'lib' / 'pkgconfig'}", f"-Dcmake_prefix_path={pb.prefix}"]
    return cmd + [f"-D{option}" for option in pb.options]


def _cmake_configure(pb: ProjectBuild, env: Mapping[str, str]) -> list[str]:
    cmake = _which("cmake", env, "apt-get install cmake (CMake projects need it)")
    _which("ninja", env, "run ci/install-toolchains.sh (or pip install ninja)")
    cmd = [cmake, "-S", str(pb.project.directory), "-B", str(pb.directory), "-G", "Ninja",
           f"-DCMAKE_TOOLCHAIN_FILE={toolchain_file(pb)}", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
           f"-DCMAKE_BUILD_TYPE={BUILD_TYPES[pb.buildtype]}"]  # fmt: skip
    if pb.prefix is not None:
        # A find root too: pkg-config's imported targets (pkg_check_modules) look their libraries up with
        # find_library, which the toolchain file keeps to the roots.
        cmd += [f"-DCMAKE_PREFIX_PATH={pb.prefix}", f"-DCMAKE_FIND_ROOT_PATH={pb.prefix}"]
    return cmd + [f"-D{option}" for option in pb.options]


def _read_stamp(stamp: Path) -> dict[str, str]:
    try:
        data = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def configure(pb: ProjectBuild, env: Mapping[str, str] | None = None) -> None:
    """Configure the build directory; one configured otherwise (another command line, toolchain file, prefix, system)
    is wiped, and a Meson one whose project files changed (source_fingerprint) is reconfigured in place."""
    env = tool_env(env)
    cmd = _meson_setup(pb, env) if pb.project.system == MESON else _cmake_configure(pb, env)
    stamp = pb.directory / STAMP
    wanted = {
        "configuration": "\n".join([*cmd[1:], toolchain_file(pb).read_text()]),
        "sources": source_fingerprint(pb.project.directory, pb.directory.parent),
    }
    had = _read_stamp(stamp)
    configured = had.get("configuration") == wanted["configuration"]
    if not configured and pb.directory.exists():
        shutil.rmtree(pb.directory)
    if configured and pb.project.system == MESON:
        # Meson re-runs its own setup when its build files change, not when a kernel file comes or goes.
        if had.get("sources") == wanted["sources"]:
            return
        cmd = [*cmd[:2], "--reconfigure", *cmd[2:]]
    # CMake's configure step is incremental and is where an engine's kernel list is read: always run it.
    log = pb.logs / "configure.log"
    try:
        process.run(cmd, what=f"configure of {pb.project.directory.name} for {pb.name}", env=env, log=log,
                    timeout=builds.BUILD_TIMEOUT)  # fmt: skip
    except IsaforgeError as exc:
        raise IsaforgeError(configure_reason(pb.directory, log) or str(exc)) from None
    stamp.write_text(json.dumps(wanted))


CMAKE_ERROR = re.compile(r"^CMake Error( at [^\n]*)?:\s*\n\s*(\S[^\n]*)", re.MULTILINE)


def configure_reason(builddir: Path, log: Path) -> str:
    """The one line that says why a configure failed: the generator's own (`enginegen: …`, on the output or in
    Meson's log, where run_command's stderr goes), else CMake's first error message; "" if neither is there."""
    texts = [log.read_text(errors="replace") if log.is_file() else ""]
    meson_log = builddir / "meson-logs" / "meson-log.txt"
    generator_failed = any("ERROR:" in line and "enginegen" in line for line in texts[0].splitlines())
    if generator_failed and meson_log.is_file():
        texts.append(meson_log.read_text(errors="replace"))
    for text in texts:
        said = [line.strip() for line in text.splitlines() if line.strip().startswith("enginegen:")]
        if said:
            return said[-1]  # earlier ones are notes (a variant dropped); the generator stops on its error
    found = CMAKE_ERROR.search(texts[0])
    return found.group(2).strip() if found else ""


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
