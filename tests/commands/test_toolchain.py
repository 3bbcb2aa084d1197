"""`isaforge toolchain list|write|show`, run as the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from isaforge import source_tree
from isaforge.toolchains.generated import CROSS_HEADER
from isaforge.toolchains.model import toolchain, toolchains
from tests.conftest import assert_one_line_error
from tests.recipes import conan_env

REPO = Path(source_tree.__file__).resolve().parents[2]
SRC = REPO / "src"
TRIPLES = ["aarch64-linux-gnu", "arm-linux-gnueabihf"]
COMPILERS = ["gcc", "clang"]


def isaforge(
    *args: str, path: str | None = None, pythonpath: Path = SRC, cwd: Path = REPO
) -> subprocess.CompletedProcess[str]:
    """Run `python -m isaforge ARGS` with this Python (by absolute path, so PATH may be anything)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "QEMU_CPU")}
    env["PYTHONPATH"] = str(pythonpath)
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-m", "isaforge", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


# -- list -------------------------------------------------------------------------------------------------------


def test_list_json_all_four_usable_here():
    proc = isaforge("toolchain", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert {(r["target"], r["compiler"]) for r in rows} == {(t, c) for t in TRIPLES for c in COMPILERS}
    for row in rows:
        assert row["usable"] is True, f"{row['target']} {row['compiler']}: {row['reasons']}"
        assert row["status"] == "usable"
        assert row["reasons"] == []
        assert row["cross_file"] == f"toolchains/meson/{row['target']}-{row['compiler']}.ini"


def test_list_table_all_four_usable_here():
    proc = isaforge("toolchain", "list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["target", "compiler", "status"]
    assert sorted(line.split() for line in lines[1:]) == sorted([t, c, "usable"] for t in TRIPLES for c in COMPILERS)


def test_list_with_empty_path_names_what_to_install(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = isaforge("toolchain", "list", path=str(empty))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "usable" in out
    assert " usable\n" not in out  # every row is unusable
    assert out.count("unusable: ") == 4
    assert "aarch64-linux-gnu-gcc not found; apt-get install gcc-aarch64-linux-gnu " in out
    assert "arm-linux-gnueabihf-gcc not found; apt-get install gcc-arm-linux-gnueabihf " in out
    assert "clang-19 not found; apt-get install clang-19 lld-19 llvm-19 (or run ci/install-toolchains.sh)" in out
    assert "qemu-aarch64 not found" in out
    assert "qemu-arm not found" in out

    rows = json.loads(isaforge("toolchain", "list", "--json", path=str(empty)).stdout)
    assert [r["usable"] for r in rows] == [False] * 4
    assert all(r["status"] == "unusable" and r["reasons"] for r in rows)


def test_list_with_only_clang_missing(tmp_path):
    # Everything GCC needs is on PATH, clang/lld/llvm are not: gcc rows usable, clang rows say what to install.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tc in toolchains():
        if tc.compiler.name == "gcc":
            for tool in [tc.c[0], tc.ar, tc.strip, tc.arch.qemu]:
                if not (bindir / tool).exists():
                    (bindir / tool).symlink_to(shutil.which(tool))
    rows = json.loads(isaforge("toolchain", "list", "--json", path=str(bindir)).stdout)
    by_key = {(r["target"], r["compiler"]): r for r in rows}
    for triple in TRIPLES:
        assert by_key[triple, "gcc"]["usable"], by_key[triple, "gcc"]["reasons"]
        clang = by_key[triple, "clang"]
        assert not clang["usable"]
        assert clang["reasons"] == [
            "clang-19 not found; apt-get install clang-19 lld-19 llvm-19 (or run ci/install-toolchains.sh)"
        ]


# -- show -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("target", TRIPLES)
def test_show_prints_the_cross_file(target, compiler):
    proc = isaforge("toolchain", "show", "--target", target, "--compiler", compiler)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (REPO / "toolchains" / "meson" / f"{target}-{compiler}.ini").read_text()


@pytest.mark.parametrize("target", TRIPLES)
def test_show_cmake_prints_the_toolchain_file(target):
    proc = isaforge("toolchain", "show", "--target", target, "--compiler", "clang", "--cmake")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (REPO / "toolchains" / "cmake" / f"{target}-clang.cmake").read_text()


def included_machine_files(profile: Path) -> list[Path]:
    """The Meson machine files a Conan host profile includes, as Conan itself resolves them (`{{ profile_dir }}`)."""
    proc = conan_env.home().run("profile", "show", "-pr:h", str(profile), "-pr:b", "default", "--format=json")
    assert proc.returncode == 0, proc.stderr
    conf = json.loads(proc.stdout)["host"]["conf"]
    return [Path(p) for p in conf["tools.meson.mesontoolchain:extra_machine_files"]]


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("target", TRIPLES)
def test_show_conan_prints_a_profile_that_works_saved_anywhere(target, compiler, tmp_path):
    proc = isaforge("toolchain", "show", "--target", target, "--compiler", compiler, "--conan", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    saved = tmp_path / "elsewhere" / "my-profile"
    saved.parent.mkdir()
    saved.write_text(proc.stdout)
    tc = toolchain(target, compiler)
    # The same profile as the checked-in one, but for the machine file it includes: by absolute path, not next to it.
    machine = REPO / tc.conan_machine_file
    assert proc.stdout == (REPO / tc.conan_profile).read_text().replace(
        f"{tc.conan_machine_file.name} next to this file", str(machine)
    ).replace("{{ profile_dir }}/" + tc.conan_machine_file.name, str(machine))
    included = included_machine_files(saved)
    assert included == [machine]
    assert all(path.is_file() for path in included)


def test_show_conan_without_the_machine_file_to_include_says_write_out(tmp_path):
    root = _copy_checkout(tmp_path / "checkout")  # a checkout whose toolchains/conan/ was never written
    proc = isaforge(
        "toolchain", "show", "--target", "aarch64-linux-gnu", "--compiler", "gcc", "--conan",
        pythonpath=root / "src", cwd=tmp_path,
    )  # fmt: skip
    assert_one_line_error(proc, "aarch64-linux-gnu-qemu.ini", "missing or out of date", "toolchain write --out DIR")
    assert proc.stdout == ""


def test_show_unknown_target():
    proc = isaforge("toolchain", "show", "--target", "riscv64-linux-gnu", "--compiler", "gcc")
    assert_one_line_error(proc, "riscv64-linux-gnu", *TRIPLES)
    assert proc.stdout == ""


def test_show_unknown_compiler():
    proc = isaforge("toolchain", "show", "--target", "aarch64-linux-gnu", "--compiler", "icc")
    assert_one_line_error(proc, "icc", *COMPILERS)


# -- write ------------------------------------------------------------------------------------------------------


def test_write_check_passes_on_this_checkout():
    proc = isaforge("toolchain", "write", "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _copy_checkout(dest: Path) -> Path:
    """A throwaway source checkout: pyproject.toml, meson.build and src/isaforge only, so `write` has a root to
    write into."""
    dest.mkdir()
    for name in ("pyproject.toml", "meson.build"):
        shutil.copy(REPO / name, dest / name)
    shutil.copytree(SRC / "isaforge", dest / "src" / "isaforge", ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _snapshot(root: Path) -> dict[str, bytes]:
    # Python's own bytecode cache (written when PYTHONDONTWRITEBYTECODE is unset) is not the command writing.
    files = (p for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts)
    return {str(p.relative_to(root)): p.read_bytes() for p in files}


def test_write_then_check_in_a_fresh_checkout(tmp_path):
    root = _copy_checkout(tmp_path / "checkout")
    src = root / "src"
    before = _snapshot(root)

    proc = isaforge("toolchain", "write", "--check", pythonpath=src, cwd=tmp_path)
    assert proc.returncode == 1
    assert _snapshot(root) == before  # --check writes nothing
    for triple in TRIPLES:
        for compiler in COMPILERS:
            assert f"out of date: toolchains/meson/{triple}-{compiler}.ini" in proc.stdout
            assert f"out of date: toolchains/cmake/{triple}-{compiler}.cmake" in proc.stdout
    assert "out of date: meson.options" in proc.stdout

    proc = isaforge("toolchain", "write", pythonpath=src, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for tc in toolchains():
        assert (root / tc.cross_file).read_text() == (REPO / tc.cross_file).read_text()
        assert (root / tc.cmake_toolchain).read_text() == (REPO / tc.cmake_toolchain).read_text()
    assert (root / "meson.options").read_text() == (REPO / "meson.options").read_text()

    assert isaforge("toolchain", "write", "--check", pythonpath=src, cwd=tmp_path).returncode == 0

    # One edited file and one stale generated file: --check names exactly those, write fixes both.
    edited = root / "toolchains" / "meson" / "arm-linux-gnueabihf-clang.ini"
    edited.write_text(edited.read_text().replace("qemu-arm", "qemu-armeb"))
    stale = root / "toolchains" / "meson" / "mips-linux-gnu-gcc.ini"
    stale.write_text(CROSS_HEADER + "\n")
    hand_written = root / "toolchains" / "meson" / "local.ini"
    hand_written.write_text("[binaries]\n")
    proc = isaforge("toolchain", "write", "--check", pythonpath=src, cwd=tmp_path)
    assert proc.returncode == 1
    assert [line for line in proc.stdout.splitlines() if line.startswith(("out of date:", "stale:"))] == [
        "out of date: toolchains/meson/arm-linux-gnueabihf-clang.ini",
        "stale: toolchains/meson/mips-linux-gnu-gcc.ini",
    ]
    assert isaforge("toolchain", "write", pythonpath=src, cwd=tmp_path).returncode == 0
    assert not stale.exists()
    assert hand_written.exists()  # not generated by isaforge: left alone
    assert "qemu-armeb" not in edited.read_text()
    assert isaforge("toolchain", "write", "--check", pythonpath=src, cwd=tmp_path).returncode == 0


def test_write_out_writes_every_file_the_profiles_include_without_a_checkout(tmp_path):
    site = tmp_path / "site-packages"  # the package alone, as installed: no checkout around it
    shutil.copytree(SRC / "isaforge", site / "isaforge", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "my-engine" / "toolchains"
    proc = isaforge("toolchain", "write", "--out", str(out), pythonpath=site, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert written == sorted(
        [f"meson/{t}-{c}.ini" for t in TRIPLES for c in COMPILERS]
        + [f"cmake/{t}-{c}.cmake" for t in TRIPLES for c in COMPILERS]
        + [f"conan/{t}-{c}" for t in TRIPLES for c in COMPILERS]
        + [f"conan/{t}-qemu.ini" for t in TRIPLES]
    )
    assert sorted(proc.stdout.splitlines()) == sorted(f"wrote {out / rel}" for rel in written)
    for rel in written:  # the checkout's own files, in the same layout
        assert (out / rel).read_text() == (REPO / "toolchains" / rel).read_text(), rel
    for tc in toolchains():
        included = included_machine_files(out / "conan" / tc.name)
        assert included == [out / "conan" / f"{tc.triple}-qemu.ini"]
        assert all(path.is_file() for path in included)
    assert isaforge("toolchain", "write", "--out", str(out), "--check", pythonpath=site, cwd=tmp_path).returncode == 0
    assert not (tmp_path / "toolchains").exists()  # nothing written beside DIR

    # An edited file is named by --check and rewritten by write; a file of the user's own is left alone.
    edited = out / "conan" / "arm-linux-gnueabihf-qemu.ini"
    edited.write_text("[binaries]\n")
    own = out / "conan" / "my-profile"
    own.write_text("[settings]\n")
    proc = isaforge("toolchain", "write", "--out", str(out), "--check", pythonpath=site, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        f"out of date: {edited}",
        f"isaforge: run `isaforge toolchain write --out {out}` to regenerate them",
    ]
    proc = isaforge("toolchain", "write", "--out", str(out), pythonpath=site, cwd=tmp_path)
    assert proc.stdout == f"wrote {edited}\n"
    assert edited.read_text() == (REPO / "toolchains" / "conan" / "arm-linux-gnueabihf-qemu.ini").read_text()
    assert own.read_text() == "[settings]\n"


def test_write_out_to_a_file_is_one_line(tmp_path):
    target = tmp_path / "toolchains"
    target.write_text("")
    proc = isaforge("toolchain", "write", "--out", str(target), cwd=tmp_path)
    assert_one_line_error(proc, str(target), "not a directory")


def test_write_outside_a_source_checkout(tmp_path):
    site = tmp_path / "site-packages"
    shutil.copytree(SRC / "isaforge", site / "isaforge", ignore=shutil.ignore_patterns("__pycache__"))
    for args in (["write"], ["write", "--check"]):
        proc = isaforge("toolchain", *args, pythonpath=site, cwd=tmp_path)
        assert_one_line_error(proc, "not from a source checkout")
    assert not (tmp_path / "toolchains").exists()
