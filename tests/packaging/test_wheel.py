"""The installed package must be enough: a wheel of isaforge, installed into a fresh venv outside the checkout,
cross-builds libisaforge from the source tree it carries, with builds outside site-packages."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from isaforge import builds, source_tree
from isaforge.codegen import GENERATOR_FILES, GENERATOR_LIST
from isaforge.toolchains.model import toolchain
from isaforge.toolchains.probing import probe
from tests.packaging import wheel_env
from tests.packaging.wheel_env import REPO, cache_of, pip_install, run_installed

pytestmark = wheel_env.MARKS

VERSION = (REPO / "VERSION").read_text().strip()
TARGET, COMPILER = "aarch64-linux-gnu", "gcc"
BUILD_NAME = f"{TARGET}-{COMPILER}"
PACKED = "isaforge/_source/"
# meson.build runs these with a bare python3 (no isaforge installed): they must be in the packed tree.
MESON_SCRIPTS = ("codegen.py", GENERATOR_LIST, *GENERATOR_FILES)


def wheel_files(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as z:
        return set(z.namelist())


def wheel_metadata(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        return z.read(name).decode().splitlines()


def site_package(bin_dir: Path) -> Path:
    (package,) = bin_dir.parent.glob("lib/python*/site-packages/isaforge")
    return package


def tree(folder: Path) -> set[Path]:
    return {p.relative_to(folder) for p in folder.rglob("*")}


def needs_toolchain() -> None:
    found = probe(toolchain(TARGET, COMPILER))
    if not found.usable:
        pytest.skip(f"{BUILD_NAME} unusable here: {'; '.join(found.reasons)}")


def test_a_checkout_builds_from_itself_into_its_build_folder() -> None:
    assert source_tree.source_root() == REPO
    assert builds.build_for(TARGET, COMPILER).directory == REPO / "build" / BUILD_NAME


def test_the_wheel_carries_the_tree_meson_builds_laid_out_like_the_checkout(isaforge_wheel: Path) -> None:
    packed = {n.removeprefix(PACKED) for n in wheel_files(isaforge_wheel) if n.startswith(PACKED)}
    checkout = {
        p.relative_to(REPO).as_posix()
        for folder in ("include", "kernels", "tools", "toolchains", "recipes", "cmake")
        for p in (REPO / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert checkout <= packed, sorted(checkout - packed)
    scripts = {f"src/isaforge/{name}" for name in MESON_SCRIPTS}
    assert {"meson.build", "meson.options", "VERSION", "src/isaforge/isa.toml", *scripts} <= packed
    assert {"tests/kernels/meson.build", "tests/kernels/test_threads.c", "tests/kernels/test_util.h"} <= packed
    # Meson's C programs, not the checkout's own pytest suite, nor the CLI modules (they sit beside _source).
    assert not [n for n in packed if n.startswith("tests/") and n.endswith(".py")]
    assert "src/isaforge/cli.py" not in packed and "pyproject.toml" not in packed


def test_the_wheel_names_its_licence(isaforge_wheel: Path) -> None:
    metadata = wheel_metadata(isaforge_wheel)
    assert "License-Expression: Apache-2.0" in metadata
    if not (REPO / "LICENSE").is_file():
        pytest.skip("no LICENSE at the root of the checkout yet")
    assert "License-File: LICENSE" in metadata
    files = wheel_files(isaforge_wheel)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in files)
    assert f"{PACKED}LICENSE" in files  # the Conan recipe packages it from the tree


def test_installed_isaforge_cross_builds_and_dispatches_outside_the_tree(installed_isaforge: Path, tmp_path) -> None:
    needs_toolchain()
    package = site_package(installed_isaforge)
    where = run_installed(installed_isaforge, "python", "-c", "import isaforge; print(isaforge.__file__)", cwd=tmp_path)
    assert Path(where.stdout.strip()).parent == package, where.stdout + where.stderr
    before = tree(package)
    proc = run_installed(
        installed_isaforge, "isaforge", "build", "--target", TARGET, "--compiler", COMPILER,
        "--cpu", "cortex-a53,max", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    directory = cache_of(installed_isaforge) / "isaforge" / VERSION / BUILD_NAME
    assert lines[0] == f"{BUILD_NAME}: built in {directory}"
    assert (directory / "isaforge-info").is_file()
    rows = {line.split()[0]: line.split() for line in lines[2:]}
    assert list(rows) == ["cortex-a53", "max"]
    assert rows["cortex-a53"][1] == "neon" and all(k.endswith("_neon") for k in rows["cortex-a53"][2:])
    assert "i8mm" in rows["max"] and not rows["max"][-1].endswith("_neon"), rows["max"]
    # Nothing written into site-packages (no build folder, no bytecode the wheel did not bring) nor the cwd.
    assert tree(package) == before
    assert not list(tmp_path.iterdir())


def test_installed_builds_go_to_isaforge_build_root_else_the_users_cache(installed_isaforge: Path, tmp_path) -> None:
    show = f"from isaforge import builds; print(builds.build_for({TARGET!r}, {COMPILER!r}).directory)"
    chosen = run_installed(installed_isaforge, "python", "-c", show, cwd=tmp_path, ISAFORGE_BUILD_ROOT="mine")
    assert chosen.stdout.strip() == str(tmp_path / "mine" / BUILD_NAME), chosen.stderr
    home = run_installed(installed_isaforge, "python", "-c", show, cwd=tmp_path, HOME=str(tmp_path), XDG_CACHE_HOME="")
    assert home.stdout.strip() == str(tmp_path / ".cache" / "isaforge" / VERSION / BUILD_NAME), home.stderr


PLUGIN_TEST = f"""
import json

from isaforge import builds


def test_the_plugin_builds_and_runs_under_qemu(qemu_run):
    result = qemu_run(builds.build_for({TARGET!r}, {COMPILER!r}), "cortex-a53", "isaforge-info")
    assert result.returncode == 0
    assert json.loads(result.stdout)["kernels"]["gemm_s8"].endswith("_neon")
"""


def test_the_installed_pytest_plugin_builds_from_the_wheel(installed_isaforge: Path, tmp_path) -> None:
    needs_toolchain()
    pip_install(installed_isaforge, "pytest>=8")
    (tmp_path / "test_engine.py").write_text(PLUGIN_TEST)
    proc = run_installed(
        installed_isaforge, "python", "-m", "pytest", "-p", "isaforge", "-p", "no:cacheprovider", "-q",
        "test_engine.py", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


@pytest.mark.slow
def test_conan_create_runs_from_the_wheel(installed_isaforge: Path, tmp_path) -> None:
    needs_toolchain()
    pip_install(installed_isaforge, "conan>=2")
    package = site_package(installed_isaforge)
    before = tree(package)
    conan = {"CONAN_HOME": str(tmp_path / "conan-home")}
    for args in (("profile", "detect"), ("remote", "disable", "*")):
        proc = run_installed(installed_isaforge, "conan", *args, cwd=tmp_path, **conan)
        assert proc.returncode == 0, proc.stderr
    proc = run_installed(
        installed_isaforge, "isaforge", "conan", "create", "--target", TARGET, "--compiler", COMPILER,
        "--skip-tests", "-j", "2", cwd=tmp_path, **conan,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "isaforge/" in proc.stdout + proc.stderr
    # The recipe exported from the packed tree; it wrote nothing there.
    assert tree(package) == before


def test_installed_isaforge_proves_a_copied_engine(installed_isaforge: Path, tmp_path) -> None:
    """The whole path an engine team takes with only the wheel: test-qemu on a copy of the Meson example outside the
    tree builds libisaforge from the wheel's sources, installs it, builds the engine against it through pkg-config,
    and proves every kernel on the baseline model and max."""
    needs_toolchain()
    copy = tmp_path / "engine"
    shutil.copytree(REPO / "examples" / "engine-meson", copy, ignore=shutil.ignore_patterns("subprojects"))
    report = tmp_path / "r.json"
    proc = run_installed(
        installed_isaforge, "isaforge", "test-qemu", "--project", str(copy), "--targets", TARGET,
        "--compilers", COMPILER, "--qemu-cpu", "cortex-a53,max", "--json", str(report), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    kernels = json.loads(report.read_text())["kernels"]
    assert kernels and all(k["owner"] == "eng" for k in kernels.values())
    for key, kernel in kernels.items():
        assert kernel["ran"] and (kernel["variant"] == "ref" or kernel["refused"]), key
