"""`isaforge bench --project`: the example engine copied out of the tree, built with clang for aarch64, and each of its
kernels' hot loops priced by llvm-mca on every core, as libisaforge's are."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from isaforge.bench.measure.mca import cores
from isaforge.bench.measure.mca.analyse import NO_ISA, NO_MACS, OK
from isaforge.bench.scenarios import engine
from isaforge.cli import main
from isaforge.source_tree import repo_root
from isaforge.toolchains.model import toolchains
from isaforge.toolchains.probing import probe

REPO = repo_root()
TOOLCHAIN = "aarch64-linux-gnu-clang"
PRICED = ["dot_s8_2x2x8_i8mm", "dot_s8_1x16x4_dotprod", "dot_s8_1x16_neon", "relu_f16_1x8_fp16", "relu_f16_1x8_neon"]


@pytest.fixture(scope="module")
def priced(tmp_path_factory) -> tuple[Path, dict, str]:
    """The example engine priced: its copy, the JSON and the markdown."""
    tc = next(tc for tc in toolchains() if tc.name == TOOLCHAIN)
    found = probe(tc)
    if not found.usable:
        pytest.skip(f"{TOOLCHAIN} unusable here: {'; '.join(found.reasons)}")
    copy = tmp_path_factory.mktemp("engines") / "engine-meson"
    shutil.copytree(REPO / "examples" / "engine-meson", copy, symlinks=True)  # its subprojects/isaforge link dangles
    out = copy.parent
    argv = ["bench", "--project", str(copy), "--compiler", "clang", "--quiet", "--jobs", "1"]
    assert main([*argv, "--json", str(out / "r.json"), "--markdown", str(out / "r.md")]) == 0
    return copy, json.loads((out / "r.json").read_text()), (out / "r.md").read_text()


@pytest.mark.e2e
@pytest.mark.slow  # make ci: an engine's build priced on every core (the slice prices libisaforge's)
def test_every_kernel_but_the_references_is_priced_on_every_core(priced):
    copy, data, _ = priced
    (build,) = data["builds"]
    assert build["compiler"] == "clang" and build["builddir"] == str(copy / engine.BUILDDIR / TOOLCHAIN)
    rows = build["kernels"]
    assert list(dict.fromkeys(r["kernel"] for r in rows)) == PRICED
    assert {(r["kernel"], r["core"]) for r in rows} == {(k, c) for k in PRICED for c in cores.CORES}
    assert [s["kernel"] for s in build["skipped"]] == ["dot_s8_1x1_ref", "relu_f16_1x1_ref"]


@pytest.mark.e2e
@pytest.mark.slow  # make ci: an engine's build priced on every core (the slice prices libisaforge's)
def test_a_kernel_whose_feature_the_core_lacks_is_marked_not_priced(priced):
    _, data, text = priced
    i8mm_n1 = next(r for r in data["builds"][0]["kernels"] if (r["kernel"], r["core"]) == (PRICED[0], "neoverse-n1"))
    assert i8mm_n1["status"] == NO_ISA and i8mm_n1["cycles_per_iteration"] == 0
    row = next(line for line in text.splitlines() if f"`{PRICED[0]}`" in line)
    assert row.split("|")[5].strip() == "— no i8mm"  # the N1 column


@pytest.mark.e2e
@pytest.mark.slow  # make ci: an engine's build priced on every core (the slice prices libisaforge's)
def test_mac_loops_get_a_share_of_peak_and_elementwise_loops_their_cycles(priced):
    _, data, _ = priced
    for r in (r for r in data["builds"][0]["kernels"] if r["status"] != NO_ISA):
        assert r["cycles_per_iteration"] > 0 and r["loop_instructions"] > 0, r
        if r["kernel"].startswith("dot_"):
            assert r["status"] == OK and 0 < r["percent_of_peak"] <= 100 and r["macs_per_iteration"] > 0, r
        else:
            assert r["status"] == NO_MACS and r["percent_of_peak"] == 0, r


@pytest.mark.e2e
@pytest.mark.slow  # make ci: an engine's build priced on every core (the slice prices libisaforge's)
def test_the_hot_loop_is_the_kernels_main_loop_not_its_vectorized_tail(priced):
    copy, data, _ = priced
    kinds = {r["kernel"]: r["kind"] for r in data["builds"][0]["kernels"]}
    # clang vectorizes each dot kernel's scalar tail into more smull than the main loop has sdot or smmla
    assert kinds["dot_s8_1x16x4_dotprod"] == "sdot v.4s" and kinds["dot_s8_2x2x8_i8mm"] == "smmla v.4s"
    funcs = engine.functions(copy / engine.BUILDDIR / TOOLCHAIN)
    dotprod = funcs["eng_dot_s8_1x16x4_dotprod"]
    assert any(i.mnemonic == "smull" for i in dotprod)  # the vectorized tail is there
    kind, loop = engine.engine_hot_loop(dotprod)
    assert kind == "sdot v.4s" and loop is not None and [i.mnemonic for i in loop.body].count("sdot") == 1
