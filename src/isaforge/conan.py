"""Drive Conan for the isaforge package: pick the host profile of a target x compiler (toolchains/conan/), make sure
the build profile exists (`conan profile detect`), check that the profile's compiler is installed, and assemble the
`conan create` command line with the confs and options the recipe understands (recipes/isaforge/conanfile.py)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from isaforge import process
from isaforge.catalogue import REFERENCE, load
from isaforge.errors import IsaforgeError
from isaforge.source_tree import source_root
from isaforge.toolchains.conan_profiles import CONAN_ARCH
from isaforge.toolchains.model import toolchain, toolchains
from isaforge.toolchains.probing import INSTALL_SCRIPT, probe

RECIPE_DIR = PurePosixPath("recipes/isaforge")
PACKAGE = "isaforge"
QEMU_CPU_CONF = "user.isaforge:qemu_cpu"
BUILD_PROFILE = "default"
# Options of the recipe besides one boolean per catalogue variant.
FIXED_OPTIONS = ("shared", "fPIC", "inst_encode")
CREATE_TIMEOUT = 7200.0  # `conan create` builds and tests every variant under QEMU
CONAN_INSTALL_HINT = "pip install 'conan>=2' (it is in isaforge's `test` extra)"


def tool_env() -> dict[str, str]:
    """The environment for Conan: the directory of this interpreter (a venv with conan, meson and ninja) first on
    PATH, since the recipe takes Meson and Ninja from the environment."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def conan_executable() -> str:
    exe = shutil.which("conan", path=tool_env()["PATH"])
    if exe is None:
        raise IsaforgeError(f"conan not found; {CONAN_INSTALL_HINT}")
    return exe


def _conan(*args: str) -> process.Completed:
    return process.run([conan_executable(), *args], check=False, env=tool_env(), timeout=120)


def ensure_build_profile() -> str:
    """The build profile (`default` of CONAN_HOME), detected with `conan profile detect` when there is none yet."""
    if _conan("profile", "path", BUILD_PROFILE).returncode != 0:
        process.run([conan_executable(), "profile", "detect"], what="`conan profile detect`", env=tool_env())
    return BUILD_PROFILE


def option_names(cat_arch: str | None = None) -> list[str]:
    """The recipe's options: shared, fPIC, inst_encode and one per variant (of `cat_arch` when given)."""
    cat = load()
    variants = [
        v.name for v in cat.variants.values() if v.name != REFERENCE and (cat_arch is None or cat_arch in v.arches)
    ]
    return [*FIXED_OPTIONS, *variants]


def parse_option(text: str) -> tuple[str, str]:
    """`name=value` (or `isaforge/*:name=value`) -> (name, value); unknown names are refused here, since Conan
    ignores an option a pattern names but the package does not have. Values are Conan's to check."""
    name, sep, value = text.removeprefix(f"{PACKAGE}/*:").partition("=")
    if not sep or not name:
        raise IsaforgeError(f"option {text!r}: write NAME=VALUE, e.g. i8mm=False")
    known = option_names()
    if name not in known:
        raise IsaforgeError(f"unknown option {name!r}; choose one of: {', '.join(known)}")
    return name, value


def arch_of_conan(conan_arch: str) -> str | None:
    """The catalogue arch of a Conan arch (armv8 -> aarch64), None for any other."""
    return next((cat for cat, conan in CONAN_ARCH.items() if conan == conan_arch), None)


@dataclass(frozen=True)
class ProfileFacts:
    """What `conan profile show` says about a host profile that the command checks."""

    arch: str
    compiler: str
    c_compiler: str


def profile_facts(profile: str) -> ProfileFacts:
    proc = _conan("profile", "show", "-pr:h", profile, "-pr:b", BUILD_PROFILE, "--format=json")
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.strip().splitlines() if line.startswith("ERROR")] or ["(no output)"]
        raise IsaforgeError(f"host profile {profile}: {lines[0].removeprefix('ERROR: ')}")
    host = json.loads(proc.stdout)["host"]
    settings, conf = host["settings"], host["conf"]
    compiler = settings.get("compiler", "")
    c = conf.get("tools.build:compiler_executables", {}).get("c", "")
    if not c:
        env = dict(line.split("=", 1) for line in host.get("build_env", "").splitlines() if "=" in line)
        c = env.get("CC", "").split(" ")[0] or {"gcc": "gcc", "clang": "clang"}.get(compiler, "")
    return ProfileFacts(settings.get("arch", ""), compiler, c)


def check_profile_compiler(profile: str, facts: ProfileFacts) -> None:
    """One line naming the compiler and how to install it, when the profile's C compiler is not on PATH."""
    if not facts.c_compiler or shutil.which(facts.c_compiler, path=tool_env()["PATH"]):
        return
    match = next((tc for tc in toolchains() if tc.c[0] == facts.c_compiler), None)
    if match is not None:
        packages = match.compiler.debian_packages or match.arch.debian_packages
        how = f"apt-get install {' '.join(packages)} (or run {INSTALL_SCRIPT})"
    else:
        how = f"install it, or use an isaforge profile ({INSTALL_SCRIPT} installs the cross GCCs and clang)"
    raise IsaforgeError(f"host profile {profile} names C compiler {facts.c_compiler}, which is not installed; {how}")


@dataclass
class CreateRequest:
    target: str | None = None
    compiler: str | None = None
    cpu: str | None = None
    profile: str | None = None
    options: Sequence[str] = ()
    skip_tests: bool = False
    jobs: int | None = None
    extra: Sequence[str] = field(default_factory=list)


def create_command(req: CreateRequest, root: Path | None = None) -> list[str]:
    """The `conan create` command line for `req`; IsaforgeError (one line) for bad input."""
    root = root or source_root()
    cat = load()
    options = [parse_option(o) for o in req.options]
    qemu_cpu: str | None = None
    if req.target is not None:
        if req.profile is not None:
            raise IsaforgeError("give --target/--compiler or --profile, not both")
        tc = toolchain(req.target, req.compiler or "gcc", cat)
        if req.cpu:
            cat.cpu_features(tc.arch.name, req.cpu)  # unknown model: the valid ones, one line
            qemu_cpu = req.cpu
        reasons = [r for r in probe(tc).reasons if not (req.skip_tests and tc.arch.qemu in r)]
        if reasons:
            raise IsaforgeError(f"{tc.name} cannot build here: {'; '.join(reasons)}")
        host = str(root / tc.conan_profile)
    else:
        if req.compiler is not None:
            raise IsaforgeError(
                "--compiler needs --target (without one, the host build uses the detected default profile)"
            )
        host = req.profile or BUILD_PROFILE
        ensure_build_profile()
        facts = profile_facts(host)
        check_profile_compiler(host, facts)
        if req.cpu:
            arch = arch_of_conan(facts.arch)
            if arch is None:
                raise IsaforgeError(
                    f"--cpu chooses the QEMU model of a cross build; host profile {host} has arch={facts.arch}, "
                    f"which runs natively (cross arches: {', '.join(CONAN_ARCH.values())})"
                )
            cat.cpu_features(arch, req.cpu)
            qemu_cpu = req.cpu
    ensure_build_profile()
    cmd = [conan_executable(), "create", str(root / RECIPE_DIR), "-pr:h", host, "-pr:b", BUILD_PROFILE]
    if qemu_cpu:
        cmd += ["-c", f"{QEMU_CPU_CONF}={qemu_cpu}"]
    if req.skip_tests:
        cmd += ["-c", "tools.build:skip_test=True", "--test-folder="]  # neither Meson's tests nor test_package
    if req.jobs:
        cmd += ["-c", f"tools.build:jobs={req.jobs}"]
    for name, value in options:
        cmd += ["-o", f"{PACKAGE}/*:{name}={value}"]
    return [*cmd, *req.extra]


def run(cmd: Sequence[str]) -> int:
    """Run Conan with output streaming through; its exit code (6: the recipe's validate() refused the profile)."""
    return process.run(cmd, check=False, env=tool_env(), capture=False, timeout=CREATE_TIMEOUT).returncode
