"""projects.py's pure parts on small trees written into tmp_path: which files are the project's, its engine
catalogues and the arches they declare, the fingerprint that makes test-qemu reconfigure, the command lines that
carry the build type and options, and the one line a failed configure is reported with."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from isaforge import projects
from isaforge.errors import IsaforgeError
from isaforge.toolchains.model import toolchains


def write(root: Path, rel: str, text: str = "") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


ENGINE = '[engine]\nname = "eng"\n{arches}\n[op.dot_s8]\nsignature = "dot"\n'


def project_tree(root: Path, arches: str = 'arches = ["aarch64"]') -> Path:
    """An engine's catalogue at the top, TOML files that are not catalogues, and catalogues where test-qemu must not
    look: build folders, hidden folders, subprojects, and the builddir root given by the caller (out/)."""
    write(root, "engine.toml", ENGINE.format(arches=arches))
    write(root, "pyproject.toml", '[project]\nname = "eng"\n')
    write(root, "kernels/reference/dot_s8_1x1_ref.c", "int x;\n")
    write(root, "notes.toml", "[engine\n")  # does not parse: not a catalogue, the generator says why if it is one
    for skipped in ("build/engine.toml", "build-isaforge/x/engine.toml", ".git/engine.toml",
                    "subprojects/dep/engine.toml", "out/b/engine.toml"):  # fmt: skip
        write(root, skipped, ENGINE.format(arches='arches = ["arm"]'))
    return root


def test_catalogues_are_the_projects_own_toml_files_with_an_engine_table(tmp_path):
    root = project_tree(tmp_path)
    found = projects.engine_catalogues(root, skip=root / "out")
    assert list(found) == [root / "engine.toml"]
    assert projects.declared_arches(root, skip=root / "out") == {root / "engine.toml": ["aarch64"]}
    # without the builddir root to skip, its catalogue is the project's like any other folder's
    assert set(projects.engine_catalogues(root)) == {root / "engine.toml", root / "out" / "b" / "engine.toml"}


def test_arches_are_declared_only_when_every_catalogue_declares_them(tmp_path):
    root = project_tree(tmp_path)
    write(root, "second/engine.toml", ENGINE.format(arches=""))
    assert projects.declared_arches(root, skip=root / "out") is None  # one engine takes every arch
    assert projects.declared_arches(project_tree(tmp_path / "open", arches="")) is None
    assert projects.declared_arches(write(tmp_path, "plain/meson.build").parent) is None  # no catalogue at all


def test_arches_of_the_wrong_shape_are_one_line(tmp_path):
    root = project_tree(tmp_path, arches='arches = "aarch64"')
    with pytest.raises(
        IsaforgeError, match=r"engine.toml: \[engine\] arches must be a list of arch names, e.g. arches"
    ):
        projects.declared_arches(root, skip=root / "out")


def test_fingerprint_follows_the_projects_files_not_its_builds(tmp_path):
    root = project_tree(tmp_path)
    first = projects.source_fingerprint(root, skip=root / "out")
    write(root, "build-isaforge/aarch64-linux-gnu-gcc/new.o")
    write(root, "out/b/log.txt")
    write(root, ".git/index")
    assert projects.source_fingerprint(root, skip=root / "out") == first
    added = write(root, "kernels/aarch64/neon/dot_s8_1x8_neon.c", "int y;\n")
    with_added = projects.source_fingerprint(root, skip=root / "out")
    assert with_added != first
    moved = added.parent.parent / "dotprod" / "dot_s8_1x8_neon.c"
    moved.parent.mkdir()
    os.replace(added, moved)  # the same file, mtime and all, in another folder
    assert projects.source_fingerprint(root, skip=root / "out") not in (first, with_added)
    moved.unlink()
    assert projects.source_fingerprint(root, skip=root / "out") == first
    os.utime(root / "engine.toml", ns=(1, 1))  # the catalogue edited
    assert projects.source_fingerprint(root, skip=root / "out") != first


@pytest.mark.parametrize("system", [projects.MESON, projects.CMAKE])
@pytest.mark.parametrize(("buildtype", "cmake_type"), [("release", "Release"), ("debugoptimized", "RelWithDebInfo")])
def test_build_type_and_options_reach_the_configure_command(tmp_path, system, buildtype, cmake_type):
    tc = next(tc for tc in toolchains() if tc.name == "aarch64-linux-gnu-gcc")
    project = projects.Project(tmp_path / "p", system)
    pb = projects.ProjectBuild(project, tc, tmp_path / "b" / tc.name, None, buildtype, ("warning_level=2", "X=a b"))
    env = projects.tool_env()
    if system == projects.MESON:
        cmd = projects._meson_setup(pb, env)
        assert f"--buildtype={buildtype}" in cmd
    else:
        cmd = projects._cmake_configure(pb, env)
        assert f"-DCMAKE_BUILD_TYPE={cmake_type}" in cmd
    assert cmd[-2:] == ["-Dwarning_level=2", "-DX=a b"]  # last: an option of the caller's wins


MESON_FAILED = """\
$ meson setup /b /p --cross-file /b.ini
# exit status 1: meson.build:5:8: ERROR: Command `/py /i/enginegen.py /p/engine.toml -o /b` failed with status 1.
--- stdout
The Meson build system
meson.build:5:8: ERROR: Command `/py /i/enginegen.py /p/engine.toml -o /b` failed with status 1.
--- stderr
"""
MESON_LOG = """\
Running command: /usr/bin/python3 /i/enginegen.py /p/engine.toml -o /b
--- stdout ---

--- stderr ---
enginegen: variant i8mm dropped: gcc cannot compile i8mm code
enginegen: /p/engine.toml: op sum_s8 has no reference kernel; add kernels/reference/sum_s8_1x1_ref.c (portable C)
"""
CMAKE_FAILED = """\
--- stderr
CMake Error at /i/isaforge-kernels.cmake:21 (message):
   isaforge_add_kernel_library(ecm): /p/k.S is assembly and the ASM language is not enabled; add it
Call Stack (most recent call first):
"""


def test_a_failed_configure_is_told_by_the_generators_line_or_cmakes_error(tmp_path):
    log = write(tmp_path, "configure.log", MESON_FAILED)
    builddir = tmp_path / "b"
    assert projects.configure_reason(builddir, log) == ""  # Meson's log is not there: nothing better than the error
    write(builddir, "meson-logs/meson-log.txt", MESON_LOG)
    assert projects.configure_reason(builddir, log) == (
        "enginegen: /p/engine.toml: op sum_s8 has no reference kernel; add kernels/reference/sum_s8_1x1_ref.c "
        "(portable C)"
    )
    # the generator's notes in Meson's log are no reason for a failure that is not the generator's
    write(tmp_path, "other.log", 'meson.build:9:0: ERROR: Unknown variable "x".\n')
    assert projects.configure_reason(builddir, tmp_path / "other.log") == ""
    assert projects.configure_reason(tmp_path / "c", write(tmp_path, "cmake.log", CMAKE_FAILED)) == (
        "isaforge_add_kernel_library(ecm): /p/k.S is assembly and the ASM language is not enabled; add it"
    )
    write(
        tmp_path, "cmake2.log", f"--- stderr\n{MESON_LOG.splitlines()[-1]}\nCMake Error at x.txt:3 (execute_process):\n"
    )
    assert projects.configure_reason(tmp_path / "c", tmp_path / "cmake2.log").startswith("enginegen: /p/engine.toml")
