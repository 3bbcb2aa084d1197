"""Which cells `--only` selects, and whether this machine can run a cell."""

from __future__ import annotations

import pytest

from isaforge.matrix.definition import BuildType, Cell, MatrixError
from isaforge.matrix.plan import select, unavailable
from tests.matrix.common import MATRIX, usable

# -- selection ---------------------------------------------------------------------------------------------------------


def names(exprs: list[str]) -> list[str]:
    return [c.name for c in select(MATRIX, exprs)]


def test_no_filter_selects_every_cell() -> None:
    assert names([]) == MATRIX.names


def test_conditions_on_different_keys_all_hold_and_values_of_one_key_are_alternatives() -> None:
    assert names(["compiler=clang build=debug-ubsan"]) == [
        "aarch64-linux-gnu-clang-debug-ubsan", "arm-linux-gnueabihf-clang-debug-ubsan",
    ]  # fmt: skip
    assert names(["target=aarch64-linux-gnu,host build=release"]) == [
        "aarch64-linux-gnu-gcc-release", "aarch64-linux-gnu-clang-release", "host-gcc-release",
    ]  # fmt: skip
    assert names(["compiler=gcc", "build=release"]) == names(["compiler=gcc build=release"])


def test_arch_names_globs_and_bare_cell_names_select() -> None:
    assert names(["target=arm build=release"]) == names(["target=arm-linux-gnueabihf build=release"])
    assert names(["*-clang-release"]) == ["aarch64-linux-gnu-clang-release", "arm-linux-gnueabihf-clang-release"]
    assert names(["host-gcc-release"]) == ["host-gcc-release"]
    assert names(["toolchain=arm-linux-gnueabihf-gcc"]) == [
        "arm-linux-gnueabihf-gcc-release", "arm-linux-gnueabihf-gcc-debug-ubsan",
    ]  # fmt: skip


def test_cpu_narrows_the_models_and_drops_cells_without_them() -> None:
    cells = select(MATRIX, ["build=release cpu=cortex-a7,max"])
    assert [(c.name, c.cpus) for c in cells] == [
        ("aarch64-linux-gnu-gcc-release", ("max",)),
        ("aarch64-linux-gnu-clang-release", ("max",)),
        ("arm-linux-gnueabihf-gcc-release", ("cortex-a7", "max")),
        ("arm-linux-gnueabihf-clang-release", ("cortex-a7", "max")),
    ]  # the host cell has no CPU model: any cpu= drops it
    assert [c.name for c in select(MATRIX, ["build=release cpu=*"])] == names(["build=release target=*-*"])


@pytest.mark.parametrize(
    ("expr", "says"),
    [
        ("cpu=cortex-a9", "unknown cpu 'cortex-a9'; choose one of: cortex-a53,"),
        ("target=mips", "unknown target 'mips'; choose one of: aarch64-linux-gnu,"),
        ("compiler=icc", "unknown compiler 'icc'; choose one of: gcc, clang"),
        ("build=fast", "unknown build 'fast'; choose one of: release, debug-ubsan"),
        ("no-such-cell", "unknown cell 'no-such-cell'; choose one of: aarch64-linux-gnu-gcc-release,"),
        ("flavour=x", "unknown key 'flavour'"),
        ("target=", "names no value"),
        ("riscv*", "matches nothing"),
        ("target=host cpu=max", "selects no cell"),
    ],
)
def test_bad_selections_are_one_line_naming_the_valid_values(expr: str, says: str) -> None:
    with pytest.raises(MatrixError) as err:
        select(MATRIX, [expr])
    assert says in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("cell", [c for c in MATRIX.cells if c.build_type.runtime], ids=lambda c: c.name)
def test_the_ubsan_runtime_is_there_for_every_usable_gcc_cross_toolchain(cell: Cell) -> None:
    if not usable(cell):
        pytest.skip(f"{cell.toolchain_name} is not usable here")
    assert unavailable(cell) is None


def test_a_missing_runtime_makes_the_cell_unavailable_naming_it() -> None:
    cell = MATRIX.cell("aarch64-linux-gnu-gcc-debug-ubsan")
    if not usable(cell):
        pytest.skip("aarch64-linux-gnu-gcc is not usable here")
    runtime = (("gcc", ("libno_such_runtime.so",)),)
    broken = Cell(cell.target, cell.compiler, BuildType("x", "x", runtime=runtime), cell.cpus, cell.tests)
    reason = unavailable(broken)
    assert reason is not None and "finds no libno_such_runtime.so for aarch64-linux-gnu" in reason
