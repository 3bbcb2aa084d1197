"""The Conan recipe for real: `conan create` with the checked-in host profiles (library built with Meson, its own
tests run under QEMU on the profile's CPU model, then test_package built with CMake and run under QEMU), the host
build, options, and the refusals (validate(), bad option values, no exe_wrapper). One CONAN_HOME per session."""

from __future__ import annotations

import json
import re

import pytest

from isaforge.catalogue import load
from tests.conftest import meson_test_names
from tests.recipes import conan_env
from tests.recipes.conan_env import REF, REPO, create, expected_kernels, profile, require, ukernel_symbols

pytestmark = conan_env.MARKS

# (toolchain, QEMU CPU model): one full create per arch stays in the default slice, the others are slow; armv8's is
# tests/commands/test_conan.py's (`isaforge conan create`, clang, its test_package under QEMU).
CROSS = [
    pytest.param("aarch64-linux-gnu-gcc", "neoverse-n1", id="armv8-gcc@neoverse-n1", marks=pytest.mark.slow),
    pytest.param("arm-linux-gnueabihf-gcc", "max", id="armv7hf-gcc@max"),
    pytest.param("aarch64-linux-gnu-clang", "max", id="armv8-clang@max", marks=pytest.mark.slow),
    pytest.param("arm-linux-gnueabihf-clang", "cortex-a15", id="armv7hf-clang@cortex-a15", marks=pytest.mark.slow),
]


def _show(title: str, kernels: dict[str, str]) -> None:
    print(f"{title}: " + ", ".join(f"{op}={name}" for op, name in kernels.items()))


@pytest.mark.parametrize(("name", "cpu"), CROSS)
def test_create_cross_runs_tests_and_test_package_under_qemu(name, cpu, tmp_path):
    tc = require(name)
    conan = conan_env.home()
    made = create(conan, profile(tc), tmp_path, "-c", f"user.isaforge:qemu_cpu={cpu}")
    assert made.proc.returncode == 0, made.output[-6000:]
    out = made.output
    # the library's own Meson tests ran (not skipped) under QEMU on the chosen model
    assert f"running the Meson tests under QEMU, CPU model {cpu}" in out
    assert f"{tc.arch.qemu} -L {tc.arch.sysroot}" in out
    assert re.search(rf"^Ok:\s+{len(meson_test_names())}\s*$", out, re.MULTILINE), out[-4000:]
    assert re.search(r"^Skipped:\s+[1-9]", out, re.MULTILINE) is None
    features = load().cpu_features(tc.arch.name, cpu)
    assert '"detected": [' + ", ".join(f'"{f}"' for f in features) + "]" in out  # isaforge-info saw the model
    # test_package: CMake consumer, run under the same qemu and sysroot with -cpu from the conf
    assert f'"{tc.arch.qemu}" "-L" "{tc.arch.sysroot}" "-cpu" "{cpu}"' in out
    assert "isaforge test_package: ok" in out
    variants = made.variants
    assert variants, "a cross package builds at least the neon variant"
    assert made.kernels == expected_kernels(tc.arch.name, variants, cpu)
    _show(f"{name} on {cpu} (variants: {' '.join(variants)})", made.kernels)
    assert made.package_folder is not None
    assert (made.package_folder / "include" / "isaforge" / "isaforge.h").is_file()
    assert (made.package_folder / "lib" / "libisaforge.a").is_file()
    assert not (made.package_folder / "lib" / "pkgconfig").exists()  # PkgConfigDeps writes the consumers' .pc


@pytest.mark.slow  # the cross packages above are what engines build; the host's reference-only one is in make ci
def test_create_host_builds_reference_only_and_runs_natively(tmp_path):
    conan = conan_env.home()
    made = create(conan, "default", tmp_path)
    assert made.proc.returncode == 0, made.output[-6000:]
    assert "under QEMU" not in made.output
    assert "RUN: ./test_package" in made.output
    assert made.variants == []
    ops = load().ops  # the quantized ops run gemm_s8's kernels, under their names
    assert made.kernels == {op: f"{ops[op].kernels_of or op}_4x4_ref" for op in conan_env.OPS}
    assert (made.package_folder / "licenses" / "LICENSE").read_text() == (REPO / "LICENSE").read_text()
    _show("host (x86-64)", made.kernels)
    symbols = ukernel_symbols(made.package_folder / "lib" / "libisaforge.a")
    assert symbols and all(s.endswith("_ref") for s in symbols), symbols


@pytest.mark.slow  # a package build of its own (~20 s), in make ci; the options themselves are checked below
def test_no_i8mm_variant_leaves_no_i8mm_object_and_max_chooses_dotprod(tmp_path):
    tc = require("arm-linux-gnueabihf-gcc")
    conan = conan_env.home()
    # The library's Meson suite on armv7hf-gcc under max is test_create_cross_runs_tests_and_test_package_under_qemu's;
    # here the package without i8mm, and its test_package under QEMU on max.
    made = create(
        conan,
        profile(tc),
        tmp_path,
        "-o",
        "isaforge/*:i8mm=False",
        "-c",
        "user.isaforge:qemu_cpu=max",
        "-c",
        "tools.build:skip_test=True",
    )
    assert made.proc.returncode == 0, made.output[-6000:]
    assert "running the Meson tests" not in made.output
    assert "isaforge test_package: ok" in made.output
    assert "i8mm" not in made.variants and "bf16" in made.variants  # only the named variant goes
    assert "-Dvariant_i8mm=disabled" in made.output or "variant i8mm: disabled" in made.output
    # No object compiled with i8mm's flags or from its folder (compile_commands.json lists every target's).
    i8mm_flags = " ".join(load().variant_flags("arm", "gcc", "i8mm"))
    commands = [c["command"] for c in made.compile_commands()]
    assert not [c for c in commands if i8mm_flags + " " in c or "/i8mm/" in c]
    assert [c for c in commands if "/dotprod/" in c]
    assert not [c for c in commands if "tests/kernels/" in c]  # tools.build:skip_test: no test program either
    symbols = ukernel_symbols(made.package_folder / "lib" / "libisaforge.a")
    assert not [s for s in symbols if s.endswith("_i8mm")], symbols
    assert any(s.endswith("_dotprod") for s in symbols), symbols
    assert made.kernels["gemm_s8"].endswith("_dotprod"), made.kernels
    assert made.kernels == expected_kernels(tc.arch.name, made.variants, "max")
    _show("armv7hf-gcc i8mm=False on max", made.kernels)


@pytest.mark.slow
def test_shared_package_runs_under_qemu(tmp_path):
    tc = require("aarch64-linux-gnu-clang")
    conan = conan_env.home()
    made = create(
        conan, profile(tc), tmp_path, "-o", "isaforge/*:shared=True", "-c", "user.isaforge:qemu_cpu=cortex-a53"
    )
    assert made.proc.returncode == 0, made.output[-6000:]
    assert (made.package_folder / "lib" / "libisaforge.so").exists()
    assert made.kernels == expected_kernels(tc.arch.name, made.variants, "cortex-a53")


# -- refusals: all before anything is compiled -------------------------------------------------------------------


def test_missing_exe_wrapper_fails_loudly_before_building(tmp_path):
    tc = require("aarch64-linux-gnu-gcc")
    conan = conan_env.home()
    made = create(conan, profile(tc), tmp_path, "-c", "tools.meson.mesontoolchain:extra_machine_files=[]")
    assert made.proc.returncode != 0
    assert "cross build for arch=armv8 and no exe_wrapper to run its tests" in made.output
    assert "meson compile" not in made.output


def test_test_package_without_exe_wrapper_fails_loudly(tmp_path):
    # armv8-clang's package is the session's one (conan_env.cli_create, checked by test_conan.py): no build of its
    # own only to be refused.
    tc = require("aarch64-linux-gnu-clang")
    conan = conan_env.with_package(tc)
    folder = conan_env.copy_tree(conan_env.RECIPE / "test_package", tmp_path / "test_package")
    proc = conan.run(
        "test",
        str(folder),
        REF,
        *conan_env.cross_args(tc),
        "-c",
        "tools.build:skip_test=True",
        "-c",
        "tools.meson.mesontoolchain:extra_machine_files=[]",
    )
    assert proc.returncode != 0
    assert "isaforge test_package: cannot run arch=armv8 programs here and no exe_wrapper" in proc.stderr
    assert "isaforge test_package: ok" not in proc.stderr


def test_bad_option_value_is_conans_error(tmp_path):
    tc = require("aarch64-linux-gnu-gcc")
    proc = conan_env.home().run(
        "create", str(conan_env.RECIPE), "-pr:h", profile(tc), "-pr:b", "default", "-o", "isaforge/*:i8mm=maybe"
    )
    assert proc.returncode == 1
    assert "ERROR: 'maybe' is not a valid 'options.i8mm' value." in proc.stderr


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        pytest.param("arch=x86", f"{REF} builds for arch=armv8/armv7hf/x86_64, not arch=x86", id="x86"),
        # the same validate() on other settings, a Conan run each: in make ci
        pytest.param(
            "os=Windows", f"{REF} builds for Linux only, not os=Windows", id="windows", marks=pytest.mark.slow
        ),
        pytest.param(
            "arch=armv7",
            f"{REF} builds for arch=armv8/armv7hf/x86_64, not arch=armv7",
            id="armv7-softfp",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_unsupported_host_is_refused_by_validate(setting, message):
    proc = conan_env.home().run(
        "create", str(conan_env.RECIPE), "-pr:h", "default", "-pr:b", "default", "-s:h", setting
    )
    assert proc.returncode == 6, proc.stderr[-3000:]
    assert f"{REF}: Invalid: {message}" in proc.stderr


def test_options_are_the_catalogue_variants():
    proc = conan_env.home().run("inspect", str(conan_env.RECIPE), "--format=json")
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    cat = load()
    variants = [v for v in cat.variants if v != "ref"]
    assert set(info["options_definitions"]) == {"shared", "fPIC", "inst_encode", *variants}
    assert info["options_definitions"]["inst_encode"] == ["auto", "always", "never"]
    assert info["version"] == (REPO / "VERSION").read_text().strip()


# -- a second consumer, with Meson and pkg-config ----------------------------------------------------------------


def test_meson_consumer_with_pkg_config_deps(tmp_path):
    # armv8-clang: the session's package (conan_env.cli_create, checked by tests/commands/test_conan.py).
    tc = require("aarch64-linux-gnu-clang")
    conan = conan_env.with_package(tc)
    folder = conan_env.copy_tree(REPO / "tests" / "recipes" / "meson_consumer", tmp_path / "meson_consumer")
    proc = conan.run(
        "test",
        str(folder),
        REF,
        *conan_env.cross_args(tc),
        "-c",
        "user.isaforge:qemu_cpu=cortex-a53",
    )
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert "meson test under QEMU, CPU model cortex-a53" in proc.stderr
    expected = expected_kernels(tc.arch.name, ["neon"], "cortex-a53")
    line = f"meson consumer: gemm_f32 kernel = {expected['gemm_f32']}, gemm_s8 kernel = {expected['gemm_s8']}"
    assert line in proc.stderr
    assert "meson consumer: ok" in proc.stderr
    print(line)
