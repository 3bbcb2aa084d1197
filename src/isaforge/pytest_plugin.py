"""pytest plugin: build libisaforge for each toolchain and run its programs under QEMU CPU models.

Opt-in only, so that installing isaforge changes no other project's pytest runs: `pytest -p isaforge.pytest_plugin`,
or in the project's ini file (`addopts = "-p isaforge.pytest_plugin"`, as isaforge's own pyproject.toml does), or
`pytest_plugins = ["isaforge.pytest_plugin"]` in its root conftest.py. There is no `pytest11` entry point.

Options, prefixed so that they cannot clash with a project's own: `--isaforge-qemu-cpu a,b` (default: every model
of the catalogue) and `--isaforge-toolchains t1,t2` (default: every toolchain, `<triple>-<compiler>` names). Tests
ask for `target_cpu` (parametrized over every selected toolchain × CPU model of its arch) or `cross_build` (every
selected toolchain), and use `isaforge_build` / `qemu_run`.
Where it is loaded, a session in which no test passed — all skipped, or none collected — fails; with pytest-xdist,
the run as a whole (the controller sees every worker's reports; a worker whose share was all skips decides nothing).
Builds are shared by every process of a run: parallel workers (`-n 2`) build each toolchain once, the others wait for
it (builds.ensure_built holds a lock per build directory).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from isaforge import builds, qemu
from isaforge.builds import Build
from isaforge.catalogue import load
from isaforge.errors import IsaforgeError


@dataclass(frozen=True)
class TargetCpu:
    """A toolchain and one CPU model of its arch: the unit every QEMU test runs on."""

    build: Build
    cpu: str

    @property
    def id(self) -> str:
        return f"{self.build.name}@{self.cpu}"

    @property
    def expected_features(self) -> tuple[str, ...]:
        return load().cpu_features(self.build.arch_name, self.cpu)


QEMU_CPU_OPTION = "--isaforge-qemu-cpu"
TOOLCHAINS_OPTION = "--isaforge-toolchains"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("isaforge")
    group.addoption(QEMU_CPU_OPTION, default="", help="comma-separated QEMU CPU models (default: all of the catalogue)")
    group.addoption(TOOLCHAINS_OPTION, default="", help="comma-separated <triple>-<compiler> (default: all)")


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def selected_cpus(config: pytest.Config) -> dict[str, list[str]]:
    """CPU models per arch, in catalogue order, filtered by --isaforge-qemu-cpu."""
    cat = load()
    wanted = _split(config.getoption(QEMU_CPU_OPTION))
    known = {cpu for models in cat.cpus.values() for cpu in models}
    unknown = [cpu for cpu in wanted if cpu not in known]
    if unknown:
        choices = ", ".join(sorted(known))
        raise pytest.UsageError(f"{QEMU_CPU_OPTION}: unknown model {unknown[0]!r}; choose from: {choices}")
    return {arch: [c for c in models if not wanted or c in wanted] for arch, models in cat.cpus.items()}


# Another plugin (isaforge.matrix.plugin) may name the builds to test, e.g. one CI cell's debug + UBSan build.
BUILDS_UNDER_TEST = pytest.StashKey[list[Build]]()


def selected_builds(config: pytest.Config) -> list[Build]:
    every = config.stash[BUILDS_UNDER_TEST] if BUILDS_UNDER_TEST in config.stash else builds.all_builds()
    wanted = _split(config.getoption(TOOLCHAINS_OPTION))
    names = [b.name for b in every]
    unknown = [w for w in wanted if w not in names]
    if unknown:
        raise pytest.UsageError(f"{TOOLCHAINS_OPTION}: unknown {unknown[0]!r}; choose from: {', '.join(names)}")
    return [b for b in every if not wanted or b.name in wanted]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    config = metafunc.config
    if "target_cpu" in metafunc.fixturenames:
        cpus = selected_cpus(config)
        params = [TargetCpu(b, cpu) for b in selected_builds(config) for cpu in cpus[b.arch_name]]
        for mark in metafunc.definition.iter_markers("cpus"):
            params = [p for p in params if p.cpu in mark.args[0]]
        for mark in metafunc.definition.iter_markers("arch"):
            params = [p for p in params if p.build.arch_name == mark.args[0]]
        metafunc.parametrize("target_cpu", params, ids=[p.id for p in params])
    elif "cross_build" in metafunc.fixturenames:
        params = selected_builds(config)
        metafunc.parametrize("cross_build", params, ids=[b.name for b in params])


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cpus(models): run a target_cpu test only on these CPU models")
    config.addinivalue_line("markers", "arch(name): run a target_cpu test only on toolchains of this arch")
    # Bad selections stop the run before collection, as one line.
    if config.getoption(QEMU_CPU_OPTION):
        selected_cpus(config)
    if config.getoption(TOOLCHAINS_OPTION):
        selected_builds(config)


_built: dict[Build, Path] = {}


@pytest.fixture(scope="session")
def isaforge_build() -> Callable[[Build], Path]:
    """Build (once per session) and return the build directory; a build failure fails the test with Meson's log."""

    def get(build: Build) -> Path:
        if build not in _built:
            try:
                _built[build] = builds.ensure_built(build)
            except IsaforgeError as exc:
                pytest.fail(str(exc), pytrace=False)
        return _built[build]

    return get


QemuRunner = Callable[..., qemu.QemuResult]


@pytest.fixture(scope="session")
def qemu_run(isaforge_build: Callable[[Build], Path]) -> QemuRunner:
    """qemu_run(build, cpu, "isaforge-info", args=(), env=None) builds if needed and runs the program."""

    def run(
        build: Build, cpu: str, program: str, args: Sequence[str] = (), env: Mapping[str, str] | None = None
    ) -> qemu.QemuResult:
        directory = isaforge_build(build)
        return qemu.run(build.arch, cpu, directory / program, args, env)

    return run


# -- a run where nothing passed is a failure ---------------------------------------------------------------------

_passed = 0


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    global _passed  # noqa: PLW0603 - one counter per session
    if report.when == "call" and report.passed:
        _passed += 1


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus == pytest.ExitCode.OK and _passed == 0 and not session.config.option.collectonly:
        session.config.pluginmanager.get_plugin("terminalreporter").write_line(
            "isaforge: no test passed (all skipped or none collected): failing the run", red=True
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
