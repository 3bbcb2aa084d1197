"""Running cells here: build each cell, run its pytest (JUnit XML and a log under build/matrix/<cell>/), show progress
on one status line, `jobs` cells at a time."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from isaforge import builds, process, ui
from isaforge.errors import IsaforgeError
from isaforge.matrix.definition import RESULTS_DIR, Cell, MatrixError
from isaforge.matrix.plan import unavailable
from isaforge.matrix.report import describe
from isaforge.matrix.results import CellResult, Run, tally_junit
from isaforge.toolchains import repo_root

PLUGIN = "isaforge.matrix.plugin"
# A whole cell's tests under QEMU; one test has its own, shorter, limit (qemu.DEFAULT_TIMEOUT).
CELL_TEST_TIMEOUT = 4 * 3600.0


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
        link.unlink(missing_ok=True)
        link.symlink_to(ccache)
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


def _why_failed(returncode: int, log: Path) -> str:
    """A failing pytest without a failing test (collection or usage error, the plugin's "no test passed"): its last
    words, from the log."""
    tail = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    return f"pytest exit {returncode}: {tail[-1].strip('= ') if tail else 'no output'}"


def run_cell(cell: Cell, out_dir: Path, progress: CellProgress, root: Path) -> CellResult:
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
    test_seconds = time.monotonic() - start
    per_cpu = tally_junit(junit, cell)
    failed_tests = any(t.failed for t in per_cpu.values())
    detail = _why_failed(returncode, log) if returncode != 0 and not failed_tests else ""
    status = "passed" if returncode == 0 else "failed"
    return progress.cell_done(CellResult(cell, status, detail, build_seconds, test_seconds, per_cpu, junit, log))


def run_matrix(
    cells: Sequence[Cell],
    *,
    jobs: int = 1,
    allow_unavailable: bool = False,
    out_dir: Path | None = None,
    stream: TextIO | None = None,
    live: bool | None = None,
    root: Path | None = None,
) -> Run:
    """Build and test every cell (`jobs` at a time), each with JUnit XML under out_dir/<cell>/."""
    if jobs < 1:
        raise MatrixError(f"-j must be at least 1, got {jobs}")
    if not cells:
        raise MatrixError("no cell selected")
    root = root or repo_root()
    out_dir = out_dir or root / RESULTS_DIR
    stream = stream or sys.stdout
    progress = CellProgress(len(cells), stream, live)
    start = time.monotonic()
    shims = ccache_shims(cells, out_dir / "ccache-bin")
    with _path_first(shims), ThreadPoolExecutor(max_workers=jobs) as pool:
        try:
            results = list(pool.map(lambda c: run_cell(c, out_dir, progress, root), cells))
        finally:
            progress.close()
    return Run(results, time.monotonic() - start, allow_unavailable)
