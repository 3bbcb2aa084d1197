"""isaforge as a new user gets it: a wheel of this checkout installed into a fresh virtual environment outside the
tree, run from a folder outside the tree with an environment that cannot reach the checkout.

`installed_isaforge` (session-scoped, exposed by tests/packaging/conftest.py) returns the venv's bin directory;
`run_installed(bin_dir, "isaforge", …)` runs a program of that venv the way a user's shell would, its default build
cache in a temporary folder (cache_of).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# What a wheel is built from: the working tree (uncommitted changes included), without builds, venvs or caches.
NOT_SOURCE = shutil.ignore_patterns(
    "build", "build-*", ".venv", ".git", "__pycache__", "*.egg-info", ".*_cache", "examples", "dist"
)
PIP_TIMEOUT = 900  # a cold pip cache downloads setuptools (build isolation), meson and ninja
RUN_TIMEOUT = 1800  # one cross build of every variant on a shared machine
# The wheel, its venv and the library the installed isaforge builds in its own cache are made once per process: under
# pytest-xdist these tests share one worker. Each builds a wheel or a library of its own: not in make check.
MARKS = [pytest.mark.xdist_group("wheel"), pytest.mark.e2e]


def cache_of(bin_dir: Path) -> Path:
    """The XDG cache the installed isaforge runs with: its default build root (<cache>/isaforge/<version>) lands
    here, not in the user's ~/.cache."""
    return bin_dir.parent.parent / "cache"


def installed_env(bin_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a user who installed the wheel: that venv first on PATH; nothing that leads back to the
    checkout (PYTHONPATH, this session's venv) or changes what isaforge does (ISAFORGE_*, QEMU_*, CONAN_*)."""
    ours = Path(sys.executable).parent
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p) != ours]
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
        and not k.startswith(("ISAFORGE_", "QEMU_", "CONAN_", "PYTEST_"))
    }
    env.update(PATH=os.pathsep.join([str(bin_dir), *path]), VIRTUAL_ENV=str(bin_dir.parent))
    env.update(XDG_CACHE_HOME=str(cache_of(bin_dir)))
    env.update(extra)
    return env


def run_installed(
    bin_dir: Path, program: str, *args: str, cwd: Path, timeout: float = RUN_TIMEOUT, **env: str
) -> subprocess.CompletedProcess[str]:
    """`program args…` of the installed venv, from cwd (a folder outside the checkout)."""
    return subprocess.run(
        [str(bin_dir / program), *args],
        cwd=cwd,
        env=installed_env(bin_dir, **env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def pip_install(bin_dir: Path, *what: str) -> None:
    """pip install into the installed venv (dependencies from the package index or pip's cache)."""
    env = installed_env(bin_dir)
    del env["XDG_CACHE_HOME"]  # pip keeps the user's own cache (a warm one spares the index)
    if "XDG_CACHE_HOME" in os.environ:
        env["XDG_CACHE_HOME"] = os.environ["XDG_CACHE_HOME"]
    cmd = [str(bin_dir / "python"), "-m", "pip", "install", "-q", *what]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=PIP_TIMEOUT, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def build_wheel(out: Path, scratch: Path) -> Path:
    """The wheel of the working tree, built from a copy so the checkout gets no setuptools build/ or egg-info.
    Build isolation on: pyproject's PEP 639 licence needs a newer setuptools than a venv brings."""
    tree = scratch / "isaforge-src"
    shutil.copytree(REPO, tree, ignore=NOT_SOURCE, symlinks=True)
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(tree)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = out.glob("isaforge-*.whl")
    return wheel


@pytest.fixture(scope="session")
def isaforge_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this checkout (built once per session)."""
    return build_wheel(tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("wheel-src"))


@pytest.fixture(scope="session")
def installed_isaforge(tmp_path_factory: pytest.TempPathFactory, isaforge_wheel: Path) -> Path:
    """The bin directory of a fresh venv (outside the checkout) with only the wheel and its dependencies."""
    venv = tmp_path_factory.mktemp("installed") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=PIP_TIMEOUT)
    bin_dir = venv / "bin"
    pip_install(bin_dir, str(isaforge_wheel))
    return bin_dir
