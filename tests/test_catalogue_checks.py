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
