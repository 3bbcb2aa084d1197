"""Configure and build libisaforge with Meson for one toolchain (or the host), into build/<triple>-<compiler> of the
checkout, or, for an installed isaforge, into the user's cache (build_root)."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from isaforge import __version__, process
from isaforge.catalogue import HOST_ARCH, Arch, load
from isaforge.errors import IsaforgeError
from isaforge.source_tree import packaged_source, source_root
from isaforge.toolchains.model import Toolchain, toolchain
from isaforge.toolchains.probing import probe

BUILD_ROOT_ENV = "ISAFORGE_BUILD_ROOT"


def build_root(source: Path) -> Path:
    """Where the builds of a source tree go: build/ of a checkout (or of a copy of one). The tree an installed wheel
    carries sits in site-packages, which may be read-only and is wiped by the next install: its builds go under
    $ISAFORGE_BUILD_ROOT, else the user's cache, one folder per version so an upgrade never reuses the old tree's."""
    if source.resolve() != packaged_source():
        return source / "build"
    chosen = os.environ.get(BUILD_ROOT_ENV)
    if chosen:
        return Path(chosen).expanduser().absolute()
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    cache = Path(xdg) if Path(xdg).is_absolute() else Path.home() / ".cache"  # XDG: a relative value is ignored
    return cache / "isaforge" / __version__


@dataclass(frozen=True)
class Build:
    """One Meson build directory of the library; `toolchain` is None for the native host build."""

    toolchain: Toolchain | None
    options: tuple[tuple[str, str], ...] = ()
    tag: str = ""
    root: Path = field(default_factory=source_root)
    targets: tuple[str, ...] = ()  # the Ninja targets to compile (with what they need); none: everything

    @property
    def name(self) -> str:
        base = self.toolchain.name if self.toolchain else "host"
        return f"{base}-{self.tag}" if self.tag else base

    @property
    def arch_name(self) -> str:
        return self.toolchain.arch.name if self.toolchain else HOST_ARCH

    @property
    def arch(self) -> Arch:
        if self.toolchain is None:
            raise IsaforgeError("the host build runs natively, not under QEMU")
        return self.toolchain.arch

    @property
    def directory(self) -> Path:
        return build_root(self.root) / self.name

    def program(self, relpath: str) -> Path:
        return self.directory / relpath


def build_for(
    target: str, compiler: str, options: dict[str, str] | None = None, tag: str = "", *, targets: tuple[str, ...] = ()
) -> Build:
    tc = None if target == HOST_ARCH else toolchain(target, compiler)
    return Build(tc, tuple(sorted((options or {}).items())), tag, targets=targets)


def all_builds() -> list[Build]:
    """One build per toolchain of the catalogue."""
    cat = load()
    return [build_for(arch.triple, comp) for arch in cat.arches.values() for comp in cat.compilers]


BUILD_TIMEOUT = 3600.0  # a cold build of every variant under a slow, shared machine


def _tool_env() -> dict[str, str]:
    # meson and ninja live next to this interpreter in the venv; make sure the child finds them.
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _meson() -> list[str]:
    exe = shutil.which("meson", path=_tool_env()["PATH"])
    if exe is None:
        raise IsaforgeError("meson not found; run ci/install-toolchains.sh (it installs meson into .venv)")
    return [exe]


def _run_logged(cmd: list[str], what: str, log: Path) -> None:
    process.run(cmd, what=what, env=_tool_env(), log=log, timeout=BUILD_TIMEOUT)


def kernel_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in (root / "kernels").rglob("gemm_*.[cS]"))


@contextlib.contextmanager
def _locked(build: Build) -> Iterator[None]:
    """One configure, compile or install of a build directory at a time, across processes: parallel test workers
    (pytest-xdist), `isaforge test-qemu` subprocesses and threads ask for the same builds at once. The second caller
    waits, then finds the build up to date. The lock file sits beside the directory, which Meson may wipe."""
    lock = build.directory.with_name(f"{build.directory.name}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _check_usable(build: Build) -> None:
    if build.toolchain is not None:
        found = probe(build.toolchain)
        if not found.usable:
            raise IsaforgeError(f"{build.toolchain.name} is unusable: {'; '.join(found.reasons)}")


def ensure_built(build: Build) -> Path:
    """Configure (first time, or when the options changed) and compile; returns the build directory."""
    _check_usable(build)
    with _locked(build):
        return _build(build)


def _build(build: Build) -> Path:
    # Configured for ensure_installed's prefix from the start (a moved checkout is configured again): setting it only
    # at install would make the next compile run the whole Meson configure again, for install paths alone.
    options = [*_install_options(build), *(f"-D{k}={v}" for k, v in build.options)]
    stamp = build.directory / ".isaforge-options"
    log = build.directory.with_name(f"{build.directory.name}.log")  # outside the directory Meson may wipe
    # Meson lists kernel files at configure time: a new or removed kernel needs a reconfigure.
    wanted = "\n".join([*options, *kernel_files(build.root)])
    configured = (build.directory / "build.ninja").is_file() and stamp.is_file() and stamp.read_text() == wanted
    if not configured:
        fresh = not (build.directory / "build.ninja").exists()
        # The generated kernel and packer tables depend on which kernel files exist, which Ninja cannot see: drop
        # them so that the compile after this reconfigure writes them again.
        for stale in [*build.directory.glob("isf_catalogue.c"), *build.directory.glob("isf_pack_*.c")]:
            stale.unlink()
        setup = [*_meson(), "setup", *([] if fresh else ["--reconfigure"])]
        if build.toolchain is not None:
            setup += ["--cross-file", str(build.root / build.toolchain.cross_file)]
        _run_logged([*setup, *options, str(build.directory), str(build.root)], f"meson setup of {build.name}", log)
        stamp.write_text(wanted)
    _run_logged([*_meson(), "compile", "-C", str(build.directory), *build.targets], f"build of {build.name}", log)
    return build.directory


def install_prefix(build: Build) -> Path:
    """Where ensure_installed puts the library: next to its build directory (build/<name>-install)."""
    return build.directory.with_name(f"{build.directory.name}-install")


def _install_options(build: Build) -> list[str]:
    # libdir=lib: the same layout for the host build (whose default is Debian's lib/<multiarch>) and cross builds.
    return [f"-Dprefix={install_prefix(build)}", "-Dlibdir=lib"]


def _install_state(directory: Path) -> str | None:
    """What an install of `directory` would write, as one digest: Meson's list of installed files and the size and
    modification time of each file it copies (the built library, headers, the generator's sources). None when a file
    of the list is missing from the prefix: the install must be made again."""
    listing = directory / "meson-info" / "intro-installed.json"
    installed = json.loads(listing.read_text())
    if not all(os.path.lexists(destination) for destination in installed.values()):
        return None
    digest = hashlib.sha256(listing.read_bytes())
    for source in installed:
        path = Path(source) if Path(source).is_absolute() else directory / source
        stat = path.stat() if path.exists() else None
        digest.update(f"{source}\0{stat and (stat.st_size, stat.st_mtime_ns)}\n".encode())
    return digest.hexdigest()


def ensure_installed(build: Build) -> Path:
    """Build, then install into install_prefix(build), emptied first; returns the prefix. The prefix is the real
    install prefix, not a --destdir staging area, because the pkg-config file and the CMake package files installed
    there name it: an engine finds libisaforge with `-Dpkg_config_path=<prefix>/lib/pkgconfig` (Meson) or
    `-DCMAKE_PREFIX_PATH=<prefix>` (CMake) and nothing else. An install already up to date is left as it is, so that
    a caller can build against the prefix while another asks for it again."""
    _check_usable(build)
    with _locked(build):
        directory = _build(build)
        prefix = install_prefix(build)
        log = directory.with_name(f"{directory.name}-install.log")
        # Outside the prefix: nothing but the install lands in it.
        stamp = prefix.with_name(f"{prefix.name}.state")
        state = _install_state(directory)
        if state is not None and stamp.is_file() and stamp.read_text() == state:
            return prefix
        stamp.unlink(missing_ok=True)
        shutil.rmtree(prefix, ignore_errors=True)
        _run_logged([*_meson(), "install", "-C", str(directory), "--quiet"], f"install of {build.name}", log)
        stamp.write_text(_install_state(directory) or "")
        return prefix
