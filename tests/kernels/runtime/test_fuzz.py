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
from isaforge.pytest_plugin import selected_builds

FINDINGS_DIR = Path(__file__).resolve().parents[1] / "fuzz_findings"
# -O2 with debug info: the kernels and the driver as fast as QEMU allows, reports with lines.
FUZZ_OPTIONS = {"b_sanitize": "address,undefined", "b_lundef": "false", "buildtype": "debugoptimized"}
# A failed allocation is the library's ISF_ERR_NO_MEMORY to report, not ASan's; LSan cannot stop the world under
# qemu-user; UBSan stops at its first report, so that the runner sees it.
SANITIZER_ENV = {
    "ASAN_OPTIONS": "allocator_may_return_null=1:handle_sigill=1:handle_sigfpe=1:detect_leaks=0",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
}
TARGETS = {"aarch64-linux-gnu": "max", "arm-linux-gnueabihf": "max"}
CAMPAIGN_SEED = 28
# Bounded for the default suite: both arches within a minute on a shared 2-core machine.
SHORT_EXECS = 1500
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


FINDING_LINE = re.compile(r"^fuzz: finding at (exec \d+|seed|replay): (.*): ([^:]+)$", re.MULTILINE)


def signature(stderr: str, what: str, recipe: str) -> str:
    """What makes two findings the same bug: the sanitizer's summary (addresses dropped), else the harness's own
    complaint and the seed's op."""
    summary = re.search(r"^SUMMARY: (.*)$", stderr, re.MULTILINE)
    if summary and what == "sanitizer":
        return re.sub(r"0x[0-9a-f]+", "…", summary[1])
    op = re.search(r"seed=\w+:(gemm_[a-z0-9]+?)_\d", recipe)
    return f"{what} ({op[1] if op else '?'})"


def parse_finding(result: qemu.QemuResult) -> Finding | None:
    found = FINDING_LINE.search(result.stderr)
    if found is None:
        return None
    report = "\n".join(
        line for line in result.stderr.splitlines() if re.search(r"ERROR:|SUMMARY:|runtime error|^    #\d ", line)
    )
    return Finding(found[1], found[2], signature(result.stderr, found[3], found[2]), report)


def run_campaign(build: Build, cpu: str, execs: int, max_findings: int) -> Campaign:
    """Executions 0…execs-1 of campaign CAMPAIGN_SEED, resumed past each finding until max_findings were seen."""
    directory = builds.ensure_built(build)
    campaign, first = Campaign(), 0
    start = time.monotonic()
    while first < execs and len(campaign.findings) < max_findings:
        args = ["run", str(CAMPAIGN_SEED), str(execs), str(first)]
        result = qemu.run(build.arch, cpu, directory / PROGRAM, args, SANITIZER_ENV, timeout=3600)
        finding = parse_finding(result)
        if finding is None:
            assert result.returncode == 0, result.describe()
            done = re.search(r"^fuzz: done (.*)$", result.stdout, re.MULTILINE)
            assert done, result.describe()
            campaign.counts = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", done[1])}
            first = execs
            break
        campaign.findings.append(finding)
        assert finding.exec_index.startswith("exec "), f"a seed itself is a finding:\n{result.describe()}"
        first = int(finding.exec_index.split()[1]) + 1
    campaign.executions = first
    campaign.seconds = time.monotonic() - start
    return campaign


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The arches of the toolchains selected (--isaforge-toolchains), each once: the target is built with GCC,
    whose cross runtimes have ASan and UBSan."""
    if "fuzz_target" in metafunc.fixturenames:
        chosen = {b.toolchain.arch.triple for b in selected_builds(metafunc.config) if b.toolchain is not None}
        targets = [t for t in TARGETS if t in chosen]
        metafunc.parametrize("fuzz_target", targets, indirect=True, scope="module")


@pytest.fixture(scope="module")
def fuzz_target(request: pytest.FixtureRequest, isaforge_build) -> tuple[Build, str]:
    build = fuzz_build(request.param)
    isaforge_build(build)
    return build, TARGETS[request.param]


def test_campaign_finds_nothing(fuzz_target: tuple[Build, str]) -> None:
    build, cpu = fuzz_target
    execs = int(os.environ.get("ISAFORGE_FUZZ_EXECS", SHORT_EXECS))
    long_run = "ISAFORGE_FUZZ_EXECS" in os.environ
    campaign = run_campaign(build, cpu, execs, max_findings=1000 if long_run else 1)
    print(f"{build.name}@{cpu}: {campaign.summary()}")
    assert not campaign.findings, campaign.summary()
    # The mutations reach past the checks: plans import and run, packed buffers are read.
    assert campaign.counts["imported"] > execs // 20 and campaign.counts["packed_ran"] > execs // 50, campaign.counts
    assert campaign.counts["seeds"] >= 9 and campaign.counts["layouts"] >= 9, campaign.counts


def saved_recipes(arch: str) -> list[Path]:
    return sorted(FINDINGS_DIR.glob(f"*.{arch}.txt"))


def test_saved_findings_replay_clean(fuzz_target: tuple[Build, str], isaforge_build) -> None:
    build, cpu = fuzz_target
    recipes = saved_recipes(build.arch_name)
    assert recipes, f"no reproducers for {build.arch_name} in {FINDINGS_DIR}"
    failed = []
    for path in recipes:
        result = qemu.run(build.arch, cpu, isaforge_build(build) / PROGRAM, ["replay", str(path)], SANITIZER_ENV)
        if result.returncode != 0 or "fuzz: replayed" not in result.stdout:
            finding = parse_finding(result)
            failed.append(f"{path.name}: {finding.signature if finding else result.describe()}")
    assert not failed, "\n".join(failed)
