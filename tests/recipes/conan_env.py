"""Real Conan for the tests: one temporary CONAN_HOME per test session (build profile from `conan profile detect`,
no remote), created on first use; helpers to create the isaforge package and read what it built, and the session's
one armv8-clang package (cli_create), which several tests consume."""

from __future__ import annotations

import atexit
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from isaforge import source_tree
from isaforge.catalogue import load
from isaforge.toolchains import probing
from isaforge.toolchains.model import Toolchain, toolchains

REPO = Path(source_tree.__file__).resolve().parents[2]
RECIPE = REPO / "recipes" / "isaforge"
VERSION = (REPO / "VERSION").read_text().strip()
REF = f"isaforge/{VERSION}"
OPS = tuple(load().ops)
KERNEL_LINE = re.compile(r"^isaforge kernel (\w+) = (\S+)$", re.MULTILINE)
JOBS = "tools.build:jobs=2"
# Every test module that runs Conan: its packages are built in the session's CONAN_HOME, one per process, so under
# pytest-xdist these tests share one worker (and so one home and the packages built there); each builds or creates a
# package of its own, so none is in make check.
GROUP = pytest.mark.xdist_group("conan")
MARKS = [GROUP, pytest.mark.e2e]


@dataclass(frozen=True)
class ConanHome:
    path: Path
    env: dict[str, str]

    def run(self, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
        """`conan ARGS` in this home. Conan logs (and the output of the programs recipes run) go to stderr; stdout
        has only what --format asks for."""
        return subprocess.run(["conan", *args], cwd=cwd, env=self.env, capture_output=True, text=True, check=False)


def tool_path() -> str:
    """PATH with this interpreter's directory (the venv: conan, meson, ninja) first."""
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


@functools.cache
def _make_home() -> ConanHome:
    path = Path(tempfile.mkdtemp(prefix="isaforge-conan-home-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QEMU_", "ISAFORGE_", "CONAN_"))}
    env.update(CONAN_HOME=str(path), PATH=tool_path())
    home = ConanHome(path, env)
    for args in (("profile", "detect"), ("remote", "disable", "*")):
        proc = home.run(*args)
        assert proc.returncode == 0, proc.stderr
    return home


def home() -> ConanHome:
    """The session's CONAN_HOME; skips when conan (or meson) is not installed."""
    for tool, hint in (("conan", "pip install 'conan>=2'"), ("meson", "pip install meson ninja")):
        if shutil.which(tool, path=tool_path()) is None:
            pytest.skip(f"{tool} not found: {hint}")
    return _make_home()


@functools.cache
def _exported() -> ConanHome:
    conan = _make_home()
    proc = conan.run("export", str(RECIPE))
    assert proc.returncode == 0, proc.stderr
    return conan


def exported() -> ConanHome:
    """The session's CONAN_HOME with the recipe exported, so consumers can build the package with --build=missing
    whatever ran before them."""
    home()
    return _exported()


def isaforge_cli(
    *args: str, conan_home: Path | None = None, path: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m isaforge ARGS` with this Python, CONAN_HOME set (the session's by default)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "QEMU_CPU", "CONAN_HOME")}
    env["PYTHONPATH"] = str(REPO / "src")
    env["CONAN_HOME"] = str(conan_home or home().path)
    env["PATH"] = tool_path() if path is None else path
    return subprocess.run(
        [sys.executable, "-m", "isaforge", *args], cwd=REPO, env=env, capture_output=True, text=True, check=False
    )


# The session's armv8-clang package: made once, by the CLI's create (test_package under QEMU on CLI_CPU), whose output
# tests/commands/test_conan.py checks. The engine's create, the Meson consumer and the
# no-exe_wrapper refusal consume it, so each cross build of libisaforge for armv8-clang happens once per session,
# whichever of these tests runs first or alone.
CLI_TOOLCHAIN = "aarch64-linux-gnu-clang"
CLI_CPU = "neoverse-n2"


@functools.cache
def _cli_create() -> subprocess.CompletedProcess[str]:
    scratch = Path(tempfile.mkdtemp(prefix="isaforge-cli-create-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    test_folder = copy_tree(RECIPE / "test_package", scratch / "test_package")
    target, compiler = CLI_TOOLCHAIN.rsplit("-", 1)
    # Without the library's Meson suite (tools.build:skip_test): test_recipe.py's cross create runs it under QEMU
    # on the profile's model, and pytest runs its programs for this toolchain on max; test_package still runs here.
    return isaforge_cli(
        "conan", "create", "--target", target, "--compiler", compiler, "--cpu", CLI_CPU, "-j", "2",
        "--", "-tf", str(test_folder), "-c", "tools.build:skip_test=True",
    )  # fmt: skip


def cli_create() -> subprocess.CompletedProcess[str]:
    """`isaforge conan create --target aarch64-linux-gnu --compiler clang --cpu neoverse-n2` with test_package, run
    once per session in the session's CONAN_HOME; skips when armv8-clang (or conan) is unusable here."""
    require(CLI_TOOLCHAIN)
    home()
    return _cli_create()


def with_package(tc: Toolchain) -> ConanHome:
    """The session's CONAN_HOME with the recipe exported and, for armv8-clang, its package made by cli_create(); the
    consumer's --build=missing builds any other toolchain's package."""
    conan = exported()
    if tc.name == CLI_TOOLCHAIN:
        made = cli_create()
        assert made.returncode == 0, f"the session's armv8-clang create failed:\n{made.stderr[-6000:]}"
    return conan


def require(name: str) -> Toolchain:
    """The toolchain `<triple>-<compiler>`, skipping when this machine cannot use it."""
    tc = next(t for t in toolchains() if t.name == name)
    probe = probing.probe(tc)
    if not probe.usable:
        pytest.skip(f"{tc.name} unusable here: {'; '.join(probe.reasons)}")
    return tc


def profile(tc: Toolchain) -> str:
    return str(REPO / tc.conan_profile)


def cross_args(tc: Toolchain) -> list[str]:
    """Host profile of `tc`, the detected build profile, the package built if missing, two jobs."""
    return ["-pr:h", profile(tc), "-pr:b", "default", "--build=missing", "-c", JOBS]


def copy_tree(src: Path, dst: Path) -> Path:
    """A copy of a consumer folder, so that its build folders land in the test's tmp_path, not in the checkout."""
    shutil.copytree(
        src, dst, symlinks=True, ignore=shutil.ignore_patterns("build", "build-*", "CMakeUserPresets.json", ".wraplock")
    )
    return dst


@dataclass(frozen=True)
class Created:
    proc: subprocess.CompletedProcess[str]
    package_folder: Path | None
    build_folder: Path | None = None

    def compile_commands(self) -> list[dict]:
        """The Meson build's compile_commands.json, from the package's build folder."""
        assert self.build_folder is not None
        found = sorted(self.build_folder.rglob("compile_commands.json"))
        assert found, f"no compile_commands.json under {self.build_folder}"
        return json.loads(found[0].read_text())

    @property
    def output(self) -> str:
        return self.proc.stderr

    @property
    def kernels(self) -> dict[str, str]:
        """The kernels test_package printed."""
        return dict(KERNEL_LINE.findall(self.output))

    @property
    def variants(self) -> list[str]:
        assert self.package_folder is not None
        return list(json.loads((self.package_folder / "res" / "isaforge" / "variants.json").read_text()))


def create(conan: ConanHome, host_profile: str, tmp_path: Path, *args: str) -> Created:
    """`conan create` of the recipe, with test_package copied into tmp_path."""
    test_folder = copy_tree(RECIPE / "test_package", tmp_path / "test_package")
    proc = conan.run(
        "create",
        str(RECIPE),
        "-pr:h",
        host_profile,
        "-pr:b",
        "default",
        "-tf",
        str(test_folder),
        "-c",
        JOBS,
        "--format=json",
        *args,
    )
    package_folder = build_folder = None
    if proc.returncode == 0:
        graph = json.loads(proc.stdout)
        for node in graph["graph"]["nodes"].values():
            if node.get("ref", "").startswith(REF) and node.get("package_folder"):
                package_folder = Path(node["package_folder"])
                build_folder = Path(node["build_folder"]) if node.get("build_folder") else None
    return Created(proc, package_folder, build_folder)


def expected_kernels(arch: str, variants: list[str], cpu: str) -> dict[str, str]:
    """What dispatch must choose on `cpu` among the package's variants, from the catalogue."""
    cat = load()
    active = set(cat.cpu_features(arch, cpu)) if arch in cat.cpus else set()
    out = {}
    for op in OPS:
        best = cat.best_kernel(REPO, arch, ["ref", *variants], active, op)
        out[op] = best or "(none)"
    return out


def ukernel_symbols(library: Path) -> list[str]:
    """The isf_ukernel_* symbols defined in a library (llvm-nm reads every arch)."""
    nm = shutil.which("llvm-nm-19") or shutil.which("nm")
    assert nm, "llvm-nm-19 or nm needed"
    proc = subprocess.run([nm, "--defined-only", str(library)], capture_output=True, text=True, check=True)
    return sorted({line.split()[-1] for line in proc.stdout.splitlines() if "isf_ukernel_" in line})
