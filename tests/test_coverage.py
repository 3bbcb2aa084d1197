"""coverage.py on hand-written traces with the `capped` event: the dispatch writes it for a kernel whose features the
CPU has but that the engine's own <NAME>_DISABLE took away (the engine's test capping itself), and `refused` for a
feature absent or capped by test-qemu's ISAFORGE_DISABLE walk."""

from __future__ import annotations

from pathlib import Path

from isaforge import coverage
from isaforge.catalogue import load
from isaforge.coverage import Kernel, Manifest, Run

CAT = load()
KERNELS = (
    Kernel("eng", "dot_s8_1x1_ref", "dot_s8", "ref", frozenset()),
    Kernel("eng", "dot_s8_1x8_neon", "dot_s8", "neon", frozenset({"neon"})),
    Kernel("eng", "dot_s8_1x16_dotprod", "dot_s8", "dotprod", frozenset({"neon", "dotprod"})),
)
MANIFEST = Manifest(Path("m.json"), "eng", "aarch64", "gcc", KERNELS, {})
A53, MAX = Run("cortex-a53"), Run("max")


def test_parse_trace_reads_capped_apart_from_refused():
    trace = coverage.parse_trace("ran eng k1\ncapped eng k2\nrefused eng k3\ncapped eng\ncapped isf k2 x\n")
    assert trace.ran == {("eng", "k1")}
    assert trace.capped == {("eng", "k2")}
    assert trace.refused == {("eng", "k3")}
    assert coverage.read_trace(Path("/nonexistent/trace.txt")).capped == frozenset()


def test_a_kernel_only_ever_capped_where_it_could_run_is_no_failure_and_shows_as_capped():
    """ENG_DISABLE=dotprod in the engine's every test: the dotprod kernel never runs, by the test's choice."""
    observed = [
        (A53, coverage.parse_trace("ran eng dot_s8_1x8_neon\nrefused eng dot_s8_1x16_dotprod\n")),
        (MAX, coverage.parse_trace("ran eng dot_s8_1x8_neon\ncapped eng dot_s8_1x16_dotprod\n")),
        (Run("max", ("neon",)), coverage.parse_trace("ran eng dot_s8_1x1_ref\nrefused eng dot_s8_1x8_neon\n")),
    ]
    ref, neon, dotprod = coverage.evaluate(CAT, "aarch64", [MANIFEST], observed)
    assert (ref.failures, neon.failures, dotprod.failures) == ([], [], [])
    assert dotprod.ran == [] and dotprod.capped == [MAX] and dotprod.refused == [A53]
    rows = [line.split() for line in coverage.matrix(CAT, [ref, neon, dotprod], [A53, MAX], [], {}).splitlines()]
    assert rows[1] == ["dot_s8_1x16_dotprod", coverage.REFUSED, coverage.CAPPED]  # absent on A53, capped on max
    assert rows[2] == ["dot_s8_1x8_neon", coverage.RAN, coverage.RAN]
    assert "c capped by the engine's own test" in coverage.LEGEND
    report = coverage.report([coverage.BuildReport("aarch64-linux-gnu", "gcc", Path("/b"), (ref, neon, dotprod))])
    entry = report["kernels"]["dot_s8_1x16_dotprod@aarch64-linux-gnu-gcc"]
    assert (entry["capped"], entry["refused"], entry["ran"], entry["failures"]) == (["max"], ["cortex-a53"], [], [])
    assert report["builds"][0]["passed"] is True


def test_capped_where_a_feature_is_absent_is_a_disagreement():
    """The engine's dispatch says A53 has dotprod (it capped rather than refused the kernel): the catalogue says not."""
    observed = [(A53, coverage.parse_trace("ran eng dot_s8_1x8_neon\ncapped eng dot_s8_1x16_dotprod\n"))]
    _, _, dotprod = coverage.evaluate(CAT, "aarch64", [MANIFEST], observed)
    assert dotprod.failures == [
        "dot_s8_1x16_dotprod was capped by the engine on cortex-a53, which lacks dotprod: dispatch disagrees with the "
        "catalogue"
    ]


def test_the_cap_walk_column_shows_capped_and_a_kernel_neither_ran_nor_capped_still_fails():
    caps = coverage.cap_walk(CAT, "aarch64", {"neon", "dotprod"})
    observed = [
        (MAX, coverage.parse_trace("ran eng dot_s8_1x16_dotprod\n")),
        (caps[0], coverage.parse_trace("capped eng dot_s8_1x8_neon\nran eng dot_s8_1x1_ref\n")),
        (caps[1], coverage.parse_trace("ran eng dot_s8_1x1_ref\nrefused eng dot_s8_1x8_neon\n")),
    ]
    ref, neon, dotprod = coverage.evaluate(CAT, "aarch64", [MANIFEST], observed)
    assert (ref.failures, neon.failures, dotprod.failures) == ([], [], []) and neon.capped == [caps[0]]
    assert coverage._caps_cell(neon, caps) == coverage.CAPPED
    observed[1] = (caps[0], coverage.parse_trace("ran eng dot_s8_1x1_ref\n"))
    _, neon, _ = coverage.evaluate(CAT, "aarch64", [MANIFEST], observed)
    assert neon.failures[0].startswith("dot_s8_1x8_neon never ran in 3 test runs")


def test_the_automatic_choice_is_read_and_reported_per_run():
    """`chosen` (an engine dispatch's automatic choice for a role) lands in the JSON per run: a core-tuned twin shows
    as chosen on its core only, whatever ran by name."""
    trace = coverage.parse_trace("chosen eng dot_s8_1x8_neon\nran eng dot_s8_1x8_neon\nran eng dot_s8_1x16_dotprod\n")
    assert trace.chosen == {("eng", "dot_s8_1x8_neon")} and trace.ran == {("eng", "dot_s8_1x8_neon"),
                                                                          ("eng", "dot_s8_1x16_dotprod")}  # fmt: skip
    observed = [
        (A53, trace),
        (MAX, coverage.parse_trace("chosen eng dot_s8_1x16_dotprod\nran eng dot_s8_1x16_dotprod\n")),
    ]
    results = coverage.evaluate(CAT, "aarch64", [MANIFEST], observed)
    report = coverage.report([coverage.BuildReport("aarch64-linux-gnu", "gcc", Path("b"), tuple(results), "", {})])
    assert report["kernels"]["dot_s8_1x8_neon@aarch64-linux-gnu-gcc"]["chosen"] == ["cortex-a53"]
    assert report["kernels"]["dot_s8_1x16_dotprod@aarch64-linux-gnu-gcc"]["chosen"] == ["max"]
