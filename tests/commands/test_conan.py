"""`isaforge conan create`, run as the real CLI: the conan command it assembles, its one-line refusals, and real
runs (a cross create under QEMU on a chosen CPU model, validate()'s exit code passed through)."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from isaforge import source_tree
from tests.conftest import assert_one_line_error
from tests.recipes import conan_env

REPO = Path(source_tree.__file__).resolve().parents[2]

pytestmark = conan_env.MARKS


isaforge = conan_env.isaforge_cli


def dry_run(*args: str) -> list[str]:
    proc = isaforge("conan", "create", "--dry-run", *args)
    assert proc.returncode == 0, proc.stderr
    return shlex.split(proc.stdout)


# -- the command it runs -----------------------------------------------------------------------------------------


def test_cross_create_command():
    conan_env.require("aarch64-linux-gnu-clang")
    cmd = dry_run("--target", "aarch64-linux-gnu", "--compiler", "clang", "--cpu", "neoverse-n2", "-o", "i8mm=False")
    assert Path(cmd[0]).name == "conan" and cmd[1] == "create"
    assert cmd[2] == str(REPO / "recipes" / "isaforge")
    assert cmd[cmd.index("-pr:h") + 1] == str(REPO / "toolchains" / "conan" / "aarch64-linux-gnu-clang")
    assert cmd[cmd.index("-pr:b") + 1] == "default"
    confs = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-c"]
    assert confs == ["user.isaforge:qemu_cpu=neoverse-n2"]
    assert cmd[cmd.index("-o") + 1] == "isaforge/*:i8mm=False"


def test_defaults_gcc_and_the_profiles_cpu():
    conan_env.require("arm-linux-gnueabihf-gcc")
    cmd = dry_run("--target", "arm", "--skip-tests", "-j", "2", "--", "--build-require")
    assert cmd[cmd.index("-pr:h") + 1].endswith("toolchains/conan/arm-linux-gnueabihf-gcc")
    assert not any(a.startswith("user.isaforge:qemu_cpu") for a in cmd)  # the profile's own (max)
    assert "tools.build:skip_test=True" in cmd and "--test-folder=" in cmd
    assert "tools.build:jobs=2" in cmd
    assert cmd[-1] == "--build-require"


def test_host_build_uses_the_detected_default_profile(tmp_path):
    home = tmp_path / "conan-home"
    assert not (home / "profiles" / "default").exists()
    proc = isaforge("conan", "create", "--dry-run", conan_home=home)
    assert proc.returncode == 0, proc.stderr
    assert (home / "profiles" / "default").is_file()  # detected on first use
    cmd = shlex.split(proc.stdout)
    assert cmd[cmd.index("-pr:h") + 1] == "default"


# -- one-line refusals -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--target", "riscv64-linux-gnu"], ["unknown target 'riscv64-linux-gnu'", "aarch64-linux-gnu"]),
        (["--target", "aarch64", "--compiler", "icc"], ["unknown compiler 'icc'", "gcc, clang"]),
        (["--target", "arm", "--cpu", "neoverse-n2"], ["unknown CPU model 'neoverse-n2' for arm", "cortex-a7"]),
        (["--target", "aarch64", "--cpu", "pentium"], ["unknown CPU model 'pentium'", "neoverse-n2"]),
        (["--target", "aarch64", "-o", "avx512=True"], ["unknown option 'avx512'", "i8mm", "inst_encode"]),
        (["--target", "aarch64", "-o", "i8mm"], ["write NAME=VALUE"]),
        (["--cpu", "max"], ["--cpu chooses the QEMU model of a cross build", "arch=x86_64"]),
        (["--compiler", "clang"], ["--compiler needs --target"]),
        (["--target", "aarch64", "--profile", "default"], ["not both"]),
        (["--profile", "/nonexistent/profile"], ["host profile /nonexistent/profile", "not found"]),
    ],
    ids=[
        "target",
        "compiler",
        "cpu-of-other-arch",
        "cpu",
        "option-name",
        "option-syntax",
        "cpu-on-host",
        "compiler-without-target",
        "target-and-profile",
        "no-profile",
    ],
)
def test_bad_input_is_one_line(args, words):
    assert_one_line_error(isaforge("conan", "create", "--dry-run", *args), *words)


def test_compiler_not_installed_names_it_and_how_to_install(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = isaforge("conan", "create", "--target", "aarch64-linux-gnu", "--compiler", "clang", path=str(empty))
    assert_one_line_error(
        proc,
        "aarch64-linux-gnu-clang cannot build here",
        "clang-19 not found",
        "apt-get install clang-19 lld-19 llvm-19",
        "ci/install-toolchains.sh",
    )


def test_own_profile_naming_a_missing_compiler(tmp_path):
    own = tmp_path / "my-profile"
    own.write_text(
        f"include({REPO / 'toolchains' / 'conan' / 'aarch64-linux-gnu-gcc'})\n"
        "[conf]\n"
        'tools.build:compiler_executables={"c": "aarch64-linux-gnu-gcc-99"}\n'
    )
    proc = isaforge("conan", "create", "--dry-run", "--profile", str(own))
    assert_one_line_error(proc, f"host profile {own} names C compiler aarch64-linux-gnu-gcc-99, which is not installed")


def test_own_profile_naming_a_catalogue_compiler_that_is_missing(tmp_path):
    own = tmp_path / "my-clang"
    own.write_text(
        "[settings]\nos=Linux\narch=armv8\ncompiler=clang\ncompiler.version=19\nbuild_type=Release\n"
        '[conf]\ntools.build:compiler_executables={"c": "clang-19"}\n'
    )
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = isaforge("conan", "create", "--profile", str(own), path=str(empty))
    assert_one_line_error(proc, "names C compiler clang-19", "apt-get install clang-19 lld-19 llvm-19")


# -- real runs ---------------------------------------------------------------------------------------------------


def test_validate_refusal_exit_code_passes_through():
    proc = isaforge("conan", "create", "--", "-s:h", "arch=x86")
    assert proc.returncode == 6, proc.stderr[-3000:]
    assert "builds for arch=armv8/armv7hf/x86_64, not arch=x86" in proc.stderr


def test_create_for_target_compiler_and_cpu():
    # The session's one armv8-clang create (conan_env.cli_create): `isaforge conan create --target aarch64-linux-gnu
    # --compiler clang --cpu neoverse-n2 -j 2 -- -tf <copy of test_package>`, whose package the engine's create, the
    # Meson consumer and the no-exe_wrapper refusal (tests/recipes) consume, whichever runs first.
    tc = conan_env.require(conan_env.CLI_TOOLCHAIN)
    proc = conan_env.cli_create()
    assert proc.returncode == 0, proc.stderr[-6000:]
    out = proc.stdout + proc.stderr
    assert "running the Meson tests" not in out  # tools.build:skip_test given after `--` reached the recipe
    kernels = dict(conan_env.KERNEL_LINE.findall(out))
    assert kernels, out[-3000:]
    variants = [v for v in re.findall(r"-- isaforge variants: (\S+)", out)[0].split(";") if v]
    assert kernels == conan_env.expected_kernels(tc.arch.name, variants, conan_env.CLI_CPU)
    print(f"{conan_env.CLI_CPU}: " + ", ".join(f"{op}={k}" for op, k in kernels.items()))
    assert shutil.which("conan", path=conan_env.tool_path())
