"""The fuzz target of the untrusted-bytes readers (tests/kernels/fuzz_plan.c: isf_gemm_import and isf_gemm_packed)
under QEMU on both arches, library and target built with the cross GCC's ASan + UBSan (both run under qemu-user;
the 32-bit size wraps show only on armv7). The default suite runs a short deterministic campaign and fails on any
sanitizer report, crash, timeout or damaged guard byte; `make fuzz` runs a long one (ISAFORGE_FUZZ_EXECS) that
goes on past each finding and lists the distinct ones. Reproducers of past findings (tests/kernels/fuzz_findings/,
one recipe each) must replay clean."""

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
# -O2 with debug info: the kernels and the driver as fast as QEMU allows, reports with lines.
FUZZ_OPTIONS = {"b_sanitize": "address,undefined", "b_lundef": "false", "buildtype": "debugoptimized"}
# A failed allocation is the library's ISF_ERR_NO_MEMORY to report, not ASan's; LSan cannot stop the world under
# qemu-user; UBSan stops at its first report, so that the runner sees it (fuzz_plan.supp says what it skips).
SANITIZER_ENV = {
    "ASAN_OPTIONS": "allocator_may_return_null=1:handle_sigill=1:handle_sigfpe=1:detect_leaks=0",
    "UBSAN_OPTIONS": f"halt_on_error=1:print_stacktrace=1:suppressions={KERNEL_TESTS / 'fuzz_plan.supp'}",
}
TARGETS = {"aarch64-linux-gnu": "max", "arm-linux-gnueabihf": "max"}
CAMPAIGN_SEED = 28
# Bounded for the default suite: both arches within a minute on a shared 2-core machine (a run starts in about 2 s,
# making and running its seeds; an execution takes 2 to 5 ms under QEMU and ASan).
SHORT_EXECS = 5000
PROGRAM = "tests/kernels/fuzz_plan"


def fuzz_build(target: str) -> Build:
    return builds.build_for(target, "gcc", FUZZ_OPTIONS, tag="fuzz")


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
        lines = [f"{self.executions} executions in {self.seconds:.1f} s ({rate:.0f}/s), {self.counts}"]
        for sig, f in self.distinct().items():
            lines += [f"- {sig}", f"  {f.recipe}", *("    " + line for line in f.report.splitlines()[:12])]
        return "\n".join(lines)


FINDING_LINE = re.compile(r"^fuzz: finding at (.*): ([^:\n]+)$", re.MULTILINE)
NUMBERS = re.compile(r"0x[0-9a-f]+|-?\b\d+\b")


def signature(stderr: str, what: str, recipe: str) -> str:
    """What makes two findings the same bug: the sanitizer's summary or UBSan's complaint (numbers dropped), else
    the harness's own complaint and the seed's op."""
    asan = re.search(r"^SUMMARY: AddressSanitizer: (.*)$", stderr, re.MULTILINE)
    ubsan = re.search(r"^(\S+): runtime error: (.*)$", stderr, re.MULTILINE)
    if asan:
        return f"ASan {NUMBERS.sub('N', asan[1].split(' in ')[0])} in {asan[1].split(' in ')[-1]}"
    if ubsan:
        return f"UBSan {ubsan[1]}: {NUMBERS.sub('N', ubsan[2])}"
    op = re.search(r"seed=\w+:(\w+):", recipe)
    return f"{what} ({op[1] if op else '?'})"


def parse_finding(result: qemu.QemuResult, current: Path) -> Finding | None:
    """None when the program ended on its own (its output says how); else what it died of, at which execution
    (from its own line, or from the file it keeps the running execution in)."""
    found = FINDING_LINE.search(result.stderr)
    sanitized = re.search(r"ERROR: AddressSanitizer|runtime error", result.stderr)
    if not (found or sanitized or result.signal_name):
        return None
    where, what = (found[1], found[2]) if found else (current.read_text(), result.signal_name or "died")
    exec_index, _, recipe = where.partition(": ")
    report = "\n".join(
        line for line in result.stderr.splitlines() if re.search(r"ERROR:|SUMMARY:|runtime error|^    #\d ", line)
    )
    return Finding(exec_index, recipe, signature(result.stderr, what, recipe), report or result.describe())


def run_fuzz_plan(build: Build, cpu: str, args: list[str], tmp: Path) -> Finding | qemu.QemuResult:
    """One run of the target (built already): its finding, or its result when it ended on its own."""
    current = tmp / f"current-{build.name}.txt"
    current.write_text("")
    env = {**SANITIZER_ENV, "FUZZ_PLAN_CURRENT": str(current)}
    result = qemu.run(build.arch, cpu, build.directory / PROGRAM, args, env, timeout=3600)
    return parse_finding(result, current) or result


def run_campaign(build: Build, cpu: str, execs: int, max_findings: int, tmp: Path) -> Campaign:
    """Executions 0…execs-1 of campaign CAMPAIGN_SEED, resumed past each finding until max_findings were seen."""
    campaign, first = Campaign(), 0
    start = time.monotonic()
    while first < execs and len(campaign.findings) < max_findings:
        outcome = run_fuzz_plan(build, cpu, ["run", str(CAMPAIGN_SEED), str(execs), str(first)], tmp)
        if isinstance(outcome, Finding):
            if outcome.signature not in campaign.distinct():
                print(f"{build.name}: new finding at {outcome.exec_index}: {outcome.signature}", flush=True)
            campaign.findings.append(outcome)
            assert outcome.exec_index.startswith("exec "), f"a seed itself is a finding: {outcome}"
            first = int(outcome.exec_index.split()[1]) + 1
            continue
        done = re.search(r"^fuzz: done (.*)$", outcome.stdout, re.MULTILINE)
        assert done, outcome.describe()
        campaign.counts = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", done[1])}
        first = execs
    campaign.executions = first
    campaign.seconds = time.monotonic() - start
    return campaign


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The arches of the toolchains selected (--isaforge-toolchains), each once: the target is built with GCC,
    whose cross runtimes have ASan and UBSan. None in a CI matrix cell, which tests its own build: `make ci` runs
    the long campaign once (make fuzz)."""
    if "fuzz_target" in metafunc.fixturenames:
        in_cell = BUILDS_UNDER_TEST in metafunc.config.stash
        chosen = {b.toolchain.arch.triple for b in selected_builds(metafunc.config) if b.toolchain is not None}
        targets = [t for t in TARGETS if t in chosen and not in_cell]
        metafunc.parametrize("fuzz_target", targets, indirect=True, scope="module")


@pytest.fixture(scope="module")
def fuzz_target(request: pytest.FixtureRequest, isaforge_build) -> tuple[Build, str]:
    build = fuzz_build(request.param)
    isaforge_build(build)
    return build, TARGETS[request.param]


def test_campaign_finds_nothing(fuzz_target: tuple[Build, str], tmp_path: Path) -> None:
    build, cpu = fuzz_target
    execs = int(os.environ.get("ISAFORGE_FUZZ_EXECS", SHORT_EXECS))
    long_run = "ISAFORGE_FUZZ_EXECS" in os.environ
    campaign = run_campaign(build, cpu, execs, 1000 if long_run else 1, tmp_path)
    print(f"{build.name}@{cpu}: {campaign.summary()}")
    assert not campaign.findings, campaign.summary()
    # The mutations reach past the checks: plans import and run, packed buffers are read.
    assert campaign.counts["imported"] > execs // 20 and campaign.counts["packed_ran"] > execs // 100, campaign.counts
    # Every op is seeded: exports of all of them, packed B of the plain ones (gemm_f32, gemm_f16, gemm_bf16, gemm_s8).
    assert campaign.counts["plan_ops"] == 9 and campaign.counts["packed_ops"] == 4, campaign.counts


def saved_recipes(arch: str) -> list[Path]:
    return sorted(FINDINGS_DIR.glob(f"*.{arch}.txt"))


def test_saved_findings_replay_clean(fuzz_target: tuple[Build, str], tmp_path: Path) -> None:
    """Every reproducer of this arch, in one run while they pass; a failing one is named and the rest go on."""
    build, cpu = fuzz_target
    pending = saved_recipes(build.arch_name)
    assert pending, f"no reproducers for {build.arch_name} in {FINDINGS_DIR}"
    failed = []
    while pending:
        outcome = run_fuzz_plan(build, cpu, ["replay", *map(str, pending)], tmp_path)
        if not isinstance(outcome, Finding):
            replayed = outcome.stdout.count("fuzz: replayed")
            assert replayed == len(pending) and outcome.returncode == 0, outcome.describe()
            break
        culprit = next(i for i, path in enumerate(pending) if outcome.recipe in path.read_text())
        failed.append(f"{pending[culprit].name}: {outcome.signature}")
        pending = pending[culprit + 1 :]
    assert not failed, "\n".join(failed)
