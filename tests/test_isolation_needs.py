"""Naming what a violating instruction needs, with the real assembler: the smallest catalogue feature set or level."""

from __future__ import annotations

import shutil

import pytest

from isaforge.catalogue import load
from isaforge.isolation_judge import Instruction
from isaforge.isolation_needs import feature_set_flags, name_needs

CAT = load()
AARCH64 = CAT.arch("aarch64")


def instructions(*lines: str) -> list[Instruction]:
    return [Instruction("f", 4 * i, line, line, False) for i, line in enumerate(lines)]


@pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 missing (ci/install-toolchains.sh)")
def test_each_instruction_is_named_by_the_smallest_set_that_takes_it(tmp_path):
    needs = {
        "smmla v0.4s, v1.16b, v2.16b": "i8mm",
        "ptrue p0.b": "sve or sme",  # streaming SVE: either feature takes it
        "bfmmla z0.s, z1.h, z2.h": "svebf16",  # the one feature that is sve+bf16
        "fadd v0.8h, v1.8h, v2.8h": "fp16",
        "ldaddal x0, x1, [x2]": "armv8.2-a",  # LSE: no feature of the catalogue, its lowest level above v8.0
    }
    assert name_needs(CAT, AARCH64, instructions(*needs), tmp_path) == list(needs.values())
    assert name_needs(CAT, AARCH64, [], tmp_path) == []


@pytest.mark.parametrize("arch", ["aarch64", "arm"])
def test_feature_set_flags_enable_the_features_and_all_they_imply(arch):
    spec = CAT.arch(arch)
    for feature in CAT.arch_features(arch):
        flags = feature_set_flags(CAT, spec, [feature.name])
        assert CAT.implied_closure(arch, feature.name) <= CAT.feature_flags_allow(arch, flags), (feature.name, flags)
    assert feature_set_flags(CAT, spec, []) == list(spec.baseline)
