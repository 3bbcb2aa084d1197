"""The catalogue's entries and the strings they parse: kernel names, layout identities, packer entries."""

from __future__ import annotations

import pytest

from isaforge.catalogue import CatalogueError, Layout, fnv1a32, load, parse_kernel_name, parse_packer


@pytest.mark.parametrize(
    ("bad", "why"),
    [("gemm_f32_8x12", "does not follow"), ("gemm_q4_4x4_neon", "unknown op"), ("gemm_f32_0x4_neon", "does not")],
)
def test_bad_kernel_names_are_refused(bad: str, why: str) -> None:
    with pytest.raises(CatalogueError, match=why):
        parse_kernel_name(bad, load().ops)


def test_layout_ids_are_fnv1a_of_the_canonical_string_not_positions() -> None:
    """Stored buffers carry the id: it must stay what it is today whatever else the catalogue gains."""
    assert fnv1a32("") == 0x811C9DC5 and fnv1a32("a") == 0xE40C292C  # the FNV-1a test vectors
    assert Layout("s8", "s8", 8, 8, 8, "").id == fnv1a32("isaforge-layout-1:s8.8x8x8:align64") == 0x19A25118
    assert Layout("s8", "s8", 8, 4, 8, "sve").id == fnv1a32("isaforge-layout-1:s8.8x4x8.vl:align64")
    ids = {Layout("f32", "f32", 4, 16, 1, s).id for s in ("", "sve", "streaming")}
    assert len(ids) == 3  # scaling, and with which vector length, is part of the layout
    assert Layout("f32", "f32", 4, 16, 1, "streaming").name == "f32.4x16x1.svl"


def test_malformed_packer_entries_are_refused() -> None:
    with pytest.raises(CatalogueError, match="neither 'generic' nor"):
        parse_packer("f32.8x12x1", "a", "a_g4_mr8")
