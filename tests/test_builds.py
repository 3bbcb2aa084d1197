"""The Meson build itself: variant options, probes that drop what the toolchain cannot build, the host build."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from isaforge import builds, gemmjob, qemu
from isaforge.catalogue import load
from isaforge.errors import IsaforgeError
from isaforge.pytest_plugin import TargetCpu
from tests.conftest import ROOT, meson_test_names
from tests.kernels.test_gemm import every_kernel

AARCH64 = "aarch64-linux-gnu"


def expected_on_max(info: dict, op: str) -> str | None:
    cat = load()
    return cat.best_kernel(ROOT, "aarch64", list(info["variants"]), set(cat.cpu_features("aarch64", "max")), op)


OLD_GCC = """#!/bin/sh
# GCC 9 knows neither i8mm nor bf16: it stops with this error (its real wording), otherwise it is the real GCC.
for arg in "$@"; do
  case "$arg" in *+i8mm*|*+bf16*) echo "cc1: error: invalid feature modifier in '$arg'" >&2; exit 1;; esac
done
exec aarch64-linux-gnu-gcc "$@"
"""


def configure_with_old_gcc(tmp_path, *options: str) -> tuple[subprocess.CompletedProcess, object]:
    wrapper = tmp_path / "aarch64-linux-gnu-gcc-9"
    wrapper.write_text(OLD_GCC)
    wrapper.chmod(0o755)
    cross = (ROOT / builds.build_for(AARCH64, "gcc").toolchain.cross_file).read_text()
    cross_file = tmp_path / "old-gcc.ini"
    cross_file.write_text(cross.replace("c = ['aarch64-linux-gnu-gcc']", f"c = ['{wrapper}']"))
    directory = tmp_path / "build"
    cmd = [*builds._meson(), "setup", str(directory), str(ROOT), "--cross-file", str(cross_file), *options]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=builds._tool_env(), check=False)
    return proc, directory


@pytest.mark.e2e
def test_variants_an_old_compiler_cannot_build_are_dropped_and_the_library_still_builds(tmp_path) -> None:
    proc, directory = configure_with_old_gcc(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "variant i8mm dropped: gcc" in proc.stdout and "cannot compile i8mm code" in proc.stdout
    # The library (shared, through isaforge-info, and static) is what must still build; the test programs add nothing.
    subprocess.run([*builds._meson(), "compile", "-C", str(directory), "isaforge:static_library", "isaforge-info"],
                   env=builds._tool_env(), check=True, capture_output=True)  # fmt: skip
    assert (directory / "libisaforge.a").is_file()
    result = qemu.run(load().arch("aarch64"), "max", directory / "isaforge-info")
    info = json.loads(result.stdout)
    assert not {"i8mm", "svei8mm", "bf16", "svebf16"} & set(info["variants"]) and "dotprod" in info["variants"]
    assert info["kernels"]["gemm_s8"] == expected_on_max(info, "gemm_s8") == "gemm_s8_8x8x4_sve"


@pytest.mark.e2e
def test_a_variant_required_but_unbuildable_is_a_configure_error(tmp_path) -> None:
    proc, _ = configure_with_old_gcc(tmp_path, "-Dvariant_i8mm=enabled")
    assert proc.returncode != 0
    assert "variant i8mm dropped: gcc" in proc.stdout + proc.stderr


@pytest.mark.e2e
def test_host_build_has_reference_kernels_only_and_runs_natively(isaforge_build) -> None:
    build = builds.build_for("host", "gcc")
    directory = isaforge_build(build)
    info = json.loads(subprocess.run([directory / "isaforge-info"], capture_output=True, check=True).stdout)
    assert info["variants"] == {"ref": []} and info["detected"] == []
    assert info["kernels"]["gemm_s8"] == "gemm_s8_4x4_ref"
    errors = subprocess.run([directory / "tests/kernels/test_api_errors"], capture_output=True, text=True, check=False)
    assert errors.returncode == 0, errors.stderr


@pytest.mark.e2e
@pytest.mark.parametrize("kind", ["static", "shared", "header", "pkg-config"])
def test_install_ships_the_library_header_and_pkg_config(isaforge_build, tmp_path, kind: str) -> None:
    directory = isaforge_build(builds.build_for(AARCH64, "gcc"))
    dest = tmp_path / "root"
    subprocess.run(
        [*builds._meson(), "install", "-C", str(directory), "--destdir", str(dest), "--quiet"],
        env=builds._tool_env(), check=True, capture_output=True,
    )  # fmt: skip
    files = {p.relative_to(dest).as_posix().split("/", 2)[-1] for p in dest.rglob("*") if p.is_file()}
    wanted = {"static": "libisaforge.a", "shared": "libisaforge.so", "header": "isaforge/isaforge.h",
              "pkg-config": "isaforge.pc"}[kind]  # fmt: skip
    assert any(f.endswith(wanted) for f in files), sorted(files)


# The Meson tests pytest runs on `max` for every toolchain already (test_plan.py, test_memory_safety.py), and which
# take the most emulated time: on the max setup the suite runs the others (on the baseline model, all of them).
ON_MAX_ELSEWHERE = {"plan", "size_edges", "threads"}


@pytest.mark.e2e
@pytest.mark.parametrize("setup", ["cortex_a7", "max"])
def test_meson_test_runs_under_each_cpu_model_setup(isaforge_build, setup: str, tmp_path) -> None:
    directory = isaforge_build(builds.build_for("arm-linux-gnueabihf", "clang"))
    names = [n for n in meson_test_names() if setup != "max" or n not in ON_MAX_ELSEWHERE]
    # TMPDIR: test_packed_file's files have fixed names, and the other setup may run at once (parallel workers).
    proc = subprocess.run(
        [*builds._meson(), "test", "-C", str(directory), "--setup", setup, *names],
        capture_output=True, text=True, env={**builds._tool_env(), "TMPDIR": str(tmp_path)}, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout
    assert re.search(rf"^Ok:\s+{len(names)}\s*$", proc.stdout, re.MULTILINE), proc.stdout
    for name in names:
        assert re.search(rf"isaforge:{name}\s+OK", proc.stdout), proc.stdout
    log = (directory / f"meson-logs/testlog-{setup}.txt").read_text()
    assert f"QEMU_CPU={setup.replace('_', '-')}" in log


OLD_ASSEMBLER = {"aarch64-linux-gnu": "-Wa,-march=armv8-a", "arm-linux-gnueabihf": "-Wa,-march=armv7-a"}


@pytest.mark.e2e
@pytest.mark.parametrize("target", list(OLD_ASSEMBLER))
def test_assembler_held_to_the_baseline_needs_the_inst_encoder(target: str, tmp_path) -> None:
    """GCC hands `-Wa,-march` to the assembler after the variant's own -march, like an old binutils: the .S
    kernels' extension instructions (here the i8mm kernel's smmla) are refused unless they go through the .inst
    encoder."""
    options = {"c_args": OLD_ASSEMBLER[target], "inst_encode": "never"}
    # The i8mm variant's library alone: a whole build would stop at the first refused object just the same, after
    # compiling whatever came before it.
    i8mm_library = f"isf_{load().arch_by_triple(target).name}_i8mm"  # its smmla kernel is a .S file on both arches
    never = builds.build_for(target, "gcc", options, tag="old-as", targets=(i8mm_library,))
    with pytest.raises(IsaforgeError, match=r"_i8mm\.S:\d+: Error: selected processor does not support `v?smmla"):
        builds.ensure_built(never)


@pytest.mark.e2e
# In make ci: every encoding is checked word by word against GNU as and llvm-mc in test_inst and test_inst_sme
# (Thumb state too), and make test's gcc aarch64 build already runs its SME kernel through the encoder (GNU as 2.40
# lacks SME2) under the whole suite; this whole-library run with every variant encoded adds a build of its own.
@pytest.mark.slow
@pytest.mark.parametrize("target", list(OLD_ASSEMBLER))
@pytest.mark.parametrize("mode", ["always", "auto"])
def test_inst_encoded_library_passes_the_qemu_suite(target: str, mode: str, isaforge_build, qemu_run, tmp_path) -> None:
    options = {"c_args": OLD_ASSEMBLER[target], "inst_encode": mode}
    # every_kernel runs gemm_runner only: the other test programs are left uncompiled.
    build = builds.build_for(target, "gcc", options, tag=f"as-{mode}", targets=("tests/kernels/gemm_runner",))
    directory = isaforge_build(build)
    if mode == "auto":
        log = (directory / "meson-logs/meson-log.txt").read_text()
        assert "variant i8mm: the assembler rejects its instructions" in log
    tc = TargetCpu(build, "max")
    cases = [*gemmjob.sweep_cases(9, 17, pad=1), gemmjob.Case(64, 64, 100, 100, 64, 64)]
    for op in ("gemm_s8", "gemm_bf16"):
        seen = every_kernel(qemu_run, tc, tmp_path, op, cases)
        assert any(k.endswith(("_i8mm", "_bf16")) for k in seen), seen


NEW_TILE_KERNEL = """#include "isf_internal.h"

ISF_UKERNEL(gemm_f32_6x16_neon) {
    (void)k_blocks, (void)a, (void)b, (void)c, (void)ldc, (void)accumulate;
}
"""


def source_copy(tmp_path):
    """The source tree (no builds, no venv, no git) in tmp, to add files to."""
    dest = tmp_path / "src-tree"
    ignore = shutil.ignore_patterns("build", ".venv", ".git", "__pycache__", ".ruff_cache", ".pytest_cache", "examples")
    shutil.copytree(ROOT, dest, ignore=ignore, symlinks=True)
    return dest


@pytest.mark.e2e
# The check is meson.build's, the same for both arches: arm's run (the other kernel folder) is in make ci.
@pytest.mark.parametrize("target", [AARCH64, pytest.param("arm-linux-gnueabihf", marks=pytest.mark.slow)])
def test_a_kernel_with_a_new_tile_and_no_packer_stops_meson_configure(tmp_path, target: str) -> None:
    """Never a silent slow path: a kernel whose layout the registry does not list is a configure error that names
    the kernel, its layout and where to add it; the same tree configures once the layout is registered."""
    tree = source_copy(tmp_path)
    kernel_dir = tree / "kernels" / load().arch_by_triple(target).kernel_dir / "neon"
    toml = tree / "src/isaforge/isa.toml"
    # A second gemm_f32 kernel in the variant needs its place in the variant's order first (a build error too).
    toml.write_text(
        toml.read_text().replace(
            "[variant.neon]\nprefer = [\n", '[variant.neon]\nprefer = [\n  "gemm_f32_6x16_neon",\n', 1
        )
    )
    (kernel_dir / "gemm_f32_6x16_neon.c").write_text(NEW_TILE_KERNEL)
    cross_file = ROOT / builds.build_for(target, "gcc").toolchain.cross_file

    def configure(name: str) -> subprocess.CompletedProcess:
        cmd = [*builds._meson(), "setup", str(tmp_path / name), str(tree), "--cross-file", str(cross_file)]
        return subprocess.run(cmd, capture_output=True, text=True, env=builds._tool_env(), check=False)

    proc = configure("refused")
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    error = next(line for line in output.splitlines() if "ERROR:" in line)
    assert "gemm_f32_6x16_neon" in error and "f32.6x16x1" in error and "[layout]" in error, error
    # The neon variant runs its gemm_f32 kernels for gemm_f16 and gemm_bf16 too (`widened`): three layouts.
    entries = [f'"{elements}.6x16x1" = {{ a = "generic", b = "generic" }}' for elements in ("f16>f32", "bf16>f32")]
    entries.append('"f32.6x16x1" = { a = "generic", b = "neon:b_rows_b32" }')
    toml.write_text(toml.read_text().replace("\n[layout]\n", "\n[layout]\n" + "\n".join(entries) + "\n", 1))
    proc = configure("registered")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.e2e
def test_a_build_locked_by_another_process_waits_for_it() -> None:
    """Parallel workers ask for the same build at once: the second waits while the first holds the build directory,
    then finds it up to date."""
    build = builds.build_for("host", "gcc")
    builds.ensure_built(build)
    code = "from isaforge import builds; builds.ensure_built(builds.build_for('host', 'gcc')); print('built')"
    env = {**builds._tool_env(), "PYTHONPATH": str(ROOT / "src")}
    with builds._locked(build):
        waiting = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
        with pytest.raises(subprocess.TimeoutExpired):
            waiting.wait(timeout=3)
    out, _ = waiting.communicate(timeout=300)
    assert waiting.returncode == 0 and out.strip() == "built"


@pytest.mark.e2e
def test_an_install_up_to_date_is_left_alone_and_a_damaged_one_is_made_again() -> None:
    """Tests build engines against the installed prefix while others ask for it: an install with nothing new to write
    must not empty it under them. The host build's install: no other test reads it, so this one may damage it."""
    build = builds.build_for("host", "gcc")
    prefix = builds.ensure_installed(build)
    library = prefix / "lib" / "libisaforge.a"
    before = library.stat().st_ino
    assert builds.ensure_installed(build) == prefix and library.stat().st_ino == before
    (prefix / "include" / "isaforge" / "isaforge.h").unlink()
    builds.ensure_installed(build)
    assert (prefix / "include" / "isaforge" / "isaforge.h").is_file()
