"""The modeled cores' ISA and scheduling models, from the real clang-19 and llvm-mca-19."""

from __future__ import annotations

from isaforge.bench.measure.mca import cores
from isaforge.catalogue import load


def test_core_isa_from_llvm_agrees_with_the_catalogue():
    cpus = load().cpus["aarch64"]
    for core in ("neoverse-n1", "neoverse-n2", "neoverse-v1", "cortex-a76", "cortex-a710"):
        assert cores.core_features(core) == set(cpus[core]), core
    assert cores.core_features("neoverse-v2") == cores.core_features("neoverse-n2")


def test_marketing_names_map_to_modeled_cores():
    got = {row["mcpu"]: (row["llvm_model"], row["modeled_as"]) for row in cores.core_map()}
    assert got["cortex-a710"] == ("N2", "neoverse-n2")
    assert got["cortex-x2"] == ("N2", "neoverse-n2")
    assert got["cortex-a76"][1] == "neoverse-n1"  # LLVM 19 has no A76 model: the N1 stands in
    for core in cores.CORES:
        assert got[core][1] == core
