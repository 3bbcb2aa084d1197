"""The runner: ccache in front of the cross compilers, the status line of a run, and cells in the CI image (the
`docker run` of each and what the host makes of it)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from isaforge import ciimage
from isaforge.matrix.results import NATIVE, CellResult, Tally
from isaforge.matrix.run import DOCKER_RESULTS, CellProgress, InImage, ccache_shims, run_matrix
from tests.conftest import ROOT
from tests.matrix.common import MATRIX


def test_ccache_shims_name_the_cross_compilers(tmp_path) -> None:
    shims = ccache_shims(MATRIX.cells, tmp_path / "bin")
    if shutil.which("ccache") is None:
        assert shims is None
        return
    assert shims is not None
    assert sorted(p.name for p in shims.iterdir()) == sorted(
        {c.toolchain.c[0] for c in MATRIX.cells if c.toolchain is not None}
    )
    assert all(Path(p.resolve()).name == "ccache" for p in shims.iterdir())


def test_the_progress_line_is_rewritten_in_place_on_a_terminal_and_plain_lines_elsewhere(tmp_path) -> None:
    cell = MATRIX.cell("host-gcc-release")
    for live in (True, False):
        out = (tmp_path / f"{live}.txt").open("w+", newline="")  # keep the \r
        progress = CellProgress(1, out, live=live)
        progress.step(cell.name, "building")
        progress.update(cell.name, "testing 50% (3 passed)")
        progress.cell_done(CellResult(cell, "passed", per_cpu={NATIVE: Tally(6, 0, 0, 1.0)}))
        progress.close()
        out.seek(0)
        text = out.read()
        if live:
            assert "\r\x1b[K[0/1 cells] host-gcc-release: building" in text
            assert "host-gcc-release: passed: 6 passed" in text
        else:
            assert "\r" not in text
            assert text.splitlines()[0] == "host-gcc-release: building"
            assert "testing 50%" not in text  # only steps, not every refresh, in a CI log


# -- in the CI image (--docker): the argv and the tally, without Docker ------------------------------------------------


def test_a_cell_in_the_image_runs_make_ci_matrix_with_the_containers_build_on_build_in_docker() -> None:
    root = ROOT
    cell = MATRIX.cell("host-gcc-release")
    argv = InImage(ciimage.IMAGE, root, root / DOCKER_RESULTS).argv(cell)
    mounts = [(root / "build" / "in-docker", "/src/build")]
    expected = ciimage.run_argv(
        ciimage.IMAGE,
        root,
        ["make", "ci-matrix", "ONLY=host-gcc-release"],
        mounts=mounts,
        env={"CCACHE_DIR": "/src/build/ccache"},
    )
    assert argv == expected
    assert argv[:5] == ["docker", "run", "--rm", "--network", "none"]
    assert argv[argv.index("--user") + 1] == ciimage.owner(root)
    volumes = [argv[i + 1] for i, word in enumerate(argv) if word == "--volume"]
    assert volumes == [f"{root}:/src", f"{root}/build/in-docker:/src/build"]


def test_other_results_are_mounted_as_the_containers_build_matrix_and_narrowed_models_are_passed_on(tmp_path) -> None:
    cell = MATRIX.cell("arm-linux-gnueabihf-gcc-release")
    narrowed = cell.with_cpus(["cortex-a7"])
    image = InImage("some-tag", ROOT, tmp_path / "r")
    argv = image.argv(narrowed)
    assert argv[-4:] == ["some-tag", "make", "ci-matrix", "ONLY=arm-linux-gnueabihf-gcc-release cpu=cortex-a7"]
    assert f"{tmp_path.resolve()}/r:/src/build/matrix" in argv
    assert image.argv(cell)[-1] == "ONLY=arm-linux-gnueabihf-gcc-release"  # every model: the name is enough
    assert image.log(cell) == tmp_path / "r" / "arm-linux-gnueabihf-gcc-release.docker.log"


JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="host-gcc-release" time="2.5">
<testcase classname="a" name="test_one" time="1.5"/><testcase classname="a" name="test_two" time="0.5"/>
<testcase classname="a" name="test_three" time="0.0"><skipped message="s"/></testcase>
</testsuite></testsuites>
"""


def stand_in(script: str) -> list[str]:
    """A command in place of `docker run` (not the image: what the runner inside would leave behind), so the host's
    side is tested here; tests/commands/test_matrix.py runs the real image."""
    return [sys.executable, "-c", script]


def test_the_host_tallies_the_junit_the_runner_in_the_container_wrote(tmp_path, monkeypatch) -> None:
    junit = tmp_path / "build/in-docker/matrix/host-gcc-release/junit.xml"
    script = f"import pathlib; pathlib.Path({str(junit)!r}).write_text({JUNIT!r}); print('make: inner runner')"
    monkeypatch.setattr(InImage, "argv", lambda self, cell: stand_in(script))
    out = tmp_path / "out.txt"
    with out.open("w") as stream:
        run = run_matrix([MATRIX.cell("host-gcc-release")], root=tmp_path, image="isaforge-ci", stream=stream)
    (result,) = run.results
    assert run.ok and result.status == "passed"
    assert result.per_cpu == {NATIVE: Tally(2, 0, 1, 2.0)}
    assert result.junit == junit and result.log == junit.parent.parent / "host-gcc-release.docker.log"
    assert "make: inner runner" in result.log.read_text()
    assert out.read_text().splitlines()[0] == "host-gcc-release: building and testing in isaforge-ci"


def test_no_junit_from_the_container_is_a_build_failure_with_its_last_words_and_no_stale_xml_is_read(
    tmp_path, monkeypatch
) -> None:
    stale = tmp_path / "build/in-docker/matrix/host-gcc-release/junit.xml"
    stale.parent.mkdir(parents=True)
    stale.write_text(JUNIT)  # a previous run's
    script = "import sys; print('meson: cc not found'); sys.exit(2)"
    monkeypatch.setattr(InImage, "argv", lambda self, cell: stand_in(script))
    with (tmp_path / "out.txt").open("w") as stream:
        run = run_matrix([MATRIX.cell("host-gcc-release")], root=tmp_path, image="isaforge-ci", stream=stream)
    (result,) = run.results
    assert not run.ok
    assert (result.status, result.detail, result.per_cpu) == ("build failed", "meson: cc not found", {})
    assert not stale.exists()


def test_the_image_runs_no_host_availability_check_and_makes_its_directories_first(tmp_path, monkeypatch) -> None:
    seen: list[bool] = []
    monkeypatch.setattr("isaforge.matrix.run.unavailable", lambda cell: "clang-19 not found")
    monkeypatch.setattr(InImage, "argv", lambda self, cell: seen.append(self.results.is_dir()) or stand_in("1"))
    with (tmp_path / "out.txt").open("w") as stream:
        run = run_matrix([MATRIX.cell("aarch64-linux-gnu-clang-release")], root=tmp_path, image="x", stream=stream)
    assert run.results[0].status == "build failed"  # it ran (nothing written): not "unavailable"
    assert seen == [True] and (tmp_path / "build/in-docker").is_dir()
