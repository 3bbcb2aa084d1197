"""`isaforge matrix` end to end: list, github --check, real runs of the host cell and of one cross cell on one CPU
model, an unavailable toolchain, bad input as one line, and --docker: its errors, and the host cell in the real CI
image (slow)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from isaforge import ciimage
from isaforge.matrix.definition import load_matrix
from isaforge.matrix.results import NATIVE
from isaforge.matrix.run import DOCKER_RESULTS
from isaforge.toolchains.probing import probe
from tests.conftest import ROOT, assert_one_line_error


def isaforge(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    # Through the module until `matrix` is registered in isaforge.cli.SUBCOMMANDS; then `-m isaforge` does the same.
    code = (
        "import sys, argparse\n"
        "from isaforge.cli import main, SUBCOMMANDS\n"
        "SUBCOMMANDS.setdefault('matrix', 'matrix')\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, env=env, check=False
    )


def test_list_shows_every_cell_with_its_build_dir_and_models() -> None:
    proc = isaforge("matrix", "list")
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()[1:]}
    assert list(rows) == load_matrix(ROOT).names
    assert "build/aarch64-linux-gnu-gcc-debug-ubsan" in rows["aarch64-linux-gnu-gcc-debug-ubsan"]
    assert rows["host-gcc-release"].split()[-1] == NATIVE


def test_list_json_with_a_selection() -> None:
    proc = isaforge("matrix", "list", "--json", "--only", "target=arm build=debug-ubsan cpu=max")
    assert proc.returncode == 0, proc.stderr
    cells = json.loads(proc.stdout)
    assert [c["name"] for c in cells] == [
        "arm-linux-gnueabihf-gcc-debug-ubsan",
        "arm-linux-gnueabihf-clang-debug-ubsan",
    ]
    assert all(c["cpus"] == ["max"] and c["meson_options"]["b_sanitize"] == "undefined" for c in cells)


def test_github_check_says_the_checked_in_workflow_is_up_to_date() -> None:
    proc = isaforge("matrix", "github", "--check")
    assert proc.returncode == 0, proc.stdout
    assert "up to date" in proc.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["matrix", "run", "--only", "cpu=cortex-a9"], "unknown cpu 'cortex-a9'; choose one of: cortex-a53"),
        (["matrix", "run", "--only", "target=mips"], "unknown target 'mips'; choose one of: aarch64-linux-gnu"),
        (["matrix", "run", "--only", "nosuchcell"], "unknown cell 'nosuchcell'; choose one of: "),
        (["matrix", "run", "--only", "colour=red"], "unknown key 'colour'"),
        (["matrix", "run", "--only", "target=host cpu=max"], "selects no cell"),
        (["matrix", "list", "--only", "build=fast"], "unknown build 'fast'; choose one of: release, debug-ubsan"),
        (["matrix", "run", "-j", "0", "--only", "host-gcc-release"], "-j must be at least 1"),
    ],
)
def test_bad_input_is_one_line_and_non_zero(args: list[str], says: str) -> None:
    proc = isaforge(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and says in proc.stderr and "Traceback" not in proc.stderr


def junit_cases(path) -> list[ET.Element]:
    return list(ET.parse(path).getroot().iter("testcase"))


@pytest.mark.e2e
def test_run_of_the_host_cell(tmp_path) -> None:
    proc = isaforge("matrix", "run", "--only", "host-gcc-release", "--results-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "host-gcc-release: building"  # no terminal: one line per step
    assert any(line.split()[:2] == ["native", "pass"] for line in lines), proc.stdout
    assert "matrix ok: 1 of 1 cells passed, 0 failed, 0 unavailable" in proc.stdout
    cases = junit_cases(tmp_path / "host-gcc-release" / "junit.xml")
    assert any("test_host_build" in c.get("name", "") for c in cases)


# A whole cross build of its own (~20 s): in make ci (which runs every cell anyway), not in make test's slice; the
# host cell above keeps `matrix run` itself in the slice.
@pytest.mark.slow
def test_run_of_one_cross_cell_on_one_cpu_model(tmp_path) -> None:
    cell = load_matrix(ROOT).cell("arm-linux-gnueabihf-gcc-release")
    if not probe(cell.toolchain).usable:
        pytest.skip("arm-linux-gnueabihf-gcc is not usable here")
    proc = isaforge("matrix", "run", "--only", f"{cell.name} cpu=cortex-a7", "--results-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = proc.stdout.split("\n\n")[1].splitlines()
    assert table[1].split()[:3] == [cell.name, "(build)", "ok"]
    assert table[2].split()[:2] == ["cortex-a7", "pass"]
    assert not any(line.split()[0] in ("cortex-a15", "max") for line in table[1:])
    cases = junit_cases(tmp_path / cell.name / "junit.xml")
    on_cpu = [c.get("name", "") for c in cases if "@" in c.get("name", "")]
    assert on_cpu and all(f"{cell.name.removesuffix('-release')}@cortex-a7" in n for n in on_cpu)
    assert (tmp_path / cell.name / "pytest.log").read_text().startswith("$ ")


def test_a_cell_whose_toolchain_is_missing_is_unavailable_and_fails_the_run(tmp_path) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    env = {"PATH": str(empty), "HOME": str(tmp_path)}
    args = ["matrix", "run", "--only", "aarch64-linux-gnu-clang-release", "--results-dir", str(tmp_path / "r")]
    proc = isaforge(*args, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "aarch64-linux-gnu-clang-release: unavailable: clang-19 not found" in proc.stdout
    assert "matrix FAILED: 0 of 1 cells passed, 0 failed, 1 unavailable" in proc.stdout
    allowed = isaforge(*args, "--allow-unavailable", env=env)
    assert allowed.returncode == 1 and "no cell could run here" in allowed.stdout  # nothing ran: still a failure


# -- --docker: cells in the CI image -----------------------------------------------------------------------------------


def engine_or_skip() -> None:
    problem = ciimage.engine_problem()
    if problem is not None:
        pytest.skip(f"no Docker engine: {problem}")


def test_docker_without_a_docker_client_is_one_line(tmp_path) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    proc = isaforge("matrix", "run", "--docker", "--only", "host-gcc-release", env={"PATH": str(empty)})
    assert_one_line_error(proc, "--docker: no docker client on PATH")


def test_docker_with_an_image_that_does_not_exist_is_one_line() -> None:
    engine_or_skip()
    tag = "isaforge-ci-no-such-image:never"
    proc = isaforge("matrix", "run", "--docker", tag, "--only", "host-gcc-release")
    assert_one_line_error(proc, f"there is no image {tag} here; build it with make docker-image")
    assert proc.stdout == ""  # no cell started


@pytest.mark.slow
def test_docker_run_of_the_host_cell_in_the_real_image() -> None:
    """The CI image itself (no stand-in): `make ci-matrix ONLY=host-gcc-release` in a container, offline, as the
    checkout's owner, and the summary the host makes of the JUnit XML the runner inside wrote."""
    engine_or_skip()
    if not ciimage.image_exists(ciimage.IMAGE):
        pytest.skip(f"no image {ciimage.IMAGE} here (make docker-image builds it)")
    results = ROOT / DOCKER_RESULTS
    proc = isaforge("matrix", "run", "--docker", "--only", "host-gcc-release")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"host-gcc-release: building and testing in {ciimage.IMAGE}"
    cases = junit_cases(results / "host-gcc-release" / "junit.xml")
    passed = sum(1 for c in cases if c.find("failure") is None and c.find("skipped") is None)
    assert passed > 0 and any("test_host_build" in c.get("name", "") for c in cases)
    native = next(line.split() for line in lines if line.split()[:1] == [NATIVE])
    assert native[:3] == [NATIVE, "pass", str(passed)], proc.stdout
    assert "matrix ok: 1 of 1 cells passed, 0 failed, 0 unavailable" in proc.stdout
    assert f"JUnit XML and pytest logs: {DOCKER_RESULTS}/<cell>/" in proc.stdout
    log = (results / "host-gcc-release.docker.log").read_text()
    assert log.startswith("$ docker run --rm --network none --user ")
    assert f"{ROOT}/build/in-docker:/src/build" in log.splitlines()[0]
