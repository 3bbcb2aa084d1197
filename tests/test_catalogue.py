"""The catalogue is consistent with itself (the public header generated from it is checked in test_codegen.py)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from isaforge.catalogue import (
    CATALOGUE_PATH,
    Catalogue,
    CatalogueError,
    Layout,
    LayoutPackers,
    Packer,
    fnv1a32,
    load,
    parse_kernel_name,
    parse_packer,
)
from tests.conftest import ROOT


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


@pytest.mark.parametrize(
    ("bad", "why"),
    [("gemm_f32_8x12", "does not follow"), ("gemm_q4_4x4_neon", "unknown op"), ("gemm_f32_0x4_neon", "does not")],
)
def test_bad_kernel_names_are_refused(bad: str, why: str) -> None:
    with pytest.raises(CatalogueError, match=why):
        parse_kernel_name(bad, load().ops)


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


def _catalogue_with(tmp_path: Path, extra: str) -> Catalogue:
    path = tmp_path / "isa.toml"
    path.write_text(CATALOGUE_PATH.read_text() + extra)
    return load(path)


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ('[cpu_part."0x41:0xfff"]\nname = "x"\nfeatures = ["neon", "avx512"]\n', "unknown feature avx512"),
        ('[cpu_part."0x41:0xfff"]\nname = "x"\nfeatures = ["sve"]\n', "lists sve without fp16, neon"),
        ('[cpu_part."0x41:0xd5"]\nname = "x"\nfeatures = ["neon"]\n', "must be <implementer>:<part>"),
        ('[cpu_part."0x41:0xfff"]\nname = "cortex-a55"\nfeatures = ["neon"]\n', "share a name"),
    ],
)
def test_bad_cpu_parts_are_refused(tmp_path: Path, entry: str, why: str) -> None:
    with pytest.raises(CatalogueError, match=why):
        _catalogue_with(tmp_path, entry)


def _tree_with_kernels(root: Path, *names: str) -> Path:
    folder = root / "kernels" / "aarch64" / "neon"
    folder.mkdir(parents=True)
    for name in names:
        (folder / f"{name}.c").write_text(f"ISF_UKERNEL({name}) {{}}\n")
    return root


def test_two_kernels_of_one_op_and_variant_need_a_declared_preference(tmp_path: Path) -> None:
    tree = _tree_with_kernels(tmp_path / "src", "gemm_f32_8x12_neon", "gemm_f32_4x16_neon")
    with pytest.raises(CatalogueError, match=r"list them, most preferred first, in `prefer` of \[variant.neon\]"):
        load().kernels(tree, "aarch64", ["neon"])


def test_declared_preference_orders_kernels_within_a_variant(tmp_path: Path) -> None:
    text = re.sub(
        r"\[variant\.neon\]\nprefer = \[[^]]*\]",
        '[variant.neon]\nprefer = ["gemm_f32_4x16_neon", "gemm_f32_8x12_neon"]',
        CATALOGUE_PATH.read_text(),
    )
    (tmp_path / "isa.toml").write_text(text)
    cat = load(tmp_path / "isa.toml")
    tree = _tree_with_kernels(tmp_path / "src", "gemm_f32_8x12_neon", "gemm_f32_4x16_neon")
    assert cat.best_kernel(tree, "aarch64", ["neon"], {"neon"}, "gemm_f32") == "gemm_f32_4x16_neon"
    # The fp16 op's widened kernels follow the fp32 kernels they run.
    assert cat.best_kernel(tree, "aarch64", ["neon"], {"neon"}, "gemm_f16") == "gemm_f16_4x16_neon"
    dotprod = cat.variant("dotprod").rank * 64
    ranks = sorted(cat.preference(k) for k in cat.kernels(tree, "aarch64", ["neon"]) if k.op == "gemm_f32")
    assert len(set(ranks)) == 2 and max(ranks) < dotprod


# -- packing layouts ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["aarch64", "arm"])
def test_every_kernel_has_a_registered_layout_runnable_wherever_it_runs(arch: str) -> None:
    cat = load()
    kernels = cat.kernels(ROOT, arch, [v.name for v in cat.arch_variants(arch)])
    for k in kernels:
        entry = cat.check_packers(arch, k)
        assert entry.name == cat.layout(k).name
        if k.variant == "ref":  # the baseline's portable packer only
            assert entry.a.generic and entry.b.generic, k.name


def test_layout_follows_from_the_name_widening_and_scaling() -> None:
    cat = load()
    by_name = {k.name: k for k in cat.kernels(ROOT, "aarch64", [v.name for v in cat.arch_variants("aarch64")])}
    assert cat.layout(by_name["gemm_s8_8x8x4_sve"]).name == "s8.8x8x4.vl"
    assert cat.layout(by_name["gemm_bf16_8x12_neon"]).name == "bf16>f32.8x12x1"  # widened: fp32 panels
    layout = cat.layout(by_name["gemm_f32_8x12_neon"])
    assert layout.canonical == "isaforge-layout-1:f32.8x12x1:align64"


def test_layout_ids_are_fnv1a_of_the_canonical_string_not_positions() -> None:
    """Stored buffers carry the id: it must stay what it is today whatever else the catalogue gains."""
    assert fnv1a32("") == 0x811C9DC5 and fnv1a32("a") == 0xE40C292C  # the FNV-1a test vectors
    assert Layout("s8", "s8", 8, 8, 8, "").id == fnv1a32("isaforge-layout-1:s8.8x8x8:align64") == 0x19A25118
    assert Layout("s8", "s8", 8, 4, 8, "sve").id == fnv1a32("isaforge-layout-1:s8.8x4x8.vl:align64")
    ids = {Layout("f32", "f32", 4, 16, 1, s).id for s in ("", "sve", "streaming")}
    assert len(ids) == 3  # scaling, and with which vector length, is part of the layout
    assert Layout("f32", "f32", 4, 16, 1, "streaming").name == "f32.4x16x1.svl"


def test_a_kernel_with_an_unregistered_layout_is_refused_naming_it_and_the_fix() -> None:
    cat = load()
    kernel = parse_kernel_name("gemm_f32_6x16_neon", cat.ops)
    with pytest.raises(CatalogueError) as err:
        cat.packers(kernel)
    message = str(err.value)
    assert "gemm_f32_6x16_neon" in message and "f32.6x16x1" in message
    assert "[layout] in src/isaforge/isa.toml" in message


def test_a_packer_needing_more_than_the_kernel_has_is_refused() -> None:
    """A layout's packers must run wherever its kernels run: a neon kernel cannot use a dotprod packer."""
    cat = load()
    layouts = dict(cat.layouts)
    layouts["f32.8x12x1"] = LayoutPackers("f32.8x12x1", Packer("dotprod", "a_g4_mr8"), Packer("", "generic"))
    bad = dataclasses.replace(cat, layouts=layouts)
    with pytest.raises(CatalogueError, match="needs features the neon variant does not have"):
        bad.check_packers("aarch64", parse_kernel_name("gemm_f32_8x12_neon", cat.ops))


def test_malformed_packer_entries_are_refused() -> None:
    with pytest.raises(CatalogueError, match="neither 'generic' nor"):
        parse_packer("f32.8x12x1", "a", "a_g4_mr8")
