"""isaforge.toolchains.conan_profiles: the Conan host profiles and their QEMU machine files, checked in."""

from __future__ import annotations

import json

import pytest

from isaforge.catalogue import load
from isaforge.toolchains.conan_profiles import (
    conan_files,
    render_conan_profile,
    render_qemu_machine_file,
    stale_conan_files,
)
from isaforge.toolchains.generated import CROSS_HEADER
from isaforge.toolchains.model import CONAN_DIR
from tests.toolchains.common import ALL, IDS, REPO, checked_render

CONAN_FILES = conan_files()


@pytest.mark.parametrize("rel", list(CONAN_FILES), ids=[p.name for p in CONAN_FILES])
def test_checked_in_conan_file_is_up_to_date(rel):
    path = REPO / rel
    assert path.is_file(), f"{rel} missing: run `isaforge toolchain write`"
    assert path.read_text() == CONAN_FILES[rel], f"{rel} is out of date: run `isaforge toolchain write`"


def test_no_stale_conan_files():
    assert stale_conan_files(REPO) == []
    assert sorted(p.name for p in (REPO / CONAN_DIR).iterdir()) == sorted(p.name for p in CONAN_FILES)
    assert len(CONAN_FILES) == len(ALL) + len(load().arches)  # a profile per toolchain, a machine file per arch


def test_stale_conan_file_is_reported(tmp_path):
    folder = tmp_path / CONAN_DIR
    folder.mkdir(parents=True)
    (folder / "riscv64-linux-gnu-gcc").write_text(CROSS_HEADER + "\n[settings]\n")
    (folder / "my-own-profile").write_text("[settings]\nos=Linux\n")  # not generated: left alone
    assert stale_conan_files(tmp_path) == [CONAN_DIR / "riscv64-linux-gnu-gcc"]


def _sections(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith("["):
            current = line.strip("[]")
            out[current] = []
        else:
            out[current].append(line)
    return out


@pytest.mark.parametrize("tc", ALL, ids=IDS)
def test_render_conan_profile(tc):
    text = checked_render(render_conan_profile, tc)
    sections = _sections(text)
    assert list(sections) == ["settings", "buildenv", "conf"]
    settings = dict(line.split("=", 1) for line in sections["settings"])
    assert settings["os"] == "Linux"
    assert settings["arch"] == {"aarch64": "armv8", "arm": "armv7hf"}[tc.arch.name]
    assert settings["compiler"] == tc.compiler.name
    assert settings["compiler.version"] == {"gcc": "12", "clang": "19"}[tc.compiler.name]
    assert settings["build_type"] == "Release"
    env = dict(line.split("=", 1) for line in sections["buildenv"])
    assert env["CC"] == " ".join(tc.c)
    assert env["AR"] == tc.ar and env["STRIP"] == tc.strip
    conf = dict(line.split("=", 1) for line in sections["conf"])
    assert json.loads(conf["tools.build:compiler_executables"])["c"] == tc.c[0]
    assert conf["tools.gnu:pkg_config"] == "pkg-config"
    machine_file = tc.conan_machine_file.name
    assert json.loads(conf["tools.meson.mesontoolchain:extra_machine_files"]) == ["{{ profile_dir }}/" + machine_file]
    assert conf["user.isaforge:qemu_cpu"] == "max"
    assert "can_run" not in text  # cross builds run their programs through the exe_wrapper, never natively
    if tc.compiler.name == "clang":
        target = f"--target={tc.triple}"
        assert json.loads(conf["tools.build:cflags"]) == [target]
        assert json.loads(conf["tools.build:exelinkflags"]) == [target, "-fuse-ld=lld"]
        assert json.loads(conf["tools.build:sharedlinkflags"]) == [target, "-fuse-ld=lld"]
        assert env["CXX"] == f"clang++-19 {target}"
    else:
        assert "tools.build:cflags" not in conf and "tools.build:exelinkflags" not in conf
        assert env["CXX"] == f"{tc.triple}-g++"


@pytest.mark.parametrize("tc", ALL, ids=IDS)
def test_render_conan_profile_with_the_machine_file_by_absolute_path(tc, tmp_path):
    text = render_conan_profile(tc, tmp_path / "x" / "..")
    conf = dict(line.split("=", 1) for line in _sections(text)["conf"])
    included = json.loads(conf["tools.meson.mesontoolchain:extra_machine_files"])
    assert included == [str(tmp_path.resolve() / f"{tc.triple}-qemu.ini")]
    assert "profile_dir" not in text
    assert f"({included[0]})" in text  # the comment names it too


@pytest.mark.parametrize("arch", list(load().arches))
def test_render_qemu_machine_file(arch):
    spec = load().arch(arch)
    text = render_qemu_machine_file(spec)
    assert text.startswith(CROSS_HEADER + "\n")
    assert _sections(text) == {"binaries": [f"exe_wrapper = ['{spec.qemu}', '-L', '{spec.sysroot}']"]}
    assert "-cpu" not in text  # the CPU model comes from QEMU_CPU
