"""The kernels of a source tree as the catalogue sees them: their declared order, layouts and packers."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from isaforge.catalogue import CATALOGUE_PATH, CatalogueError, LayoutPackers, Packer, load, parse_kernel_name
from tests.conftest import ROOT


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
    text = re.sub(r"^tail_rows = \{ gemm_f32_1x12_neon.*\n", "", text, flags=re.M)  # kernels it no longer prefers
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
