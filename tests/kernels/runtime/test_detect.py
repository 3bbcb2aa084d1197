"""The /proc/cpuinfo fallbacks under QEMU: the Features line's parser on real-looking lines of 32-bit and arm64
kernels, and the MIDR fallback (ISAFORGE_DETECT=midr) on the CPU parts QEMU's models report.

tests/kernels/test_detect.c holds the lines and texts and the expected masks per arch; the parsers read the
catalogue's generated tables, so this also checks that arm rows carry the arm64 names a 32-bit process may see.
"""

from __future__ import annotations

import pytest

from isaforge.catalogue import load
from isaforge.pytest_plugin import QemuRunner, TargetCpu

# QEMU's `max` is no real core, and its MIDR says so in two ways (QEMU 10, guest /proc/cpuinfo): on aarch64 it is
# QEMU's own implementer 0x00 with part 0x051, in no table, so the fallback finds nothing; on arm it is a Cortex-A57
# (0x41:0xd07), an Armv8.0 core, so the fallback finds that core's features: fewer than the model has. The name of
# the part the table gives for it, per arch (None: no part).
MAX_STAND_IN: dict[str, str | None] = {"aarch64": None, "arm": "cortex-a57"}


@pytest.mark.cpus(["max"])
def test_features_lines_of_both_kernels_parse_to_the_expected_masks(
    target_cpu: TargetCpu, qemu_run: QemuRunner
) -> None:
    result = qemu_run(target_cpu.build, target_cpu.cpu, "tests/kernels/test_detect")
    assert result.returncode == 0, result.describe()
    last = result.stdout.strip().splitlines()[-1]
    assert last.endswith(" 0 failed") and not last.startswith("0 checks"), last


def test_midr_fallback_finds_the_models_features(target_cpu: TargetCpu, info) -> None:
    """Every named model reports its own part, which the part table (catalogue [cpu_part.*], named like the model)
    must map to exactly the model's features ([cpu.<arch>]); `max` gets what its stand-in part has."""
    cat = load()
    arch, model = target_cpu.build.arch_name, target_cpu.cpu.split(",")[0]
    model_features = set(target_cpu.expected_features)
    if model == "max":
        stand_in = MAX_STAND_IN[arch]
        expected = set(cat.cpu_part_features(arch, cat.cpu_part(stand_in))) if stand_in else set()
        assert expected < model_features  # the MIDR fallback is conservative: never more than the core has
    else:
        # A model without a part entry fails here (CatalogueError): each QEMU model's part belongs in the table.
        expected = set(cat.cpu_part_features(arch, cat.cpu_part(model)))
        assert expected == model_features, "the part table and the model table disagree"
        assert expected  # every model has neon at least: a parser that finds nothing cannot pass
    got = info(target_cpu, ISAFORGE_DETECT="midr")
    assert got["detect_source"] == "midr"
    assert set(got["detected"]) == expected
    assert got["active"] == got["detected"]
