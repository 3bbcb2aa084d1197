"""What the toolchain tests share: every toolchain of the catalogue, and a program that proves a cross build runs."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from isaforge import source_tree
from isaforge.catalogue import load
from isaforge.toolchains.generated import CROSS_HEADER
from isaforge.toolchains.model import Toolchain, toolchains

REPO = Path(source_tree.__file__).resolve().parents[2]
ALL = toolchains()
IDS = [tc.name for tc in ALL]


# A program for the cross builds of test_meson_files and test_cmake_files: it checks the arch it was compiled for
# and the hwcaps QEMU's `max` CPU shows.
HELLO_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>

#if defined(ISF_EXPECT_AARCH64) && !defined(__aarch64__)
#error "not compiled for aarch64"
#endif
#if defined(ISF_EXPECT_ARM) && !(defined(__arm__) && defined(__ARM_PCS_VFP) && __ARM_ARCH >= 7)
#error "not compiled for armv7 hard-float"
#endif

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  unsigned long want1 = strtoul(argv[1], NULL, 0), want2 = strtoul(argv[2], NULL, 0);
  unsigned long have1 = getauxval(AT_HWCAP), have2 = getauxval(AT_HWCAP2);
  printf("hwcap=%#lx hwcap2=%#lx\n", have1, have2);
  if ((have1 & want1) != want1 || (have2 & want2) != want2) {
    printf("missing hwcap bits %#lx hwcap2 bits %#lx\n", want1 & ~have1, want2 & ~have2);
    return 1;
  }
  puts("isaforge cross test ok");
  return 0;
}
"""


def max_cpu_hwcaps(arch: str) -> tuple[int, int]:
    """The AT_HWCAP / AT_HWCAP2 bits QEMU's `max` CPU must show, from the catalogue."""
    cat = load()
    words = {1: 0, 2: 0}
    for feat in cat.cpu_features(arch, "max"):
        for word, bit in cat.features[feat].per_arch[arch].hwcap:
            words[word] |= 1 << bit
    return words[1], words[2]


# The two cross-build tests build and run a program per toolchain: they take the run's toolchains
# (--isaforge-toolchains, every toolchain by default) from the plugin's `cross_build`, so make check builds only
# its own.
def meson_and_env() -> tuple[list[str], dict[str, str]]:
    # Meson and Ninja from the Python running the tests (a venv) first, then $PATH.
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    meson = shutil.which("meson", path=env["PATH"])
    if meson is None or shutil.which("ninja", path=env["PATH"]) is None:
        pytest.skip("meson and ninja are needed: pip install meson ninja")
    env["QEMU_CPU"] = "max"
    return [meson], env


def checked_render(render: Callable[[Toolchain], str], tc: Toolchain) -> str:
    """What `render` writes for `tc`, checked as a generated file must be: the same every time, the header first and
    one newline at the end."""
    text = render(tc)
    assert text == render(tc)
    assert text.startswith(CROSS_HEADER + "\n")
    assert text.endswith("\n") and not text.endswith("\n\n")
    return text
