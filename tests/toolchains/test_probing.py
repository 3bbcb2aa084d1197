"""isaforge.toolchains.probing: whether each toolchain works here, and what to install when not."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from isaforge.toolchains.model import Toolchain, toolchain
from isaforge.toolchains.probing import parse_qemu_version, probe
from tests.toolchains.common import ALL, IDS


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("qemu-aarch64 version 10.0.2 (Debian 1:10.0.2+ds-2+deb13u1~bpo12+1)\nCopyright (c) 2003-2025", (10, 0, 2)),
        ("qemu-arm version 7.2.0 (Debian 1:7.2+dfsg-7)", (7, 2, 0)),
        ("qemu-arm version 9.1", (9, 1, 0)),
        ("no version here", None),
    ],
)
def test_parse_qemu_version(text, version):
    assert parse_qemu_version(text) == version


@pytest.mark.parametrize("tc", ALL, ids=IDS)
def test_probe_usable_here(tc):
    result = probe(tc)
    assert result.usable, f"{tc.name}: {'; '.join(result.reasons)}"
    assert result.status == "usable"


@pytest.mark.parametrize("tc", ALL, ids=IDS)
def test_probe_with_nothing_on_path(tc, tmp_path):
    result = probe(tc, path=str(tmp_path))
    assert not result.usable
    assert result.status == "unusable"
    text = "\n".join(result.reasons)
    assert f"{tc.compiler.command(tc.arch)[0]} not found" in text
    packages = tc.compiler.debian_packages or tc.arch.debian_packages
    assert f"apt-get install {' '.join(packages)}" in text
    assert "ci/install-toolchains.sh" in text
    assert f"{tc.arch.qemu} not found" in text


def _link_tools(folder: Path, names: list[str]) -> None:
    for name in names:
        found = shutil.which(name)
        assert found, name
        (folder / name).symlink_to(found)


def _tools(tc: Toolchain) -> list[str]:
    return [tc.c[0], tc.ar, tc.strip, *([tc.linker] if tc.linker else []), tc.arch.qemu]


@pytest.mark.parametrize("tc", [tc for tc in ALL if tc.linker], ids=[tc.name for tc in ALL if tc.linker])
def test_probe_reports_missing_linker(tc, tmp_path):
    _link_tools(tmp_path, [t for t in _tools(tc) if t != tc.linker])
    result = probe(tc, path=str(tmp_path))
    assert result.reasons == (
        f"{tc.linker} not found; apt-get install clang-19 lld-19 llvm-19 (or run ci/install-toolchains.sh)",
    )


@pytest.mark.parametrize("version", ["7.2.0", "9.2.4"])
def test_probe_reports_old_qemu(tmp_path, version):
    tc = toolchain("aarch64-linux-gnu", "gcc")
    _link_tools(tmp_path, [t for t in _tools(tc) if t != tc.arch.qemu])
    fake = tmp_path / tc.arch.qemu
    fake.write_text(f"#!/bin/sh\necho 'qemu-aarch64 version {version} (Debian)'\n")
    fake.chmod(0o755)
    result = probe(tc, path=str(tmp_path))
    assert len(result.reasons) == 1
    assert f"qemu-aarch64 is version {version}, older than 10" in result.reasons[0]


def test_probe_reports_unparseable_qemu(tmp_path):
    tc = toolchain("arm-linux-gnueabihf", "gcc")
    _link_tools(tmp_path, [t for t in _tools(tc) if t != tc.arch.qemu])
    fake = tmp_path / tc.arch.qemu
    fake.write_text("#!/bin/sh\necho 'something else'\n")
    fake.chmod(0o755)
    (reason,) = probe(tc, path=str(tmp_path)).reasons
    assert reason.startswith("`qemu-arm --version` reports no version")


def test_probe_reports_missing_sysroot(tmp_path):
    tc = toolchain("aarch64-linux-gnu", "gcc")
    gone = tmp_path / "no-sysroot"
    moved = Toolchain(dataclasses.replace(tc.arch, sysroot=str(gone)), tc.compiler)
    (reason,) = probe(moved).reasons
    assert reason == (
        f"sysroot {gone} missing; apt-get install gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu "
        "libc6-dev-arm64-cross (or run ci/install-toolchains.sh)"
    )
