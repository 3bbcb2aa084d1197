"""ci/matrix.toml parsed and validated: the cells it defines, and what their build types do."""

from __future__ import annotations

import subprocess

import pytest

from isaforge import builds, qemu
from isaforge.catalogue import load
from isaforge.matrix.definition import MATRIX_FILE, Cell, MatrixError, parse
from tests.conftest import ROOT
from tests.matrix.common import MATRIX, usable

GOOD = """
schema = 1
tests = ["tests/kernels"]
[build.release]
tag = ""
[build.debug]
meson = { buildtype = "debug" }
c_args.clang = ["-fsanitize-trap=undefined"]
c_link_args.clang = ["-fsanitize-trap=undefined"]
[[cell]]
target = ["aarch64-linux-gnu", "arm-linux-gnueabihf"]
compiler = ["gcc", "clang"]
build = ["release", "debug"]
[[cell]]
target = "host"
compiler = "gcc"
build = "release"
tests = ["tests/test_catalogue.py"]
"""


# -- the definition ----------------------------------------------------------------------------------------------------


def test_cells_are_every_target_compiler_and_build_plus_the_host() -> None:
    cat = load()
    cross = [c for c in MATRIX.cells if not c.is_host]
    assert {(c.target, c.compiler) for c in cross} == {
        (a.triple, comp) for a in cat.arches.values() for comp in cat.compilers
    }
    assert {c.build_type.name for c in cross} == {"release", "debug-ubsan"}
    assert [c.name for c in MATRIX.cells if c.is_host] == ["host-gcc-release"]


def test_release_cells_run_every_model_of_the_catalogue_and_share_make_tests_build() -> None:
    for cell in MATRIX.cells:
        if cell.build_type.name == "release" and not cell.is_host:
            assert cell.cpus == tuple(load().cpus[cell.arch])
            assert cell.build() == builds.build_for(cell.target, cell.compiler)  # no rebuild between make test and ci


def test_debug_ubsan_cells_keep_the_negative_legs_and_max() -> None:
    for cell in MATRIX.cells:
        if cell.build_type.name == "debug-ubsan":
            assert "max" in cell.cpus and {"cortex-a53", "cortex-a7"} & set(cell.cpus)
            options = cell.meson_options()
            assert options["b_sanitize"] == "undefined" and options["b_lundef"] == "false"
            assert cell.build().directory.name == f"{cell.toolchain_name}-debug-ubsan"


def test_clang_sanitizer_link_args_keep_the_compilers_own() -> None:
    cell = MATRIX.cell("aarch64-linux-gnu-clang-debug-ubsan")
    own = list(load().compiler("clang").link_args)
    assert cell.meson_options()["c_link_args"].split() == [*own, "-fsanitize-trap=undefined"]
    assert "c_link_args" not in MATRIX.cell("aarch64-linux-gnu-gcc-debug-ubsan").meson_options()


def test_the_matrix_names_catalogue_models_without_copying_the_catalogue() -> None:
    text = (ROOT / MATRIX_FILE).read_text()
    for arch, models in load().cpus.items():
        assert f"[cpu.{arch}]" not in text
        assert ", ".join(f'"{m}"' for m in models) not in text  # no full model list restated


def test_a_good_definition_expands_lists_to_a_cross_product() -> None:
    m = parse(GOOD)
    assert len(m.cells) == 2 * 2 * 2 + 1
    assert m.cell("arm-linux-gnueabihf-clang-debug").cpus == tuple(load().cpus["arm"])
    assert m.cell("host-gcc-release").tests == ("tests/test_catalogue.py",)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (('target = "host"\ncompiler = "gcc"', 'target = "host"\ncompiler = "gcc"\ncpus = ["max"]'), "takes no cpus"),
        (('"aarch64-linux-gnu", "arm', '"riscv64-linux-gnu", "arm'), "unknown target 'riscv64-linux-gnu'"),
        (('["gcc", "clang"]', '["gcc", "icc"]'), "unknown compiler 'icc'; choose one of: gcc, clang"),
        (('build = ["release", "debug"]', 'build = ["release", "fast"]'), "unknown build 'fast'"),
        (('build = ["release", "debug"]', 'build = "release"\ncpus = ["cortex-a9"]'), "unknown CPU model"),
        (("schema = 1", "schema = 2"), "schema must be 1"),
        (('tag = ""', 'tag = ""\nflavour = "x"'), "unknown key 'flavour'"),
        (('tag = ""', 'tag = "Release!"'), "tag must be"),
        (("c_args.clang", "c_args.icc"), "unknown compiler 'icc'"),
        (('meson = { buildtype = "debug" }', 'meson = { c_args = "-O0" }'), "per compiler"),
        (('target = "host"\ncompiler = "gcc"', 'target = "host"\ncompiler = "clang"'), "compiler must be gcc"),
        (('build = ["release", "debug"]', "build = []"), "the list is empty"),
        (("[[cell]]\ntarget = [", "[[cell]]\nflavor = 1\ntarget = ["), "unknown key 'flavor'"),
        (('build = ["release", "debug"]', 'build = ["release", "release"]'), "defined twice"),
        (("[build.debug]\nmeson", '[build.debug]\ntag = ""\nmeson'), "share build/"),
        (("schema = 1", "schema = 1\nschema = 1"), "not valid TOML"),
    ],
)
def test_bad_definitions_are_one_line_naming_the_valid_values(change: tuple[str, str], says: str) -> None:
    old, new = change
    assert old in GOOD
    with pytest.raises(MatrixError) as err:
        parse(GOOD.replace(old, new, 1))
    assert says in str(err.value) and "\n" not in str(err.value)


UB_PROGRAM = """
#include <limits.h>
#include <stdlib.h>
int main(int argc, char **argv) { (void)argv; int x = INT_MAX - 1 + argc; return x + atoi("1") > 0; }
"""


@pytest.mark.parametrize("cell", [c for c in MATRIX.cells if "b_sanitize" in c.meson_options()], ids=lambda c: c.name)
def test_undefined_behaviour_stops_the_program_in_each_sanitizer_cell(cell: Cell, tmp_path) -> None:
    """The build type's flags make UB fatal under QEMU: GCC through libubsan, clang by trapping (no runtime)."""
    if not usable(cell):
        pytest.skip(f"{cell.toolchain_name} is not usable here")
    tc = cell.toolchain
    src, exe = tmp_path / "ub.c", tmp_path / "ub"
    src.write_text(UB_PROGRAM)
    bt = cell.build_type
    flags = ["-O0", "-fsanitize=undefined", *bt.c_args_for(cell.compiler)]
    link = [*tc.compiler.link_args, *bt.c_link_args_for(cell.compiler)]
    subprocess.run([*tc.c, *flags, str(src), "-o", str(exe), *link], check=True, capture_output=True)
    result = qemu.run(tc.arch, cell.cpus[0], exe)
    assert result.returncode != 0, result.describe()
    if cell.compiler == "gcc":
        assert "runtime error: signed integer overflow" in result.stderr
    else:
        assert result.signal_name in ("SIGTRAP", "SIGILL"), result.describe()


@pytest.mark.e2e
def test_a_no_op_rebuild_of_a_cell_touches_nothing() -> None:
    """Asking again for a built cell neither reconfigures nor recompiles: every file of the build keeps its
    modification time (how long that takes is the bench's business, not a test's)."""
    cell = MATRIX.cell("arm-linux-gnueabihf-gcc-release")
    if not usable(cell):
        pytest.skip("arm-linux-gnueabihf-gcc is not usable here")
    directory = builds.ensure_built(cell.build())
    before = {p: p.stat().st_mtime_ns for p in directory.rglob("*") if p.is_file()}
    builds.ensure_built(cell.build())
    after = {p: p.stat().st_mtime_ns for p in directory.rglob("*") if p.is_file()}
    ninja_own = {".ninja_log", ".ninja_deps"}  # ninja's bookkeeping may be rewritten by a run with no work
    changed = [p for p in before.keys() | after.keys() if before.get(p) != after.get(p) and p.name not in ninja_own]
    assert any(p.suffix == ".o" for p in before), "the cell's build has objects"
    assert not changed, sorted(map(str, changed))
