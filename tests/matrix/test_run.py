"""The runner: ccache in front of the cross compilers, and the status line of a run."""

from __future__ import annotations

import shutil
from pathlib import Path

from isaforge.matrix.results import NATIVE, CellResult, Tally
from isaforge.matrix.run import CellProgress, ccache_shims
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
