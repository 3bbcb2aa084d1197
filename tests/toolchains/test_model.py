"""isaforge.toolchains.model: one toolchain per arch and compiler, found by target and compiler."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from isaforge.catalogue import CatalogueError, load
from isaforge.toolchains.model import toolchain
from tests.toolchains.common import ALL, IDS


def test_one_toolchain_per_arch_and_compiler():
    cat = load()
    assert len(ALL) == len(cat.arches) * len(cat.compilers) == 4
    assert {(tc.arch.name, tc.compiler.name) for tc in ALL} == {(a, c) for a in cat.arches for c in cat.compilers}
    assert len(set(IDS)) == len(IDS)


def test_cross_file_path():
    expected = PurePosixPath("toolchains/meson/aarch64-linux-gnu-gcc.ini")
    assert toolchain("aarch64-linux-gnu", "gcc").cross_file == expected
    assert toolchain("aarch64", "gcc").cross_file == expected  # the catalogue arch name works too
    assert toolchain("arm-linux-gnueabihf", "clang").cross_file == PurePosixPath(
        "toolchains/meson/arm-linux-gnueabihf-clang.ini"
    )


@pytest.mark.parametrize(
    ("target", "compiler", "word"), [("riscv64-linux-gnu", "gcc", "target"), ("arm", "icc", "compiler")]
)
def test_unknown_target_or_compiler_is_one_line(target, compiler, word):
    with pytest.raises(CatalogueError) as err:
        toolchain(target, compiler)
    message = str(err.value)
    assert "\n" not in message
    assert f"unknown {word}" in message
    assert "choose one of" in message
