"""qemu.py: the SME2-capable QEMU (catalogue [qemu_sme]) that ci/install-toolchains.sh extracts from Debian testing
beside bookworm-backports' qemu-user, and which only SME2 runs use."""

from __future__ import annotations

import dataclasses
import subprocess

import pytest

from isaforge import qemu
from isaforge.catalogue import load
from isaforge.errors import IsaforgeError

# smstart; zero {zt0} (an SME2 instruction); smstop: words as llvm-mc-19 -mattr=+sme2 encodes them.
SME2_PROGRAM = r"""
int main(void) {
    __asm__ volatile(".inst 0xd503477f\n\t.inst 0xc0480001\n\t.inst 0xd503467f" ::: "memory");
    return 0;
}
"""


@pytest.fixture(scope="module")
def sme2_program(tmp_path_factory):
    src = tmp_path_factory.mktemp("sme2") / "sme2.c"
    src.write_text(SME2_PROGRAM)
    program = src.with_suffix("")
    subprocess.run(["aarch64-linux-gnu-gcc", "-O1", str(src), "-o", str(program)], check=True)
    return program


def test_the_sme_qemu_is_there_and_recent_enough():
    spec = load().qemu_sme
    binary = qemu.sme_binary(load().arch("aarch64"))
    assert binary.parent == spec.dir and qemu.version(binary) >= spec.min_version


def test_sme2_runs_under_the_sme_qemu_and_nowhere_else(sme2_program):
    arch = load().arch("aarch64")
    ran = qemu.run(arch, "qemu-sme:max", sme2_program)
    assert ran.returncode == 0, ran.describe()
    assert ran.argv[0] == str(qemu.sme_binary(arch)) and ran.argv[ran.argv.index("-cpu") + 1] == "max"
    off = qemu.run(arch, "qemu-sme:max,sme=off", sme2_program)  # the negative model: no SME at all
    assert off.signal_name == "SIGILL", off.describe()
    if qemu.version(arch.qemu) < load().qemu_sme.min_version:  # bookworm-backports' 10.0: SME but not SME2
        system = qemu.run(arch, "max", sme2_program)
        assert system.signal_name == "SIGILL", system.describe()


def test_a_missing_sme_qemu_is_one_line_naming_the_fix(monkeypatch, tmp_path):
    cat = load()
    elsewhere = dataclasses.replace(cat, qemu_sme=dataclasses.replace(cat.qemu_sme, dir=tmp_path / "none"))
    monkeypatch.setattr(qemu, "load", lambda: elsewhere)
    with pytest.raises(IsaforgeError, match=r"none/qemu-aarch64: missing, SME2 runs need QEMU >= 10\.1; run ci/"):
        qemu.sme_binary(cat.arch("aarch64"))
    with pytest.raises(IsaforgeError, match="SME exists on aarch64 only"):
        qemu.sme_binary(cat.arch("arm"))


def test_an_unknown_sme_model_names_the_ones_there_are(sme2_program):
    with pytest.raises(IsaforgeError, match=r"unknown CPU model 'qemu-sme:cortex-a53' for aarch64; .*qemu-sme:max"):
        qemu.run(load().arch("aarch64"), "qemu-sme:cortex-a53", sme2_program)
