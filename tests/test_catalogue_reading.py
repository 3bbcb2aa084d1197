"""isa.toml's tables read into entries: malformed entries are refused with the form they should have."""

from __future__ import annotations

import pytest

from isaforge.catalogue import CatalogueError, load
from isaforge.catalogue_reading import read_cpu_parts, read_variants


def test_a_cpu_part_key_must_be_a_midr_implementer_and_part() -> None:
    with pytest.raises(CatalogueError, match="must be <implementer>:<part>"):
        read_cpu_parts({"0x41:0xd5": {"name": "x", "features": ["neon"]}})
    (part,) = read_cpu_parts({"0x41:0xd05": {"name": "cortex-a55", "features": ["neon"]}}).values()
    assert (part.implementer, part.part, part.key) == (0x41, 0xD05, "0x41:0xd05")


def test_a_cpu_parts_l1d_is_a_power_of_two_kib_or_left_out() -> None:
    entry = {"name": "neoverse-n1", "features": ["neon"]}
    assert read_cpu_parts({"0x41:0xd0c": {**entry, "l1d_kib": 64}})[(0x41, 0xD0C)].l1d_kib == 64
    assert read_cpu_parts({"0x41:0xd0c": entry})[(0x41, 0xD0C)].l1d_kib == 0  # the implementer's choice
    for bad in (48, -64, "64", 64.0, True):
        with pytest.raises(CatalogueError, match="l1d_kib must be a power of two"):
            read_cpu_parts({"0x41:0xd0c": {**entry, "l1d_kib": bad}})


def test_a_variant_scales_with_sve_streaming_or_nothing() -> None:
    raw = {"requires": ["sve"], "arches": ["aarch64"]}
    kinds = {value: read_variants({"v": {**raw, "scalable": value}})["v"].scalable for value in (True, False)}
    assert kinds == {True: "sve", False: ""}
    assert read_variants({"v": {**raw, "scalable": "streaming"}})["v"].scalable == "streaming"
    with pytest.raises(CatalogueError, match="scalable is true, false or \"streaming\", not 'wide'"):
        read_variants({"v": {**raw, "scalable": "wide"}})


def test_variants_rank_in_file_order_and_ops_in_index_order() -> None:
    cat = load()
    ranks = [v.rank for v in cat.variants.values()]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)
    assert [op.index for op in cat.ops.values()] == list(range(len(cat.ops)))
