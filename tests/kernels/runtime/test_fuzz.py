"""The fuzz target of the untrusted-bytes readers (tests/kernels/fuzz_plan.c: isf_gemm_import and isf_gemm_packed)
under QEMU on both arches, library and target built with the cross GCC's ASan + UBSan (both run under qemu-user;
the 32-bit size wraps show only on armv7). The default suite runs a short deterministic campaign and fails on any
sanitizer report, crash, timeout or damaged guard byte; `make fuzz` runs a long one (ISAFORGE_FUZZ_EXECS) that
goes on past each finding (the target runs its executions in child processes) and lists the distinct ones.
Reproducers of past findings (tests/kernels/fuzz_findings/, one recipe each) must replay clean."""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from isaforge import builds, qemu
from isaforge.builds import Build
from isaforge.pytest_plugin import BUILDS_UNDER_TEST, selected_builds

KERNEL_TESTS = Path(__file__).resolve().parents[1]
FINDINGS_DIR = KERNEL_TESTS / "fuzz_findings"
# -O0: the instrumented compile of the intrinsics kernels is 2.5x faster than at -O1 (6x than -O2), which outweighs
# the slower executions of a bounded campaign; ASan's reports are the most precise there, with lines (debug).
FUZZ_OPTIONS = {"b_sanitize": "address,undefined", "b_lundef": "false", "optimization": "0", "debug": "true"}
# A failed allocation is the library's ISF_ERR_NO_MEMORY to report, not ASan's; LSan cannot stop the world under
# qemu-user; UBSan stops at its first report, so that the runner sees it (fuzz_plan.supp says what it skips).
SANITIZER_ENV = {
    "ASAN_OPTIONS": "allocator_may_return_null=1:handle_sigill=1:handle_sigfpe=1:detect_leaks=0",
    "UBSAN_OPTIONS": f"halt_on_error=1:print_stacktrace=1:suppressions={KERNEL_TESTS / 'fuzz_plan.supp'}",
}
TARGETS = {"aarch64-linux-gnu": "max", "arm-linux-gnueabihf": "max"}
# make ci fuzzes both arches (an ASan build each), and make fuzz runs both long; the default suite keeps the damaged
# inputs' deterministic checks (test_plan.c: damage in a plan's header, packed header or panels refused;
# test_packed_file: each damaged header field, buffers short of the panels) and the size arithmetic
# (test_size_edges, test_memory_safety, on sizes chosen to overflow).
CAMPAIGN_SEED = 28
# Bounded for the default suite: about 6 s an arch warm on a shared 2-core machine (about 3 minutes cold,
# the two ASan builds): a run starts in under a second, making and running its seeds, then 800 to 1900 executions
# a second under QEMU and ASan (most refused before a GEMM runs). The long campaign (make fuzz) stops after
# LONG_FINDINGS: each costs about a second (a child's symbolized report under QEMU).
SHORT_EXECS = 5000
LONG_FINDINGS = 200
PROGRAM = "tests/kernels/fuzz_plan"
# The campaign and the replay on one worker: on two, the second would wait idle on the ASan build's lock while the
# first makes it.
pytestmark = pytest.mark.xdist_group("fuzz")


def fuzz_build(target: str) -> Build:
    return builds.build_for(target, "gcc", FUZZ_OPTIONS, tag="fuzz", targets=(PROGRAM,))  # not the unit tests


@dataclass
class Finding:
    exec_index: str
    recipe: str
    signature: str
    report: str


@dataclass
class Campaign:
    executions: int = 0
    seconds: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    def distinct(self) -> dict[str, Finding]:
        first: dict[str, Finding] = {}
        for f in self.findings:
            first.setdefault(f.signature, f)
        return first

    def summary(self) -> str:
        rate = self.executions / self.seconds if self.seconds else 0.0
        lines = [
            f"{self.executions} executions in {self.seconds:.1f} s ({rate:.0f}/s), {len(self.findings)} findings, "
            f"{len(self.distinct())} distinct; {self.counts}"
        ]
        for sig, f in self.distinct().items():
            lines += [f"- {sig}", f"  {f.recipe}", *("    " + line for line in f.report.splitlines()[:12])]
        return "\n".join(lines)


FINDING_LINE = re.compile(r"^fuzz: finding at (exec \d+|seed|replay): (.*): ([^:\n]+)$", re.MULTILINE)
NUMBERS = re.compile(r"0x[0-9a-f]+|-?\b\d+\b")


def signature(report: str, what: str, recipe: str) -> str:
    """What makes two findings the same bug: ASan's kind and top two frames, UBSan's complaint (its values dropped),
    else the harness's own complaint and the seed's op."""
    asan = re.search(r"^SUMMARY: AddressSanitizer: (\S+)", report, re.MULTILINE)
    ubsan = re.search(r"^(\S+): runtime error: (.*)$", report, re.MULTILINE)
    if asan:  # the kind, and where: the faulting function and its caller (helpers are inlined into many)
        frames = re.findall(r"^\s+#[01] 0x[0-9a-f]+ in (\S+)", report, re.MULTILINE)[:2]
        return f"ASan {asan[1]} in {' < '.join(frames)}"
    if ubsan:
        return f"UBSan {ubsan[1]}: {NUMBERS.sub('N', ubsan[2])}"
    op = re.search(r"seed=\w+:(\w+):", recipe)
    return f"{what} ({op[1] if op else '?'})"


def findings_of(stderr: str) -> list[Finding]:
    """Each finding line with the child's report before it (since the previous finding line)."""
    found, start = [], 0
    for line in FINDING_LINE.finditer(stderr):
        chunk = stderr[start : line.start()]
        report = "\n".join(s for s in chunk.splitlines() if re.search(r"ERROR:|SUMMARY:|runtime error|^    #\d ", s))
        found.append(Finding(line[1], line[2], signature(chunk, line[3], line[2]), report))
        start = line.end()
    return found


def run_fuzz_plan(build: Build, cpu: str, args: list[str]) -> tuple[qemu.QemuResult, list[Finding]]:
    """One run of the target (built already) and the findings it reported."""
    result = qemu.run(build.arch, cpu, build.directory / PROGRAM, args, SANITIZER_ENV, timeout=3600)
    return result, findings_of(result.stderr)


def run_campaign(build: Build, cpu: str, execs: int, max_findings: int) -> Campaign:
    """Executions 0…execs-1 of campaign CAMPAIGN_SEED, past each finding until max_findings were made."""
    start = time.monotonic()
    result, findings = run_fuzz_plan(build, cpu, ["run", str(CAMPAIGN_SEED), str(execs), str(max_findings)])
    done = re.search(r"^fuzz: done (.*)$", result.stdout, re.MULTILINE)
    assert done, result.describe()
    counts = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", done[1])}
    return Campaign(counts["execs"], time.monotonic() - start, counts, findings)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The arches of the toolchains selected (--isaforge-toolchains), each once: the target is built with GCC,
    whose cross runtimes have ASan and UBSan. None in a CI matrix cell, which tests its own build: `make ci` runs
    the long campaign once (make fuzz)."""
    if "fuzz_target" in metafunc.fixturenames:
        in_cell = BUILDS_UNDER_TEST in metafunc.config.stash
        chosen = {b.toolchain.arch.triple for b in selected_builds(metafunc.config) if b.toolchain is not None}
        targets = [t for t in TARGETS if t in chosen and not in_cell]
        # make ci runs the campaign on every arch (and make fuzz the long one); the slice's minutes go to the kernels
        params = [pytest.param(t, marks=[pytest.mark.slow]) for t in targets]
        metafunc.parametrize("fuzz_target", params, indirect=True, scope="module")


@pytest.fixture(scope="module")
def fuzz_target(request: pytest.FixtureRequest, isaforge_build) -> tuple[Build, str]:
    build = fuzz_build(request.param)
    isaforge_build(build)
    return build, TARGETS[request.param]


def test_campaign_finds_nothing(fuzz_target: tuple[Build, str]) -> None:
    build, cpu = fuzz_target
    execs = int(os.environ.get("ISAFORGE_FUZZ_EXECS", SHORT_EXECS))
    long_run = "ISAFORGE_FUZZ_EXECS" in os.environ
    campaign = run_campaign(build, cpu, execs, LONG_FINDINGS if long_run else 1)
    print(f"{build.name}@{cpu}: {campaign.summary()}")
    assert not campaign.findings, campaign.summary()
    # The mutations reach past the checks: plans import and run, packed buffers are read; and of the inputs refused,
    # many carry valid checksums (the packed-B header's and the plan's, mostly re-sealed after the damage), so the
    # checks behind the checksums are the ones refusing them, for plans and for packed buffers alike.
    counts = campaign.counts
    assert counts["imported"] > execs // 20 and counts["packed_ran"] > execs // 100, counts
    assert counts["deep_refused"] > execs // 10 and counts["packed_deep_refused"] > execs // 50, counts
    # Every op is seeded: exports of all of them, packed B of the plain ones (gemm_f32, gemm_f16, gemm_bf16, gemm_s8).
    assert campaign.counts["plan_ops"] == 9 and campaign.counts["packed_ops"] == 4, campaign.counts


def saved_recipes(arch: str) -> list[Path]:
    return sorted(FINDINGS_DIR.glob(f"*.{arch}.txt"))


def test_saved_findings_replay_clean(fuzz_target: tuple[Build, str]) -> None:
    """Every reproducer of this arch, each recipe in a child of one run: all replayed, none a finding."""
    build, cpu = fuzz_target
    recipes = saved_recipes(build.arch_name)
    assert recipes, f"no reproducers for {build.arch_name} in {FINDINGS_DIR}"
    result, findings = run_fuzz_plan(build, cpu, ["replay", *map(str, recipes)])
    failed = [f"{p.name}: {f.signature}" for f in findings for p in recipes if f.recipe in p.read_text()]
    assert not failed, "\n".join(failed)
    outcomes = re.findall(r"^fuzz: replayed \S+: (.*)$", result.stdout, re.MULTILINE)
    assert len(outcomes) == len(recipes) and result.returncode == 0, result.describe()
    # Each is damage its item's fix refuses (one recipe a file, replayed in order); one re-sealed (sealpb, fixsum) must
    # be refused by a check behind the checksums, else a checksum stops it and the item's own check goes untested.
    for path, outcome in zip(recipes, outcomes, strict=True):
        resealed = re.search(r"\b(sealpb|fixsum)\b", path.read_text())
        assert outcome == "refused past its checksums" if resealed else outcome != "accepted", (path.name, outcome)
