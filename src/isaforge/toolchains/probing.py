"""Whether a toolchain works on this machine: compiler, binutils/linker, GCC runtime, sysroot and QEMU, and for each
that does not, what to install."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from isaforge import process
from isaforge.catalogue import Arch
from isaforge.errors import IsaforgeError
from isaforge.toolchains.model import Toolchain

QEMU_MIN_MAJOR = 10
INSTALL_SCRIPT = "ci/install-toolchains.sh"
_QEMU_VERSION = re.compile(r"version (\d+)\.(\d+)(?:\.(\d+))?")
_SUBPROCESS_TIMEOUT = 30


@dataclass(frozen=True)
class Probe:
    """Whether a toolchain works on this machine, and if not, every reason why with what to install."""

    toolchain: Toolchain
    reasons: tuple[str, ...]

    @property
    def usable(self) -> bool:
        return not self.reasons

    @property
    def status(self) -> str:
        return "usable" if self.usable else "unusable"


def parse_qemu_version(text: str) -> tuple[int, int, int] | None:
    """(major, minor, micro) from `qemu-<arch> --version` output, or None if it has no version."""
    m = _QEMU_VERSION.search(text)
    return (int(m[1]), int(m[2]), int(m[3] or 0)) if m else None


def _install_hint(packages: tuple[str, ...] | list[str]) -> str:
    if not packages:
        return f"run {INSTALL_SCRIPT}"
    return f"apt-get install {' '.join(packages)} (or run {INSTALL_SCRIPT})"


def _run(cmd: list[str]) -> process.Completed | None:
    """A probe's run; None when the tool cannot run at all (the probe then reports it missing or broken)."""
    try:
        return process.run(cmd, check=False, timeout=_SUBPROCESS_TIMEOUT)
    except IsaforgeError:
        return None


def _probe_qemu(arch: Arch, path: str | None) -> list[str]:
    hint = f"install qemu-user >= {QEMU_MIN_MAJOR} (bookworm-backports): run {INSTALL_SCRIPT}"
    qemu = shutil.which(arch.qemu, path=path)
    if qemu is None:
        return [f"{arch.qemu} not found; {hint}"]
    proc = _run([qemu, "--version"])
    version = parse_qemu_version(proc.stdout) if proc is not None and proc.returncode == 0 else None
    if version is None:
        return [f"`{arch.qemu} --version` reports no version; {hint}"]
    if version[0] < QEMU_MIN_MAJOR:
        return [f"{arch.qemu} is version {'.'.join(map(str, version))}, older than {QEMU_MIN_MAJOR}; {hint}"]
    return []


def _probe_compiler(tc: Toolchain, path: str | None) -> list[str]:
    # A compiler with no packages of its own (GCC) is brought by the arch's cross packages.
    own = tc.compiler.debian_packages or tc.arch.debian_packages
    cc = shutil.which(tc.c[0], path=path)
    if cc is None:
        return [f"{tc.c[0]} not found; {_install_hint(own)}"]
    reasons = []
    tools = [tc.ar, tc.strip, *([tc.linker] if tc.linker else [])]
    reasons += [f"{tool} not found; {_install_hint(own)}" for tool in tools if shutil.which(tool, path=path) is None]
    # Both compilers link with the GCC cross runtime (crtbegin.o, libgcc) of the arch; clang without it cannot
    # link, and answers with a bare "libgcc.a".
    proc = _run([cc, *tc.c[1:], "-print-libgcc-file-name"])
    libgcc = proc.stdout.strip() if proc is not None and proc.returncode == 0 else ""
    if not libgcc or not Path(libgcc).is_absolute() or not Path(libgcc).is_file():
        reasons.append(
            f"{tc.c[0]} finds no GCC runtime (libgcc) for {tc.triple}; {_install_hint(tc.arch.debian_packages)}"
        )
    return reasons


def probe(tc: Toolchain, path: str | None = None) -> Probe:
    """Check that `tc` can build and run tests here: compiler, binutils/linker, GCC runtime, sysroot and QEMU.

    `path` replaces $PATH for finding the tools (None: the process's $PATH)."""
    reasons = _probe_compiler(tc, path)
    if not Path(tc.arch.sysroot).is_dir():
        reasons.append(f"sysroot {tc.arch.sysroot} missing; {_install_hint(tc.arch.debian_packages)}")
    reasons += _probe_qemu(tc.arch, path)
    return Probe(tc, tuple(reasons))
