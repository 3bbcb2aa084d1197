"""Conan host profiles (toolchains/conan/<triple>-<compiler>) and the Meson machine files they include for their QEMU
exe_wrapper (toolchains/conan/<triple>-qemu.ini): deterministic, a function of the catalogue only."""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

from isaforge.catalogue import Arch, Catalogue, load
from isaforge.errors import IsaforgeError
from isaforge.toolchains.generated import CROSS_HEADER, stale_files
from isaforge.toolchains.meson_files import meson_array
from isaforge.toolchains.model import CONAN_DIR, Toolchain, cxx_command, qemu_machine_file, toolchains

# Conan's name (settings.yml) of each catalogue arch, and the version of each compiler of the catalogue as Conan
# settings spell it (the Debian 12 cross GCC; the catalogue's clang is clang-19).
CONAN_ARCH = {"aarch64": "armv8", "arm": "armv7hf"}
CONAN_COMPILER_VERSION = {"gcc": "12", "clang": "19"}
DEFAULT_QEMU_CPU = "max"


def conan_arch(arch: Arch) -> str:
    if arch.name not in CONAN_ARCH:
        raise IsaforgeError(f"arch {arch.name} has no Conan name; known: {', '.join(CONAN_ARCH)}")
    return CONAN_ARCH[arch.name]


def render_qemu_machine_file(arch: Arch) -> str:
    """The Meson machine file Conan's MesonToolchain appends to its cross file: only the exe_wrapper."""
    wrapper = [arch.qemu, "-L", arch.sysroot]
    lines = [
        CROSS_HEADER,
        f"# Appended by the Conan profiles for {arch.triple} (tools.meson.mesontoolchain:extra_machine_files) to",
        "# the cross file of MesonToolchain, so that `meson test` runs the cross-built programs under QEMU user mode.",
        "# The CPU model comes from QEMU_CPU (the isaforge recipe sets it from the conf user.isaforge:qemu_cpu).",
        "",
        "[binaries]",
        f"exe_wrapper = {meson_array(wrapper)}",
    ]
    return "\n".join(lines) + "\n"


def _json_list(values: list[str] | tuple[str, ...]) -> str:
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"


def render_conan_profile(tc: Toolchain, machine_file_dir: Path | None = None) -> str:
    """The Conan host profile of `tc`: deterministic, a function of the catalogue (and `machine_file_dir`) only.

    The profile includes the QEMU machine file of its arch: from the profile's own folder (`{{ profile_dir }}`, where
    `toolchain write` puts it) by default, else by its absolute path in `machine_file_dir`, so that a profile printed
    by `toolchain show --conan` works wherever it is saved.

    The compiler executables are bare commands (CMake and Meson both take them from tools.build:compiler_executables);
    the rest of the catalogue's compiler command (clang's --target) and its link arguments go into the flags, so
    every build system Conan drives gets them. [buildenv] CC/CXX are whole commands, for plain Make consumers. The
    C++ settings (libstdc++11, gnu17) are there for C++ engines; the isaforge recipe itself is C only."""
    c, cxx = tc.c, cxx_command(tc)
    arch = conan_arch(tc.arch)
    machine_file = tc.conan_machine_file.name
    if machine_file_dir is None:
        included, where = f"{{{{ profile_dir }}}}/{machine_file}", f"{machine_file} next to this file"
    else:
        included = where = str(machine_file_dir.resolve() / machine_file)
    lines = [
        CROSS_HEADER,
        f"# Conan host profile: {tc.triple} with {tc.compiler.name}. Use it with a build profile for this machine:",
        f"#   conan create recipes/isaforge -pr:h toolchains/conan/{tc.name} -pr:b default",
        f"# Tests run under {' '.join([tc.arch.qemu, '-L', tc.arch.sysroot])} ({where});",
        "# choose the emulated CPU model with -c user.isaforge:qemu_cpu=<model>.",
        "",
        "[settings]",
        "os=Linux",
        f"arch={arch}",
        f"compiler={tc.compiler.name}",
        f"compiler.version={CONAN_COMPILER_VERSION[tc.compiler.name]}",
        "compiler.libcxx=libstdc++11",
        "compiler.cppstd=gnu17",
        "build_type=Release",
        "",
        "[buildenv]",
        f"CC={' '.join(c)}",
        f"CXX={' '.join(cxx)}",
        f"AR={tc.ar}",
        f"STRIP={tc.strip}",
        "",
        "[conf]",
        f'tools.build:compiler_executables={{"c": "{c[0]}", "cpp": "{cxx[0]}"}}',
    ]
    if len(c) > 1:
        lines += [f"tools.build:cflags={_json_list(c[1:])}", f"tools.build:cxxflags={_json_list(cxx[1:])}"]
    link = [*c[1:], *tc.compiler.link_args]
    if link:
        lines += [f"tools.build:exelinkflags={_json_list(link)}", f"tools.build:sharedlinkflags={_json_list(link)}"]
    lines += [
        "tools.gnu:pkg_config=pkg-config",
        f"tools.meson.mesontoolchain:extra_machine_files={json.dumps([included])}",
        f"user.isaforge:qemu_cpu={DEFAULT_QEMU_CPU}",
    ]
    return "\n".join(lines) + "\n"


def conan_files(cat: Catalogue | None = None) -> dict[PurePosixPath, str]:
    """Every Conan profile and QEMU machine file: repo-relative path -> text."""
    cat = cat or load()
    out = {tc.conan_profile: render_conan_profile(tc) for tc in toolchains(cat)}
    out.update({qemu_machine_file(arch): render_qemu_machine_file(arch) for arch in cat.arches.values()})
    return out


def stale_conan_files(root: Path, cat: Catalogue | None = None) -> list[PurePosixPath]:
    """Generated files under toolchains/conan/ that the catalogue no longer makes (repo-relative)."""
    return stale_files(root, CONAN_DIR, conan_files(cat))
