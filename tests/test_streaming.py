"""The streaming contract (isaforge.streaming) through check-isolation: SME kernels built by clang-19 from assembly,
each breach planted once and caught, and the same kernel without it clean."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from isaforge import isolation
from isaforge.catalogue import VARIANT_DEFINE, load

CAT = load()
ARCH = CAT.arch("aarch64")
pytestmark = pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("clang-19", "llvm-objdump-19")), reason="clang-19 missing"
)

# An SME2 kernel as the public libraries write them: NEON before and after, SME and streaming SVE in between.
CLEAN = """
    .text
    .globl kernel
    .type kernel, %function
kernel:
    ld1 {v0.4s}, [x0]
    smstart
    ptrue p0.s
    ld1w {z0.s}, p0/z, [x0]
    ld1w {z1.s}, p0/z, [x1]
    zero {za}
    fmopa za0.s, p0/m, p0/m, z0.s, z1.s
    zero {zt0}
    mova z2.s, p0/m, za0h.s[w12, 0]
    st1w {z2.s}, p0, [x2]
    smstop
    fmla v0.4s, v0.4s, v0.4s
    st1 {v0.4s}, [x0]
    ret
    .size kernel, .-kernel
"""


def build(tmp_path: Path, body: str, variant: str) -> list[isolation.Violation]:
    """Assemble `body` with everything clang knows and check it held to `variant`."""
    src = tmp_path / "kernel.S"
    src.write_text(body)
    everything = "-march=armv9-a+sme2p1+sme-fa64+sme-i16i64"
    cmd = ["clang-19", "--target=aarch64-linux-gnu", everything, f"-D{VARIANT_DEFINE}={variant}", "-c", "kernel.S"]
    subprocess.run([*cmd, "-o", "kernel.o"], cwd=tmp_path, check=True, capture_output=True, text=True)
    report = isolation.check_object(tmp_path / "kernel.o", ARCH, shlex.split(shlex.join(cmd)), cat=CAT)
    return list(report.violations)


def needs(violations: list[isolation.Violation]) -> list[tuple[str, str]]:
    return [(v.instruction.split()[0], v.needs) for v in violations]


def test_a_kernel_that_keeps_the_contract_is_clean(tmp_path):
    assert build(tmp_path, CLEAN, "sme2") == []


def test_sme_outside_a_streaming_region_is_caught(tmp_path):
    body = CLEAN.replace("    fmla v0.4s, v0.4s, v0.4s\n", "    fmopa za1.s, p0/m, p0/m, z0.s, z1.s\n")
    assert needs(build(tmp_path, body, "sme2")) == [("fmopa", "a streaming region (smstart … smstop)")]


def test_streaming_sve_outside_a_region_needs_sve(tmp_path):
    """ptrue before smstart is SVE in normal mode: a breach for an SME-only kernel, fine for one that requires sve."""
    body = CLEAN.replace("    smstart\n    ptrue p0.s\n", "    ptrue p0.s\n    smstart\n")
    assert needs(build(tmp_path, body, "sme2")) == [("ptrue", "a streaming region (smstart … smstop)")]
    assert build(tmp_path, body, "sme2+sve") == []


def test_neon_inside_a_region_needs_fa64(tmp_path):
    body = CLEAN.replace("    zero {zt0}\n", "    zero {zt0}\n    add v1.4s, v1.4s, v1.4s\n")
    [violation] = build(tmp_path, body, "sme2")
    assert violation.needs == "sme_fa64 (NEON or non-streaming SVE inside smstart … smstop)"
    assert violation.instruction == "add v1.4s, v1.4s, v1.4s" and violation.function == "kernel"
    assert build(tmp_path, body, "sme2+sme_fa64") == []


def test_non_streaming_sve_inside_a_region_needs_fa64(tmp_path):
    """A gather load is SVE that streaming mode lacks: allowed outside a region of an sme2+sve kernel, not inside."""
    gather = "    ld1w {z3.s}, p0/z, [x0, z1.s, uxtw #2]\n"
    inside = CLEAN.replace("    zero {zt0}\n", "    zero {zt0}\n" + gather)
    assert needs(build(tmp_path, inside, "sme2+sve")) == [
        ("ld1w", "sme_fa64 (NEON or non-streaming SVE inside smstart … smstop)")
    ]
    assert build(tmp_path, inside, "sme2+sme_fa64") == []


def test_a_call_out_of_a_region_is_caught(tmp_path):
    body = CLEAN.replace("    zero {zt0}\n", "    zero {zt0}\n    bl helper\n")
    assert needs(build(tmp_path, body, "sme2+sme_fa64")) == [
        ("bl", "no call inside smstart … smstop: the callee would run streaming")
    ]
    after = CLEAN.replace("    st1 {v0.4s}, [x0]\n", "    st1 {v0.4s}, [x0]\n    bl helper\n")
    assert build(tmp_path, after, "sme2") == []


def test_za_storage_needs_only_za_on(tmp_path):
    """Saving ZA (ldr/str za, zero) runs with `smstart za`; without it, it is SME out of place."""
    body = """
    .text
save:
    smstart za
    zero {za}
    str za[w12, 0], [x0]
    smstop za
    ret
"""
    assert build(tmp_path, body, "sme") == []
    off = body.replace("    smstart za\n", "")
    assert needs(build(tmp_path, off, "sme")) == [
        ("zero", "a streaming region (smstart … smstop)"),
        ("str", "a streaming region (smstart … smstop)"),
    ]


def test_each_function_starts_out_of_streaming_mode(tmp_path):
    """A function that begins where another left streaming mode on is still entered as a normal call."""
    body = """
    .text
first:
    smstart
second:
    fmopa za0.s, p0/m, p0/m, z0.s, z1.s
    ret
"""
    assert needs(build(tmp_path, body, "sme")) == [("fmopa", "a streaming region (smstart … smstop)")]


def test_objects_without_sme_get_the_main_check_alone(tmp_path):
    """A baseline object with SME in it is a leak the main check names (the feature each instruction needs); the
    streaming contract only holds objects that may use SME."""
    found = needs(build(tmp_path, CLEAN, "neon"))
    assert ("smstart", "sme") in found and ("fmopa", "sme") in found and ("zero", "sme2") in found
    assert not [n for _, n in found if "smstart … smstop" in n]


def test_sme_system_registers_are_read_in_either_mode(tmp_path):
    """SVCR and TPIDR2_EL0 (a test's check of the call boundary) need SME, not streaming mode."""
    body = "    .text\nstate:\n    mrs x0, S3_3_C4_C2_2\n    mrs x1, S3_3_C13_C0_5\n    rdsvl x2, #1\n    ret\n"
    assert build(tmp_path, body, "sme") == []
    assert needs(build(tmp_path, body, "neon")) == [("mrs", "sme"), ("mrs", "sme"), ("rdsvl", "sme")]


VENDORED = Path(__file__).resolve().parents[1] / "examples" / "engine-vendored"
SME2_KERNEL = "third_party/vuk/ukernels/dot/dot_s8_f16/vuk_dot_s8_f16_sme2.S"


@pytest.mark.e2e
@pytest.mark.slow  # a whole engine build of its own; the planted breaches above are caught in make test's slice
def test_a_breach_planted_in_the_vendored_sme2_kernel_is_caught(tmp_path):
    """The example engine built by gcc 12 (SME2 through the assembler wrapper) keeps the contract; NEON planted in
    its SME2 kernel's streaming region is caught, named, in that kernel."""
    from isaforge import builds  # noqa: PLC0415 - only this test builds libisaforge
    from tests.test_isolation import cli, run_tool  # noqa: PLC0415

    prefix = builds.ensure_installed(builds.build_for("aarch64-linux-gnu", "gcc"))
    copy = tmp_path / "veng"
    shutil.copytree(VENDORED, copy, ignore=shutil.ignore_patterns("subprojects", "build*"))
    cross = VENDORED.parents[1] / "toolchains" / "meson" / "aarch64-linux-gnu-gcc.ini"
    build = copy / "build"
    run_tool("meson", "setup", "--cross-file", cross, f"-Dpkg_config_path={prefix}/lib/pkgconfig", build, copy)
    run_tool("meson", "compile", "-C", build)
    clean = cli(build)
    assert clean.returncode == 0 and "no violations" in clean.stdout, clean.stdout + clean.stderr
    kernel = copy / SME2_KERNEL
    text = kernel.read_text()
    kernel.write_text(text.replace("    smstart ", "    smstart\n    add v0.4s, v0.4s, v0.4s\n   ", 1))
    run_tool("meson", "compile", "-C", build)
    planted = cli(build)
    assert planted.returncode == 1, planted.stdout + planted.stderr
    [line] = [line for line in planted.stdout.splitlines() if "add v0.4s" in line]
    assert "vuk_dot_s8_f16_sme2" in line and "needs sme_fa64 (NEON or non-streaming SVE inside" in line, line
