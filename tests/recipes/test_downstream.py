"""examples/downstream, an engine with a dot-product kernel of its own in two variants (plain C, and dotprod
compiled with isaforge_variant_c_args['dotprod']), built both ways: with isaforge as a Meson subproject (the
example's subprojects/isaforge links to this checkout) and against the Conan package. Run under QEMU: a core
without dotprod gets the plain kernel, `max` the dotprod one."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from isaforge.catalogue import load
from tests.recipes import conan_env
from tests.recipes.conan_env import REPO, require

EXAMPLE = REPO / "examples" / "downstream"
# (toolchain, CPU without dotprod, CPU with it)
MODELS = [
    pytest.param("aarch64-linux-gnu-gcc", "cortex-a53", "max", id="aarch64-gcc"),
    pytest.param("arm-linux-gnueabihf-clang", "cortex-a7", "max", id="arm-clang", marks=pytest.mark.slow),
]


def _engine_says(output: str) -> tuple[str, str]:
    variant = re.search(r"^engine: dot_s8 variant = (\w+)$", output, re.MULTILINE)
    kernel = re.search(r"^engine: isaforge gemm_s8 kernel = (\w+)$", output, re.MULTILINE)
    assert variant and kernel and "engine: ok" in output, output[-4000:]
    return variant[1], kernel[1]


def test_subproject_link_points_at_this_checkout():
    link = EXAMPLE / "subprojects" / "isaforge"
    assert link.is_symlink()
    assert os.readlink(link) == "../../.."  # relative: works in any clone
    assert link.resolve() == REPO


def _example_copy(tmp_path: Path) -> Path:
    """The example with its subprojects/isaforge linking to this checkout by absolute path (Meson writes a lock file
    into subprojects/, which must not land in the checkout)."""
    copy = conan_env.copy_tree(EXAMPLE, tmp_path / "downstream")
    (copy / "subprojects" / "isaforge").unlink()
    (copy / "subprojects" / ".wraplock").unlink(missing_ok=True)
    (copy / "subprojects" / "isaforge").symlink_to(REPO)
    return copy


@pytest.mark.parametrize(("name", "plain_cpu", "dotprod_cpu"), MODELS)
def test_engine_with_isaforge_subproject(name, plain_cpu, dotprod_cpu, tmp_path):
    tc = require(name)
    conan_env.home()  # skips without meson
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QEMU_", "ISAFORGE_"))}
    env["PATH"] = conan_env.tool_path()
    build = tmp_path / "build"

    def meson(*args: str, **extra: str) -> str:
        proc = subprocess.run(
            ["meson", *args], env={**env, **extra}, capture_output=True, text=True, check=False, cwd=tmp_path
        )
        assert proc.returncode == 0, f"meson {' '.join(args)}:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"
        return proc.stdout

    setup = meson("setup", str(build), str(_example_copy(tmp_path)), "--cross-file", str(REPO / tc.cross_file))
    assert re.search(r"dot_s8 variants\s*:\s*plain dotprod", setup), setup[-3000:]
    meson("compile", "-C", str(build), "-j", "2")
    for cpu, want in ((plain_cpu, "plain"), (dotprod_cpu, "dotprod")):
        assert ("dotprod" in load().cpu_features(tc.arch.name, cpu)) == (want == "dotprod")
        out = meson("test", "-C", str(build), "--suite", "engine", "--verbose", QEMU_CPU=cpu)
        variant, kernel = _engine_says(out)
        print(f"subproject {name} on {cpu}: dot_s8={variant}, isaforge gemm_s8={kernel}")
        assert variant == want


@pytest.mark.parametrize(("name", "plain_cpu", "dotprod_cpu"), MODELS)
def test_engine_with_conan_package(name, plain_cpu, dotprod_cpu, tmp_path):
    tc = require(name)
    conan = conan_env.exported()
    example = _example_copy(tmp_path)
    for cpu, want in ((plain_cpu, "plain"), (dotprod_cpu, "dotprod")):
        out_folder: Path = tmp_path / cpu
        proc = conan.run(
            "build",
            str(example),
            "-of",
            str(out_folder),
            *conan_env.cross_args(tc),
            "-c",
            f"user.isaforge:qemu_cpu={cpu}",
        )
        assert proc.returncode == 0, proc.stderr[-6000:]
        assert "isaforge from    : pkg-config" in proc.stderr
        variant, kernel = _engine_says(proc.stderr)
        print(f"conan {name} on {cpu}: dot_s8={variant}, isaforge gemm_s8={kernel}")
        assert variant == want
