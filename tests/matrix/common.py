"""What the matrix tests share: the checked-in matrix, and runs made up of chosen results."""

from __future__ import annotations

from isaforge.matrix.definition import Cell, load_matrix
from isaforge.matrix.results import CellResult, Run
from isaforge.toolchains.probing import probe
from tests.conftest import ROOT

MATRIX = load_matrix(ROOT)


def usable(cell: Cell) -> bool:
    return cell.toolchain is None or probe(cell.toolchain).usable


def fake_run(*results: CellResult, allow: bool = False) -> Run:
    return Run(list(results), 61.0, allow)
