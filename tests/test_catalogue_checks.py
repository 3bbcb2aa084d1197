"""A catalogue inconsistent with itself is refused when loaded, naming the entry at fault."""

from __future__ import annotations

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
    assert dict(cat.variant("zz").tail_rows) == {"gemm_f32_1x8_zz": 3}
