"""A catalogue inconsistent with itself is refused when loaded, naming the entry at fault."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from isaforge.catalogue import CATALOGUE_PATH, Catalogue, CatalogueError, load


def _catalogue_with(tmp_path: Path, extra: str) -> Catalogue:
    path = tmp_path / "isa.toml"
    path.write_text(CATALOGUE_PATH.read_text() + extra)
    return load(path)


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ('[cpu_part."0x41:0xfff"]\nname = "x"\nfeatures = ["neon", "avx512"]\n', "unknown feature avx512"),
        ('[cpu_part."0x41:0xfff"]\nname = "x"\nfeatures = ["sve"]\n', "lists sve without fp16, neon"),
        ('[cpu_part."0x41:0xfff"]\nname = "cortex-a55"\nfeatures = ["neon"]\n', "share a name"),
    ],
)
def test_bad_cpu_parts_are_refused(tmp_path: Path, entry: str, why: str) -> None:
    with pytest.raises(CatalogueError, match=why):
        _catalogue_with(tmp_path, entry)


_VARIANT = '[variant.zz]\nrequires = []\narches = ["aarch64"]\nprefer = ["gemm_f32_8x8_zz", "gemm_f32_1x8_zz"]\n'


@pytest.mark.parametrize("entry", ["gemm_f32_1x4_zz = 2", "gemm_f32_1x8_zz = 0", 'gemm_f32_1x8_zz = "2"'])
def test_tail_rows_name_a_preferred_kernel_and_rows(tmp_path: Path, entry: str) -> None:
    with pytest.raises(CatalogueError, match="variant zz: `tail_rows` gives gemm_f32_1x"):
        _catalogue_with(tmp_path, _VARIANT + f"tail_rows = {{ {entry} }}\n")


def test_tail_rows_are_read_per_kernel(tmp_path: Path) -> None:
    cat = _catalogue_with(tmp_path, _VARIANT + "tail_rows = { gemm_f32_1x8_zz = 3 }\n")
    assert cat.variant("zz").tail_rows_on("aarch64") == {"gemm_f32_1x8_zz": 3}


def test_tail_rows_per_arch_hold_on_their_arch(tmp_path: Path) -> None:
    entry = "tail_rows = { gemm_f32_1x8_zz = { aarch64 = 3 }, gemm_f32_8x8_zz = 5 }\n"
    cat = _catalogue_with(tmp_path, _VARIANT.replace('["aarch64"]', '["aarch64", "arm"]') + entry)
    assert cat.variant("zz").tail_rows_on("aarch64") == {"gemm_f32_1x8_zz": 3, "gemm_f32_8x8_zz": 5}
    assert cat.variant("zz").tail_rows_on("arm") == {"gemm_f32_8x8_zz": 5}


def test_tail_rows_name_an_arch_of_the_variant(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError, match=r"gives gemm_f32_1x8_zz 3 on arm: .* per arch of the variant's"):
        _catalogue_with(tmp_path, _VARIANT + "tail_rows = { gemm_f32_1x8_zz = { arm = 3 } }\n")


@pytest.mark.parametrize(
    ("margin", "shown"), [("-1", "-1"), ("100", "100"), ('"2"', "'2'"), ("2.5", "2.5"), ("true", "True")]
)
def test_column_margin_is_a_whole_percentage(tmp_path: Path, margin: str, shown: str) -> None:
    with pytest.raises(CatalogueError, match=f"variant zz: `column_margin` is {re.escape(shown)}:"):
        _catalogue_with(tmp_path, _VARIANT + f"column_margin = {margin}\n")
