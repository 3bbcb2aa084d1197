"""Running cells: here (build each cell, run its pytest: JUnit XML and a log under build/matrix/<cell>/) or in the CI
image (`make ci-matrix ONLY=<cell>` in a container, its build/ on the host's build/in-docker/), with progress on one
status line, `jobs` cells at a time."""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TextIO

from isaforge import builds, ciimage, process, ui
from isaforge.errors import IsaforgeError
from isaforge.matrix.definition import RESULTS_DIR, Cell, MatrixError, load_matrix
from isaforge.matrix.plan import unavailable
from isaforge.matrix.report import describe
from isaforge.matrix.results import CellResult, Run, Tally, tally_junit
from isaforge.source_tree import repo_root

PLUGIN = "isaforge.matrix.plugin"
# A whole cell's tests under QEMU; one test has its own, shorter, limit (qemu.DEFAULT_TIMEOUT).
CELL_TEST_TIMEOUT = 4 * 3600.0
# --docker: the container's build/ (its builds, ccache and build/matrix/<cell>/ results) is this directory of the host.
DOCKER_BUILD = PurePosixPath("build/in-docker")
DOCKER_RESULTS = DOCKER_BUILD / RESULTS_DIR.relative_to("build")
DOCKER_CCACHE = f"{ciimage.MOUNT}/build/ccache"  # the container's CCACHE_DIR, in its build/


class CellProgress(ui.StatusLine):
    """The status line of a run: cells done (and failed) of the total, then what each running cell is doing."""

    def __init__(self, total: int, stream: TextIO, live: bool | None = None) -> None:
        super().__init__(stream, live, head=self._head)
        self.total = total
        self.done = 0
        self.failed = 0

    def _head(self) -> str:
        return f"[{self.done}/{self.total} cells" + (f", {self.failed} failed]" if self.failed else "]")

    def cell_done(self, result: CellResult) -> CellResult:
        with self.lock:
            self.done += 1
            self.failed += result.status in ("failed", "build failed")
        self.finish(result.cell.name, f"{result.cell.name}: {describe(result)}")
        return result


def ccache_shims(cells: Sequence[Cell], directory: Path) -> Path | None:
    """A directory of `<compiler> -> ccache` links for the cells' cross compilers (ccache's masquerade mode), or
    None without ccache. Meson only puts ccache in front of compilers it finds itself (the native one); a cross
    file's compiler is called by name, so putting this directory first on PATH sends those calls through ccache.
    CCACHE_DISABLE=1 turns it off, as for any ccache use."""
    ccache = shutil.which("ccache")
    if ccache is None:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    for name in sorted({tc.c[0] for c in cells if (tc := c.toolchain) is not None}):
        link = directory / name
        if link.is_symlink() and os.readlink(link) == ccache:
            continue
        # Made aside, then renamed over: runs in containers sharing the directory (--docker -j N) may race here.
        fresh = directory / f".{name}.{secrets.token_hex(4)}"
        fresh.symlink_to(ccache)
        fresh.replace(link)
    return directory.resolve()  # ninja runs the compilers from the build directory


@contextmanager
def _path_first(directory: Path | None) -> Iterator[None]:
    if directory is None:
        yield
        return
    old = os.environ.get("PATH", "")
    os.environ["PATH"] = f"{directory}{os.pathsep}{old}"
    try:
        yield
    finally:
        os.environ["PATH"] = old


def cell_pytest_command(cell: Cell, junit: Path) -> list[str]:
    """The pytest run of a cell: its tests, its build (through the plugin), its CPU models, JUnit XML."""
    cmd = [sys.executable, "-m", "pytest", *cell.tests, "-p", PLUGIN, "--matrix-cell", cell.name]
    if cell.cpus:
        cmd += ["--isaforge-qemu-cpu", ",".join(cell.cpus)]
    return [*cmd, f"--junitxml={junit}", "-o", "junit_suite_name=" + cell.name, "-v", "-p", "no:cacheprovider"]


def _test_env() -> dict[str, str]:
    env = dict(os.environ)
    # UBSan's report names the call chain (GCC cells; clang cells trap without a runtime).
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    return env


def _fresh_dir(out_dir: Path, cell: Cell) -> Path:
    cell_dir = out_dir / cell.name
    if cell_dir.exists():
        shutil.rmtree(cell_dir)
    cell_dir.mkdir(parents=True)
    return cell_dir


def _build(cell: Cell, log: Path) -> tuple[float, str]:
    """Build the cell: its time, and the error (empty when it built)."""
    start = time.monotonic()
    try:
        builds.ensure_built(cell.build())
    except IsaforgeError as exc:
        log.write_text(str(exc) + "\n")
        return time.monotonic() - start, str(exc)
    return time.monotonic() - start, ""


def _last_words(log: Path) -> str:
    tail = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()] if log.is_file() else []
    return tail[-1].strip("= ") if tail else "no output"


def _why_failed(returncode: int, log: Path) -> str:
    """A failing pytest without a failing test (collection or usage error, the plugin's "no test passed"): its last
    words, from the log."""
    return f"pytest exit {returncode}: {_last_words(log)}"


def _tested(
    cell: Cell, returncode: int, per_cpu: dict[str, Tally], junit: Path, log: Path, times: tuple[float, float], why: str
) -> CellResult:
    """The verdict on a cell whose tests ran, from its JUnit XML's tally; `why` (why the run failed) is shown when no
    test failed."""
    failed_tests = any(t.failed for t in per_cpu.values())
    detail = why if returncode != 0 and not failed_tests else ""
    return CellResult(cell, "passed" if returncode == 0 else "failed", detail, *times, per_cpu, junit, log)


def run_cell(cell: Cell, out_dir: Path, progress: CellProgress, root: Path, image: InImage | None = None) -> CellResult:
    if image is not None:
        return progress.cell_done(image.run(cell, progress))
    reason = unavailable(cell)
    if reason is not None:
        return progress.cell_done(CellResult(cell, "unavailable", reason))
    cell_dir = _fresh_dir(out_dir, cell)
    log, junit = cell_dir / "pytest.log", cell_dir / "junit.xml"
    progress.step(cell.name, "building")
    build_seconds, error = _build(cell, log)
    if error:
        return progress.cell_done(CellResult(cell, "build failed", error, build_seconds, log=log))
    n = len(cell.cpus)
    progress.step(cell.name, f"testing on {n} CPU model{'s' * (n > 1)}" if n else "testing natively")
    start = time.monotonic()
    cmd = cell_pytest_command(cell, junit)
    returncode = process.stream(cmd, log, cwd=root, env=_test_env(), timeout=CELL_TEST_TIMEOUT)
    times = (build_seconds, time.monotonic() - start)
    why = _why_failed(returncode, log) if returncode else ""
    return progress.cell_done(_tested(cell, returncode, tally_junit(junit, cell), junit, log, times, why))


# -- in the CI image (--docker) ----------------------------------------------------------------------------------------


def image_problem(image: str) -> str | None:
    """Why cells cannot run in `image` here (no engine, no such image), or None."""
    problem = ciimage.engine_problem()
    if problem is not None:
        return f"--docker: {problem}"
    if not ciimage.image_exists(image):
        return f"--docker: there is no image {image} here; build it with make docker-image"
    return None


@functools.cache
def _declared_cpus(root: Path) -> dict[str, tuple[str, ...]]:
    """Each cell's CPU models as ci/matrix.toml declares them (read once per run, not once per cell)."""
    return {c.name: tuple(c.cpus) for c in load_matrix(root).cells}


def only_expr(cell: Cell, root: Path) -> str:
    """The `--only` selecting this cell in the image: its name, and its CPU models when a selection narrowed them."""
    narrowed = cell.cpus and tuple(cell.cpus) != _declared_cpus(root)[cell.name]
    return f"{cell.name} cpu={','.join(cell.cpus)}" if narrowed else cell.name


@dataclass(frozen=True)
class InImage:
    """Cells run in the CI image: per cell, `make ci-matrix ONLY=<cell>` in a container (offline, as the checkout's
    owner) on the checkout, its build/ on the host's build/in-docker/ (so the host's own builds stay the host's) and its
    build/matrix/ on `results`; the host tallies the JUnit XML the runner inside wrote."""

    image: str
    root: Path
    results: Path

    def argv(self, cell: Cell) -> list[str]:
        inside = PurePosixPath(ciimage.MOUNT)
        mounts = [(self.root / DOCKER_BUILD, str(inside / "build"))]
        if self.results.resolve() != (self.root / DOCKER_RESULTS).resolve():
            mounts.append((self.results, str(inside / RESULTS_DIR)))
        command = ["make", "ci-matrix", f"ONLY={only_expr(cell, self.root)}"]
        return ciimage.run_argv(self.image, self.root, command, mounts=mounts, env={"CCACHE_DIR": DOCKER_CCACHE})

    def log(self, cell: Cell) -> Path:
        """The container's output (make, the runner's lines): next to the cell's directory, which the runner inside
        empties."""
        return self.results / f"{cell.name}.docker.log"

    def prepare(self) -> None:
        """build/, build/in-docker/ and the results made by the invoking user, not by dockerd (as root) on the mount."""
        for directory in (self.root / DOCKER_BUILD, self.results):
            directory.mkdir(parents=True, exist_ok=True)

    def run(self, cell: Cell, progress: CellProgress) -> CellResult:
        """The cell in a container; its (build) time is the container's until the tests, whose time the JUnit XML
        gives."""
        cell_dir = _fresh_dir(self.results, cell)  # no stale junit.xml is read if the container does not get to pytest
        log, pytest_log, junit = self.log(cell), cell_dir / "pytest.log", cell_dir / "junit.xml"
        progress.step(cell.name, f"building and testing in {self.image}")
        start = time.monotonic()
        returncode = process.stream(self.argv(cell), log, timeout=CELL_TEST_TIMEOUT)
        seconds = time.monotonic() - start
        if not junit.is_file():  # the build (or the container) failed; the runner inside logged why, else docker did
            why = _last_words(pytest_log if pytest_log.is_file() else log)
            return CellResult(cell, "build failed", why, seconds, log=log)
        per_cpu = tally_junit(junit, cell)
        test_seconds = sum(t.seconds for t in per_cpu.values())
        why = f"make ci-matrix exit {returncode} in {self.image}: {_last_words(pytest_log)}"
        return _tested(cell, returncode, per_cpu, junit, log, (seconds - test_seconds, test_seconds), why)


def run_matrix(
    cells: Sequence[Cell],
    *,
    jobs: int = 1,
    allow_unavailable: bool = False,
    out_dir: Path | None = None,
    stream: TextIO | None = None,
    live: bool | None = None,
    root: Path | None = None,
    image: str | None = None,
) -> Run:
    """Build and test every cell (`jobs` at a time), each with JUnit XML under out_dir/<cell>/; in `image` (the CI
    image, one container per cell) when given, else here."""
    if jobs < 1:
        raise MatrixError(f"-j must be at least 1, got {jobs}")
    if not cells:
        raise MatrixError("no cell selected")
    root = root or repo_root()
    out_dir = out_dir or root / (RESULTS_DIR if image is None else DOCKER_RESULTS)
    in_image = None if image is None else InImage(image, root, out_dir)
    if in_image is not None:
        in_image.prepare()
    progress = CellProgress(len(cells), stream or sys.stdout, live)
    start = time.monotonic()
    shims = ccache_shims(cells, out_dir / "ccache-bin") if in_image is None else None
    with _path_first(shims), ThreadPoolExecutor(max_workers=jobs) as pool:
        try:
            results = list(pool.map(lambda c: run_cell(c, out_dir, progress, root, in_image), cells))
        finally:
            progress.close()
    return Run(results, time.monotonic() - start, allow_unavailable)
