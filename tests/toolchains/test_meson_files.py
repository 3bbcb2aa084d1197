"""isaforge.toolchains.meson_files: the Meson cross files, checked in, and used for real."""

from __future__ import annotations

import re
import subprocess

import pytest

from isaforge.toolchains.meson_files import render_cross_file, stale_cross_files
from isaforge.toolchains.model import CROSS_DIR
from isaforge.toolchains.probing import probe
from tests.toolchains.common import ALL, HELLO_C, IDS, REPO, checked_render, max_cpu_hwcaps, meson_and_env


@pytest.mark.parametrize("tc", ALL, ids=IDS)
def test_checked_in_cross_file_is_up_to_date(tc):
    path = REPO / tc.cross_file
    assert path.is_file(), f"{tc.cross_file} missing: run `isaforge toolchain write`"
    assert path.read_text() == render_cross_file(tc), f"{tc.cross_file} is out of date: run `isaforge toolchain write`"


def test_no_stale_cross_files():
    assert stale_cross_files(REPO) == []
    assert sorted(p.name for p in (REPO / CROSS_DIR).glob("*.ini")) == sorted(f"{n}.ini" for n in IDS)


@pytest.mark.parametrize("tc", ALL, ids=IDS)
def test_render_cross_file(tc):
    text = checked_render(render_cross_file, tc)
    lines = text.splitlines()
    c_line = "c = [" + ", ".join(f"'{part}'" for part in tc.compiler.command(tc.arch)) + "]"
    assert c_line in lines
    assert f"exe_wrapper = ['{tc.arch.qemu}', '-L', '{tc.arch.sysroot}']" in lines
    assert "-cpu" not in text  # the CPU model comes from QEMU_CPU at test time
    assert "pkg-config = 'pkg-config'" in lines
    assert f"isaforge_arch = '{tc.arch.name}'" in lines
    assert f"isaforge_triple = '{tc.triple}'" in lines
    assert f"cpu_family = '{tc.arch.meson_cpu_family}'" in lines
    assert f"cpu = '{tc.arch.meson_cpu}'" in lines
    assert "endian = 'little'" in lines
    assert "system = 'linux'" in lines
    if tc.compiler.name == "clang":
        assert "c_link_args = ['-fuse-ld=lld']" in lines
        assert "ar = 'llvm-ar-19'" in lines
    else:
        assert "[built-in options]" not in lines
        assert f"ar = '{tc.triple}-gcc-ar'" in lines


# -- used for real: meson setup, compile, link, and `meson test` under QEMU -----------------------------------------
MESON_BUILD = """\
project('t', 'c')
assert(meson.is_cross_build(), 'not a cross build')
assert(meson.get_external_property('isaforge_arch') == '{arch}')
assert(meson.get_external_property('isaforge_triple') == '{triple}')
assert(host_machine.cpu_family() == '{family}')
assert(meson.get_compiler('c').get_id() == '{compiler}')
exe = executable('hello', 'hello.c', c_args: ['-DISF_EXPECT_{macro}'])
test('hello', exe, args: ['{hwcap1:#x}', '{hwcap2:#x}'])
"""


def test_cross_file_builds_and_runs_under_qemu(cross_build, tmp_path):
    tc = cross_build.toolchain
    result = probe(tc)
    if not result.usable:
        pytest.skip(f"{tc.name} unusable here: {'; '.join(result.reasons)}")
    meson, env = meson_and_env()
    src = tmp_path / "src"
    src.mkdir()
    hwcap1, hwcap2 = max_cpu_hwcaps(tc.arch.name)
    (src / "meson.build").write_text(
        MESON_BUILD.format(
            arch=tc.arch.name,
            triple=tc.triple,
            family=tc.arch.meson_cpu_family,
            compiler=tc.compiler.name,
            macro=tc.arch.name.upper(),
            hwcap1=hwcap1,
            hwcap2=hwcap2,
        )
    )
    (src / "hello.c").write_text(HELLO_C)
    build = tmp_path / "build"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([*meson, *args], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, f"meson {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
        return proc

    run("setup", "--cross-file", str(REPO / tc.cross_file), str(build), str(src))
    run("compile", "-C", str(build))
    proc = run("test", "-C", str(build), "--print-errorlogs", "--verbose")
    assert "isaforge cross test ok" in proc.stdout
    assert re.search(r"^Ok:\s+1\s*$", proc.stdout, re.MULTILINE), proc.stdout
    log = (build / "meson-logs" / "testlog.txt").read_text()
    assert tc.arch.qemu in log  # the test really went through the exe_wrapper
    if tc.compiler.link_args:
        # lld, not the GNU linker, made the executable
        comment = subprocess.run(
            ["llvm-readelf-19", "-p", ".comment", str(build / "hello")], capture_output=True, text=True, check=False
        )
        if comment.returncode == 0:
            assert re.search(r"Linker: .*LLD", comment.stdout), comment.stdout
