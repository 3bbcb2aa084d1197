"""The catalogue's ISA facts: features, flags, CPU models and parts (the public header generated from them is checked
in test_codegen.py; the kernel inventory in test_kernel_inventory.py)."""

from __future__ import annotations

import pytest

from isaforge.catalogue import CatalogueError, load


def test_sve_exists_only_on_aarch64() -> None:
    cat = load()
    assert "sve" not in [f.name for f in cat.arch_features("arm")]
    assert [v.name for v in cat.arch_variants("arm") if "sve" in v.name] == []


@pytest.mark.parametrize("arch", ["aarch64", "arm"])
def test_variant_flags_enable_exactly_the_variants_features(arch: str) -> None:
    cat = load()
    for v in cat.arch_variants(arch):
        for compiler in cat.compilers:
            flags = cat.variant_flags(arch, compiler, v.name)
            allowed = cat.feature_flags_allow(arch, flags)
            assert allowed == cat.variant_features(arch, v.name) | {"neon"}, (v.name, flags)


def test_baseline_flags() -> None:
    cat = load()
    assert cat.variant_flags("aarch64", "gcc", "ref") == ["-march=armv8-a"]
    arm_baseline = ["-march=armv7-a", "-mfpu=neon-vfpv4", "-mfloat-abi=hard"]
    assert cat.variant_flags("arm", "clang", "neon") == arm_baseline
    assert cat.variant_flags("arm", "gcc", "neon") == [*arm_baseline, "-mfp16-format=ieee"]


def test_arm_fp16_gets_ieee_format_on_gcc_only() -> None:
    cat = load()
    assert "-mfp16-format=ieee" in cat.variant_flags("arm", "gcc", "fp16")
    assert "-mfp16-format=ieee" not in cat.variant_flags("arm", "clang", "fp16")


def test_implications_are_closed() -> None:
    cat = load()
    assert cat.implied_closure("aarch64", "sve2") == {"sve2", "sve", "fp16", "neon"}
    assert cat.variant_features("aarch64", "svei8mm") == {"svei8mm", "sve", "i8mm", "fp16", "neon"}


def test_a_feature_without_an_extension_needs_all_it_implies() -> None:
    """svei8mm has no flag of its own: -march=…+sve+i8mm allows it, +sve or +i8mm alone does not; neon is baseline."""
    cat = load()
    assert cat.feature_flags_allow("aarch64", ["-march=armv8.2-a+i8mm"]) == {"i8mm", "neon"}
    assert cat.feature_flags_allow("aarch64", ["-march=armv8.2-a+sve"]) == {"sve", "fp16", "neon"}
    assert "svei8mm" in cat.feature_flags_allow("aarch64", ["-march=armv8.2-a+sve+i8mm"])
    assert "svebf16" not in cat.feature_flags_allow("aarch64", ["-march=armv8.2-a+sve+i8mm"])
    assert cat.feature_flags_allow("aarch64", ["-march=armv8-a"]) == {"neon"}
    assert cat.feature_flags_allow("arm", ["-march=armv7-a", "-mfpu=neon-vfpv4"]) == {"neon"}


def test_sve_matrix_features_come_from_their_own_hwcap2_bits() -> None:
    """HWCAP2_SVEI8MM = 1 << 9, HWCAP2_SVEBF16 = 1 << 12 (arch/arm64/include/uapi/asm/hwcap.h): not inferred."""
    cat = load()
    assert cat.features["svei8mm"].per_arch["aarch64"].hwcap == ((2, 9),)
    assert cat.features["svebf16"].per_arch["aarch64"].hwcap == ((2, 12),)
    assert {"svei8mm", "svebf16"}.isdisjoint(f.name for f in cat.arch_features("arm"))


def test_every_cpu_model_has_neon_and_only_arch_features() -> None:
    cat = load()
    for arch, models in cat.cpus.items():
        names = {f.name for f in cat.arch_features(arch)}
        for cpu, feats in models.items():
            assert "neon" in feats and set(feats) <= names, cpu


def test_unknown_lookups_name_the_valid_values() -> None:
    cat = load()
    with pytest.raises(CatalogueError, match="choose one of: aarch64-linux-gnu, arm-linux-gnueabihf"):
        cat.arch_by_triple("riscv64-linux-gnu")
    with pytest.raises(CatalogueError, match="cortex-a53"):
        cat.cpu_features("aarch64", "cortex-a7")
    with pytest.raises(CatalogueError, match="unknown CPU model 'cortex-a7' for aarch64"):
        cat.cpu_features("aarch64", "cortex-a7,sve=off")  # the model is named, without its QEMU properties


def test_a_model_with_qemu_properties_has_the_models_features() -> None:
    cat = load()
    assert cat.cpu_features("aarch64", "max,sve-default-vector-length=16") == cat.cpu_features("aarch64", "max")


# -- CPU parts (the MIDR fallback) ------------------------------------------------------------------------------


def test_cpu_parts_named_like_a_qemu_model_list_that_models_features() -> None:
    """The part table and the model table are two views of one core: where a part is a model, they agree."""
    cat = load()
    checked = 0
    for arch, models in cat.cpus.items():
        for model, feats in models.items():
            parts = [p for p in cat.cpu_parts.values() if p.name == model]
            if parts:
                assert set(cat.cpu_part_features(arch, parts[0])) == set(feats), (arch, model)
                checked += 1
    assert checked >= 10  # every named model of both arches (max is no part)


def test_cpu_parts_keep_only_the_arch_features_on_arm() -> None:
    cat = load()
    n2 = cat.cpu_part("neoverse-n2")
    assert (n2.implementer, n2.part, n2.key) == (0x41, 0xD49, "0x41:0xd49")
    assert "sve2" in cat.cpu_part_features("aarch64", n2)
    assert cat.cpu_part_features("arm", n2) == ("neon", "fp16", "dotprod", "i8mm", "bf16")
    assert set(cat.cpu_part_features("arm", cat.cpu_part("a64fx"))) == {"neon", "fp16"}


def test_cpu_parts_cover_the_cores_seed_engines_look_up() -> None:
    names = {p.name for p in load().cpu_parts.values()}
    wanted = {"cortex-a55", "cortex-a75", "cortex-a76", "cortex-a77", "cortex-a78", "cortex-x1", "cortex-a710"}
    wanted |= {"cortex-x2", "cortex-a510", "neoverse-n1", "neoverse-n2", "neoverse-v1"}
    assert wanted <= names
