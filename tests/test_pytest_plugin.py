"""The plugin's guard rails: it changes nothing in a pytest run that does not opt in; where a project opts in, a run
where nothing passed fails and bad --isaforge-qemu-cpu / --isaforge-toolchains are usage errors.

Every run is a real pytest of this environment (the same Python, so the same installed isaforge and its entry points)
on a project in a temporary folder outside this checkout, with a pytest.ini of its own so that none of this repo's
ini settings (which opt in) apply."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

OPT_IN = ("-p", "isaforge.pytest_plugin")
SKIPPED_ONLY = "import pytest\n\ndef test_x():\n    pytest.skip('no toolchain')\n"


def run_pytest(project: Path, body: str, *args: str, ini: str = "") -> subprocess.CompletedProcess:
    """pytest on `project` holding test_sample.py (`body`) and a pytest.ini (`[pytest]` + `ini`)."""
    assert not project.resolve().is_relative_to(ROOT)
    project.mkdir(exist_ok=True)
    (project / "pytest.ini").write_text("[pytest]\n" + ini)
    (project / "test_sample.py").write_text(body)
    # A developer's own PYTEST_ADDOPTS / PYTEST_PLUGINS would opt in (or out) behind the test's back.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(project), *args],
        capture_output=True, text=True, cwd=project, env=env, check=False,
    )  # fmt: skip


# -- a project that does not opt in: as if isaforge were not installed -------------------------------------------------


def test_a_suite_whose_only_test_is_skipped_passes_without_opting_in(tmp_path) -> None:
    proc = run_pytest(tmp_path, SKIPPED_ONLY)
    assert proc.returncode == pytest.ExitCode.OK, proc.stdout + proc.stderr
    assert "1 skipped" in proc.stdout
    assert "no test passed" not in proc.stdout


def test_the_plugin_is_not_loaded_without_opting_in(tmp_path) -> None:
    body = "def test_t(pytestconfig):\n    assert not pytestconfig.pluginmanager.has_plugin('isaforge.pytest_plugin')\n"
    proc = run_pytest(tmp_path, body, "--help")
    assert proc.returncode == pytest.ExitCode.OK, proc.stderr
    assert "--isaforge-qemu-cpu" not in proc.stdout
    proc = run_pytest(tmp_path, body)
    assert proc.returncode == pytest.ExitCode.OK, proc.stdout


OWN_OPTIONS = """
def pytest_addoption(parser):
    parser.addoption("--qemu-cpu", default="none", help="this project's own QEMU model")
    parser.addoption("--toolchains", default="none", help="this project's own toolchains")
"""
READS_OWN_OPTIONS = """
def test_own(pytestconfig):
    assert pytestconfig.getoption("--qemu-cpu") == "cortex-a53"
    assert pytestconfig.getoption("--toolchains") == "mine"
"""


@pytest.mark.parametrize("opt_in", [(), OPT_IN], ids=["not-opted-in", "opted-in"])
def test_a_suite_with_its_own_qemu_cpu_and_toolchains_options_runs(tmp_path, opt_in) -> None:
    (tmp_path / "conftest.py").write_text(OWN_OPTIONS)
    proc = run_pytest(tmp_path, READS_OWN_OPTIONS, *opt_in, "--qemu-cpu", "cortex-a53", "--toolchains", "mine")
    assert proc.returncode == pytest.ExitCode.OK, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


# -- a project that opts in --------------------------------------------------------------------------------------------

OPT_INS = [
    pytest.param({"args": OPT_IN}, id="-p"),
    pytest.param({"ini": "addopts = -p isaforge.pytest_plugin\n"}, id="ini-addopts"),
    pytest.param({"conftest": 'pytest_plugins = ["isaforge.pytest_plugin"]\n'}, id="conftest-pytest_plugins"),
]


@pytest.mark.parametrize("how", OPT_INS)
def test_where_opted_in_a_run_where_everything_was_skipped_fails(tmp_path, how) -> None:
    if "conftest" in how:
        (tmp_path / "conftest.py").write_text(how["conftest"])
    proc = run_pytest(tmp_path, SKIPPED_ONLY, *how.get("args", ()), ini=how.get("ini", ""))
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, proc.stdout + proc.stderr
    assert "isaforge: no test passed" in proc.stdout


def test_a_run_that_collected_nothing_fails(tmp_path) -> None:
    proc = run_pytest(tmp_path, "def helper():\n    pass\n", *OPT_IN)
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, proc.stdout


def test_a_run_with_a_pass_passes(tmp_path) -> None:
    body = "import pytest\n\ndef test_ok():\n    assert 1 + 1 == 2\n\ndef test_s():\n    pytest.skip()\n"
    proc = run_pytest(tmp_path, body, *OPT_IN)
    assert proc.returncode == pytest.ExitCode.OK, proc.stdout


# make test runs the suite on pytest-xdist workers: a worker's share may be only skips while the run passes, and a run
# whose every worker skipped everything must still fail.
XDIST = ("-n", "2", "--dist", "loadgroup")
SKIPS_AND_ONE_PASS = (
    "import pytest\n\n"
    + "".join(f"def test_skip_{i}():\n    pytest.skip()\n\n" for i in range(8))
    + "def test_ok():\n    assert 1 + 1 == 2\n"
)


def test_on_parallel_workers_a_run_where_everything_was_skipped_fails(tmp_path) -> None:
    proc = run_pytest(tmp_path, SKIPPED_ONLY.replace("def test_x", "def test_y") + SKIPPED_ONLY, *OPT_IN, *XDIST)
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, proc.stdout + proc.stderr
    assert "isaforge: no test passed" in proc.stdout and "bringing up nodes" in proc.stdout


def test_on_parallel_workers_a_run_with_one_pass_passes(tmp_path) -> None:
    proc = run_pytest(tmp_path, SKIPS_AND_ONE_PASS, *OPT_IN, *XDIST)
    assert proc.returncode == pytest.ExitCode.OK, proc.stdout + proc.stderr
    assert "1 passed, 8 skipped" in proc.stdout and "bringing up nodes" in proc.stdout


# The suite's tests that share something made once per process (a Conan home and its packages, an installed wheel)
# carry an xdist_group mark: under --dist loadgroup they must all run on one worker, or each worker makes its own.
GROUPED = (
    "import os\n\nimport pytest\n\n"
    "@pytest.mark.xdist_group('shared')\n@pytest.mark.parametrize('i', range(8))\n"
    "def test_grouped(i):\n"
    "    with open(os.environ['ISAFORGE_TEST_WORKERS'], 'a') as log:\n"
    "        log.write(os.environ['PYTEST_XDIST_WORKER'] + '\\n')\n\n"
    "@pytest.mark.parametrize('i', range(8))\ndef test_free(i):\n    assert i >= 0\n"
)


def test_on_parallel_workers_a_group_runs_on_one_worker(tmp_path, monkeypatch) -> None:
    log = tmp_path / "workers.txt"
    monkeypatch.setenv("ISAFORGE_TEST_WORKERS", str(log))
    proc = run_pytest(tmp_path / "project", GROUPED, *OPT_IN, *XDIST)
    assert proc.returncode == pytest.ExitCode.OK, proc.stdout + proc.stderr
    workers = log.read_text().split()
    assert len(workers) == 8 and len(set(workers)) == 1, f"the group ran on {sorted(set(workers))}"


@pytest.mark.parametrize(
    ("option", "value"), [("--isaforge-qemu-cpu", "cortex-a9000"), ("--isaforge-toolchains", "mips-gcc")]
)
def test_unknown_selection_is_a_usage_error_naming_the_valid_values(tmp_path, option: str, value: str) -> None:
    body = "def test_t(target_cpu):\n    assert target_cpu.cpu\n"
    proc = run_pytest(tmp_path, body, *OPT_IN, option, value)
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    assert f"{option}: unknown" in proc.stderr
    assert value in proc.stderr and ("cortex-a53" in proc.stderr or "aarch64-linux-gnu-gcc" in proc.stderr)


def test_target_cpu_covers_every_model_of_each_toolchains_arch(tmp_path) -> None:
    body = "def test_t(target_cpu):\n    assert target_cpu.expected_features\n"
    proc = run_pytest(tmp_path, body, *OPT_IN, "--collect-only", "--isaforge-toolchains", "arm-linux-gnueabihf-gcc")
    ids = [line for line in proc.stdout.splitlines() if "::test_t[" in line]
    assert [i.split("[")[1] for i in ids] == [
        "arm-linux-gnueabihf-gcc@cortex-a7]", "arm-linux-gnueabihf-gcc@cortex-a15]", "arm-linux-gnueabihf-gcc@max]",
    ]  # fmt: skip
