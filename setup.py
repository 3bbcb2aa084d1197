"""Packs libisaforge's source tree into the wheel (isaforge/_source/), laid out exactly like the checkout.

Every command that builds runs Meson on that tree (source_tree.source_root()), so an installed isaforge builds with
no checkout around; meson.build, the Conan recipe and the cross files work from it unchanged. The metadata lives in
pyproject.toml; this file only adds the tree.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
PACKAGED_SOURCE = Path("isaforge", "_source")  # inside the wheel; source_tree.source_root() looks here
# What Meson, the Conan recipe and the cross/host files read, relative to the checkout. A folder takes everything
# under it, so a new kernel, header or profile is packed without touching this list. From src/isaforge/ only the
# stdlib-only scripts Meson runs as `python3 src/isaforge/<script>.py` and what they import (codegen.py, and the files
# src/isaforge/generator_files.txt lists), not the CLI.
SOURCE_TREE = (
    "meson.build",
    "meson.options",
    "VERSION",
    "LICENSE*",
    "include/**/*",
    "kernels/**/*",
    "tools/**/*",
    "toolchains/**/*",
    "cmake/**/*",
    "recipes/**/*",
    "tests/kernels/meson.build",  # meson.build ends with subdir('tests/kernels'): its C programs, not its pytest files
    "tests/kernels/**/*.[ch]",
    "src/isaforge/codegen.py",
    "src/isaforge/generator_files.txt",
)
JUNK = ("__pycache__", ".pyc")


def generator_files(root: Path) -> list[str]:
    """src/isaforge/generator_files.txt's entries, as patterns under root: what codegen.py and engines' builds run."""
    text = (root / "src" / "isaforge" / "generator_files.txt").read_text()
    return [f"src/isaforge/{line.strip()}" for line in text.splitlines() if line.strip() and not line.startswith("#")]


def source_files(root: Path = HERE) -> list[Path]:
    """The files of SOURCE_TREE and of generator_files.txt that exist under root, relative to it, sorted."""
    found = {
        path.relative_to(root)
        for pattern in (*SOURCE_TREE, *generator_files(root))
        for path in root.glob(pattern)
        if path.is_file() and not any(j in path.parts or path.name.endswith(j) for j in JUNK)
    }
    return sorted(found)


class BuildPyWithSource(build_py):
    """build_py, plus the source tree copied into isaforge/_source/ of the build."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):  # an editable install runs from the checkout itself
            return
        packed = Path(self.build_lib) / PACKAGED_SOURCE
        shutil.rmtree(packed, ignore_errors=True)  # build/lib outlives builds: a deleted kernel must not stay packed
        for rel in source_files():
            target = packed / rel
            self.mkpath(str(target.parent))
            self.copy_file(str(HERE / rel), str(target))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = super().get_outputs(include_bytecode)
        if getattr(self, "editable_mode", False):
            return outputs
        return [*outputs, *(str(Path(self.build_lib) / PACKAGED_SOURCE / rel) for rel in source_files())]


class SdistWithSource(sdist):
    """sdist, plus the source tree, so a wheel built from the sdist (`python -m build`) carries it too."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        # The file list comes from egg_info's manifest, which knows only the Python package: add the tree here.
        extra = [rel.as_posix() for rel in source_files()]
        super().make_release_tree(base_dir, sorted({*files, *extra}))


setup(cmdclass={"build_py": BuildPyWithSource, "sdist": SdistWithSource})
